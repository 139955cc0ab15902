"""WARC deduplication over more than one process or run: a sharded crawl's counts, and
the repeats index of a crawl resumed after a kill -9 (or of a shard worker restarted).

Truth: the WARC files as warcio reads them (every record, its payload digest and size),
and an unsharded crawl of the same unchanged site."""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from clirun import WEBCRAWL, run_webcrawl
from test_warc_dedup import records
from test_warc_output import warcio_check
from warcdata import crawl_settings, serve_http
from webcrawl.crawler.archive import WarcArchive, WarcCounts
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

pytestmark = pytest.mark.timeout(600)  # a hang guard for the subprocess crawls

#: No faults (a 503 answered once would not be answered again to a second crawl) and
#: no change: every crawl of it makes the same requests and reads the same bodies.
STILL = FixtureConfig(pages=60, hosts=4, seed=8, change_mixture=((1.0, 1e9, 1e9),))


def truth(folder: Path, *earlier: Path) -> WarcCounts:
    """The counts the WARC files of ``folder`` hold: records (warcinfo aside), the
    identical-payload revisits and the payload bytes they name (stored in ``folder``
    or ``earlier`` ones)."""
    recs = records(folder)
    sizes = {r["digest"]: r["payload"] for f in (folder, *earlier) for r in records(f)
             if r["type"] == "response"}
    repeats = [r for r in recs if r["type"] == "revisit" and r["refers_uri"]]
    return WarcCounts(2 * len(recs), len(repeats), sum(sizes.get(r["digest"], -1)
                                                      for r in repeats))


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A first crawl, then two of the same site against it (and their own repeats):
    one unsharded, one with two worker processes."""
    tmp = tmp_path_factory.mktemp("shards")
    out: dict[str, Any] = {"tmp": tmp}
    with serve_in_thread(FixtureWeb.build(STILL)) as server:
        def crawl(name: str, **kw: Any) -> None:
            settings = crawl_settings(warc_dir=str(tmp / name), **kw)
            out[name] = asyncio.run(Crawler(tmp / f"{name}.db", [server.seed_url],
                                            settings).run())
        crawl("first")
        for name, workers in (("one", 1), ("two", 2)):
            crawl(name, workers=workers, warc_dedup=str(tmp / "first.db"),
                  warc_dedup_repeats=True)
    return out


def test_two_workers_count_what_one_process_counts(sharded: dict[str, Any]) -> None:
    one, two, tmp = sharded["one"].warc, sharded["two"].warc, sharded["tmp"]
    assert one == truth(tmp / "one", tmp / "first")
    assert two == truth(tmp / "two", tmp / "first")
    assert one.revisits > 50 and one.bytes_not_stored > 0
    # The same records; each worker's repeats index holds its own hosts' payloads, so a
    # body first met on hosts of both workers is stored once by each (here: the
    # hosts' identical robots.txt), and that is the whole difference.
    assert two.records == one.records
    stored = Counter(r["digest"] for r in records(tmp / "two") if r["type"] == "response"
                     and r["payload"])
    assert max(stored.values()) <= 2
    again = sum(n - 1 for n in stored.values())
    size = {r["digest"]: r["payload"] for r in records(tmp / "two") if r["payload"]}
    assert one.revisits - two.revisits == again
    assert one.bytes_not_stored - two.bytes_not_stored == sum(
        size[d] * (n - 1) for d, n in stored.items())
    # Both workers wrote (the counts are a sum over two processes), each file whole.
    assert {p.name.split("-")[1] for p in (tmp / "two").glob("*.warc.gz")} == {"w0", "w1"}
    for path in (tmp / "two").glob("*.warc.gz"):
        warcio_check(path)
    assert sharded["two"].as_dict()["warc"] == two.as_dict()


# -- resume ------------------------------------------------------------------------------

def mirror_site(root: Path, pages: int = 20) -> None:
    """``/a/`` and ``/b/``: the same ``pages`` pages, byte for byte (relative links)."""
    for folder in ("a", "b"):
        (root / folder).mkdir(parents=True)
        links = "".join(f'<a href="p{i}.html">{i}</a>' for i in range(pages))
        (root / folder / "index.html").write_text(f"<html><body>{links}</body></html>")
        for i in range(pages):
            (root / folder / f"p{i}.html").write_text(
                f"<html><body><h1>Page {i}</h1><p>{'text ' * (20 + i)}</p>"
                f'<a href="index.html">up</a></body></html>')
    (root / "index.html").write_text('<html><a href="a/">a</a><a href="b/">b</a></html>')


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "site"
    mirror_site(root)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    with serve_http(functools.partial(Quiet, directory=str(root))) as port:
        yield f"http://mirror.test:{port}/"


def stored_once(folder: Path) -> Counter[str]:
    """Payload digest -> response records holding it, over every file of ``folder``;
    every revisit names a response record of the folder with its payload."""
    recs = records(folder)
    by_id = {r["id"]: r for r in recs}
    for r in recs:
        if r["type"] == "revisit" and r["refers_uri"]:
            held = by_id[r["refers_id"]]
            assert held["type"] == "response" and held["digest"] == r["digest"]
    return Counter(r["digest"] for r in recs if r["type"] == "response" and r["payload"])


@pytest.mark.parametrize("workers", [1, 2])
def test_resumed_crawl_does_not_store_again_what_it_stored_before_the_kill(
        mirror: str, tmp_path: Path, workers: int) -> None:
    """kill -9 after 12 exchanges (each process of the crawl; each answer committed at
    once, so the crawl can resume), resume: every payload is stored once over both
    runs' files; the others are revisits naming it."""
    db, folder = tmp_path / "c.db", tmp_path / "w"
    cmd = [*WEBCRAWL, "crawl", mirror, "--db", str(db), "--warc", str(folder),
           "--warc-dedup-repeats", "--resolve", "mirror.test=127.0.0.1", "--min-delay",
           "0", "--max-delay", "0", "--delay-factor", "0", "--quiet", "--workers",
           str(workers), "--concurrency", "2", "--set", "store_batch_size=1"]
    first = run_webcrawl(cmd, kill="warc_exchange:12")
    if workers == 1:
        assert first.returncode == -9, first.stderr[-2000:]
        finished = run_webcrawl([*WEBCRAWL, "crawl", "--resume", "--db", str(db), "--quiet"])
    else:  # each worker is killed and started again within the run
        finished = first
        assert "lost; starting it again" in first.stderr
        assert "WARC counts leave out" in first.stderr
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert len(list(folder.glob("*.warc.gz"))) >= 2  # the killed process's file, and more
    counts = stored_once(folder)
    assert len(counts) >= 21 and set(counts.values()) == {1}, counts


@pytest.mark.parametrize(("before", "after"), [(1, 2), (2, 1)])
def test_resume_with_another_workers_count_reads_every_earlier_series(
        mirror: str, tmp_path: Path, before: int, after: int) -> None:
    """Killed (one process, or each worker at once), then resumed with another number of
    worker processes: the resumed processes read the files of every series the crawl
    wrote before (``webcrawl-*`` and ``webcrawl-wN-*``), so each payload is stored once."""
    db, folder = tmp_path / "c.db", tmp_path / "w"
    common = ["--db", str(db), "--quiet", "--set", "store_batch_size=1"]
    first = run_webcrawl([*WEBCRAWL, "crawl", mirror, *common, "--warc", str(folder),
                          "--warc-dedup-repeats", "--resolve", "mirror.test=127.0.0.1",
                          "--min-delay", "0", "--max-delay", "0", "--delay-factor", "0",
                          "--concurrency", "2", "--workers", str(before)],
                         kill="warc_exchange:12" if before == 1 else "shard_page:12")
    assert first.returncode == -9, first.stderr[-2000:]
    finished = run_webcrawl([*WEBCRAWL, "crawl", "--resume", *common, "--workers",
                             str(after)])
    assert finished.returncode == 0, finished.stderr[-2000:]
    series = {p.name.split("-2")[0] for p in folder.glob("*.warc.gz")}
    assert len(series) >= 2, series  # the killed run's and the resumed run's
    counts = stored_once(folder)
    assert len(counts) >= 21 and set(counts.values()) == {1}, counts


class AlwaysWhole(SimpleHTTPRequestHandler):
    """Answers every GET with the whole body: no 304 (as many servers do), so a revisit
    reads again what the crawl stored."""

    def send_head(self) -> Any:
        for name in ("If-Modified-Since", "If-None-Match"):
            del self.headers[name]
        return super().send_head()

    def log_message(self, *args: Any) -> None:
        pass


def test_revisit_runs_do_not_store_again_what_the_crawl_stored(tmp_path: Path) -> None:
    """A crawl, then two revisit runs, all with ``--warc-dedup-repeats`` into one folder:
    each revisit run reads back the earlier runs' files, so every body is stored once
    over the three runs; the revisits' bodies are revisit records naming the crawl's."""
    root, db, folder = tmp_path / "site", tmp_path / "c.db", tmp_path / "w"
    mirror_site(root)
    settings = crawl_settings(warc_dir=str(folder), warc_dedup_repeats=True)
    with serve_http(functools.partial(AlwaysWhole, directory=str(root))) as port:
        async def run() -> list[WarcCounts | None]:
            await Crawler(db, [f"http://mirror.test:{port}/"], settings).run()
            counts = []
            for _ in range(2):
                stats = await RevisitCrawler(db, RevisitSettings(
                    policy="uniform", budget=200.0, duration=1.0, day_seconds=0.2),
                    settings).run()
                counts.append(stats.warc)
            return counts

        revisit_runs = asyncio.run(run())
    assert len(list(folder.glob("*.warc.gz"))) == 3
    counts = stored_once(folder)
    assert len(counts) >= 21 and set(counts.values()) == {1}, counts
    for warc in revisit_runs:  # every refetched body is a revisit record
        assert warc is not None and warc.revisits == warc.records // 2 > 20, warc


def test_recall_reads_up_to_a_torn_record(tmp_path: Path) -> None:
    """A file cut inside its last record (a kill mid-write, a full disk): the records
    before the cut count as stored, the cut one does not."""
    settings = CrawlSettings(warc_dir=str(tmp_path), warc_dedup_repeats=True)
    bodies = [f"<html>{i} {'x' * 500}</html>".encode() for i in range(3)]
    archive = WarcArchive(settings)
    for i, body in enumerate(bodies):
        archive.record(f"http://a.test/{i}", started_at=1.7e9 + i, request_headers=(),
                       status=200, reason="OK", headers=(), body=body, truncated=False)
    archive.close()
    (path,) = archive.files
    path.write_bytes(path.read_bytes()[:-40])  # cut inside the third record
    again = WarcArchive(settings)
    assert again.recall() == 2
    for i, body in enumerate(bodies):
        again.record(f"http://b.test/{i}", started_at=1.8e9 + i, request_headers=(),
                     status=200, reason="OK", headers=(), body=body, truncated=False)
    again.close()
    assert again.counts.revisits == 2
    assert again.counts.bytes_not_stored == sum(map(len, bodies[:2]))
