"""A crawl over HTTPS with its own CA, then a plain ``webcrawl revisit``: it connects as the
crawl did (stored resolve rules and CA file), and ``analyze changes`` on a collection that
answered 304 to every revisit prints upper bounds (issue 20).

The server (aiohttp in a thread, TLS from a trustme CA) serves ``static.test``, whose
pages never change (ETag and Last-Modified, 304 to a conditional GET), and ``live.test``,
whose pages change at every request.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

trustme = pytest.importorskip("trustme")

from aiohttp import web  # noqa: E402
from tlsweb import ThreadedTLSWeb  # noqa: E402
from webcrawl.crawler.cli import main  # noqa: E402

STATIC = {"/": ["/a", "/b", "/c"], "/a": ["/b"], "/b": ["/c"], "/c": ["/"]}
LIVE = ("/x", "/y")
LAST_MODIFIED = "Mon, 02 Nov 2026 10:00:00 GMT"


class TLSWeb(ThreadedTLSWeb):
    """static.test and live.test over HTTPS on one loopback port, in a thread."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, ("static.test", "live.test"))
        self.hits: Counter[tuple[str, str, int]] = Counter()
        self._live = 0

    def url(self, host: str, path: str = "/") -> str:
        return f"https://{host}:{self.port}{path}"

    async def handle(self, request: web.Request) -> web.Response:
        host = request.host.split(":")[0]
        path = request.path
        if host == "static.test" and path in STATIC:
            etag = f'"{path}-v1"'
            if (request.headers.get("If-None-Match") == etag
                    or request.headers.get("If-Modified-Since") == LAST_MODIFIED):
                self.hits[(host, path, 304)] += 1
                return web.Response(status=304, headers={"ETag": etag})
            links = [self.url("static.test", p) for p in STATIC[path]]
            if path == "/":
                links += [self.url("live.test", p) for p in LIVE]
            body = "".join(f'<a href="{u}">{u}</a>' for u in links)
            self.hits[(host, path, 200)] += 1
            return web.Response(text=f"<html><body>{body}</body></html>",
                                content_type="text/html",
                                headers={"ETag": etag, "Last-Modified": LAST_MODIFIED})
        if host == "live.test" and path in LIVE:
            self._live += 1
            self.hits[(host, path, 200)] += 1
            return web.Response(text=f"<html><body>version {self._live}</body></html>",
                                content_type="text/html")
        self.hits[(host, path, 404)] += 1
        return web.Response(status=404, text="not here")


@pytest.fixture
def tls_web(tmp_path: Path) -> Iterator[TLSWeb]:
    with TLSWeb(tmp_path) as w:
        yield w


def crawl(w: TLSWeb, db: Path, *extra: str) -> None:
    code = main(["crawl", w.url("static.test"), "--db", str(db), "--quiet",
                 "--resolve", "*.test=127.0.0.1", "--ca-file", str(w.ca_file),
                 "--min-delay", "0", "--delay-factor", "0", "--max-delay", "0", *extra])
    assert code == 0


def revisits(db: Path) -> list[tuple[str, str, int | None]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT u.url, f.outcome, f.status FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE f.kind = 'revisit'").fetchall()


def collection(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT url FROM urls WHERE outcome = 'fetched'")}


def stored_day(db: Path) -> float:
    with sqlite3.connect(db) as conn:
        return float(conn.execute(
            "SELECT value FROM meta WHERE key = 'revisit_day_seconds'").fetchone()[0])


def test_plain_revisit_connects_as_the_crawl_did(tls_web: TLSWeb, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "crawl.db"
    crawl(tls_web, db, "--allow-domain", "test")
    pages = collection(db)
    assert len(pages) == 6  # 4 static, 2 live
    capsys.readouterr()
    assert main(["revisit", "--db", str(db), "--budget", "30", "--duration", "3",
                 "--quiet"]) == 0
    assert capsys.readouterr().err == ""  # nothing overridden: no note
    rows = revisits(db)
    assert rows and all(outcome in ("fetched", "not_modified") for _, outcome, _ in rows)
    assert {url for url, _, _ in rows} == pages  # every page revisited, none failed
    static = [s for u, _, s in rows if "static.test" in u]
    live = [s for u, _, s in rows if "live.test" in u]
    assert set(static) == {304} and set(live) == {200}
    # The control: without the stored CA file the same revisit fails on TLS, so the
    # run above did use it (and the stored resolve rules: the names are not in DNS).
    n = len(rows)
    assert main(["revisit", "--db", str(db), "--budget", "30", "--duration", "1", "--quiet",
                 "--set", "tls_ca_file=none"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "overriding the crawl's stored settings: --ca-file" in err
    failed = revisits(db)[n:]
    assert failed and {o for _, o, _ in failed} == {"network_error"}


def test_analyze_changes_when_every_revisit_was_304(tls_web: TLSWeb, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from webcrawl.analysis.change import change_report, load_visit_log

    db = tmp_path / "crawl.db"
    crawl(tls_web, db)  # static.test only: live.test is out of scope
    assert len(collection(db)) == 4
    assert main(["revisit", "--db", str(db), "--budget", "30", "--duration", "1.5",
                 "--quiet", "--day-seconds", "0.5"]) == 0
    assert stored_day(db) == 0.5
    # A later plain revisit keeps the stored day length (and connects as the crawl did).
    assert main(["revisit", "--db", str(db), "--budget", "30", "--duration", "0.5",
                 "--quiet"]) == 0
    assert stored_day(db) == 0.5
    rows = revisits(db)
    assert len({u for u, _, _ in rows}) == 4 and {s for _, _, s in rows} == {304}
    capsys.readouterr()
    assert main(["analyze", "changes", "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "Traceback" not in out
    assert "0 with a change seen, 4 without" in out
    assert "Poisson test (intervals vs exponential): skipped: no change was seen" in out
    assert main(["analyze", "changes", "--db", str(db), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    lib = change_report(load_visit_log(db)).to_dict()  # the stored 0.5 s days too
    assert cli == {**lib, "day_seconds": 0.5, "day_seconds_from": "stored", "plots": []}
    # The bounds are -ln(0.05) / observed days of each page, from the stored visits.
    report = change_report(load_visit_log(db))
    bound = math.log(20.0) / report.observed_days
    assert cli["rates"]["unchanged_upper_rate_per_day"]["max"] == pytest.approx(bound.max())
    assert f"{float(bound.max()):.4g}" in out  # the largest bound, in the 'all' row
    # export rates: the same per-page bounds, one row per page.
    out_file = tmp_path / "rates.jsonl"
    assert main(["export", "rates", "--db", str(db), "--format", "jsonl",
                 "--out", str(out_file)]) == 0
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == 4 and {r["rate_per_day"] for r in rows} == {0.0}
    assert sorted(r["upper_95"] for r in rows) == pytest.approx(sorted(bound))
