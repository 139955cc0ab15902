"""The day length: stored by the revisit, read back by every change analysis, an explicit
``--day-seconds`` winning (issue 15)."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path

import pytest
from webcrawl.analysis.change import (
    META_DAY_SECONDS,
    change_report,
    load_visit_log,
    page_rates,
    resolve_day_seconds,
)
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

LN20 = math.log(20.0)


def test_given_beats_stored_beats_default() -> None:
    assert resolve_day_seconds({}) == (86400.0, "default")
    assert resolve_day_seconds({META_DAY_SECONDS: "2.5"}) == (2.5, "stored")
    assert resolve_day_seconds({"day_seconds": "3"}) == (3.0, "stored")  # older demos
    assert resolve_day_seconds({META_DAY_SECONDS: "2.5"}, 60.0) == (60.0, "given")
    for junk in ("", "nan", "-1", "0", "soon"):
        assert resolve_day_seconds({META_DAY_SECONDS: junk}) == (86400.0, "default")
    with pytest.raises(ConfigError):
        resolve_day_seconds({}, 0.0)


async def _write(path: Path, day: float, *, store_day: bool) -> None:
    """3 pages, crawled then revisited 4 times a quarter day apart (on a ``day``-second
    clock), every revisit a 304."""
    store = await CrawlStore.open(path)
    store.add_host(HostRow(id=0, name="docs.test"))
    if store_day:
        store.set_meta(META_DAY_SECONDS, repr(day))
    seq = 0
    for u in range(3):
        store.add_url(UrlRow(id=u, url=f"https://docs.test/p{u}", host_id=0, depth=1,
                             discovered_seq=-1))
    for rnd in range(5):
        for u in range(3):
            at = 1_700_000_000.0 + (rnd * 0.25 + u * 0.01) * day
            crawl = rnd == 0
            store.add_fetch(FetchRecord(
                url_id=u, seq=seq, started_at=at, ended_at=at + 0.001,
                outcome=Outcome.FETCHED if crawl else Outcome.NOT_MODIFIED,
                status=200 if crawl else 304, digest="d" if crawl else None,
                kind=FetchKind.CRAWL if crawl else FetchKind.REVISIT,
                changed=None if crawl else False))
            seq += 1
    for u in range(3):
        store.set_outcome(u, Outcome.FETCHED, u)
    await store.aclose()


def test_every_analysis_reads_the_stored_day(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from webcrawl.crawler.cli import main

    db = tmp_path / "crawl.db"
    asyncio.run(_write(db, 2.0, store_day=True))
    days = 4 * 0.25  # four revisit intervals of a quarter day, on the 2 s clock
    # The library.
    report = change_report(load_visit_log(db))
    assert report.observed_days.tolist() == pytest.approx([days] * 3)
    rates = page_rates(db)
    assert rates.day_seconds == 2.0 and rates.upper.tolist() == pytest.approx([LN20 / days] * 3)
    # analyze changes: the same figures, and says where the day came from.
    assert main(["analyze", "changes", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "One day = 2 s (stored by the revisit)" in out
    assert f"{LN20 / days:.4g}" in out
    assert main(["analyze", "changes", "--db", str(db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["day_seconds"] == 2.0 and doc["day_seconds_from"] == "stored"
    assert doc["rates"] == report.to_dict()["rates"]
    # An explicit day length wins, everywhere.
    assert main(["analyze", "changes", "--db", str(db), "--day-seconds", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["day_seconds_from"] == "given"
    assert doc["rates"]["unchanged_upper_rate_per_day"]["max"] == pytest.approx(
        LN20 / (2 * days))
    # export rates
    assert main(["export", "rates", "--db", str(db), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["day_seconds"] for r in rows} == {2.0}
    assert [r["upper_95"] for r in rows] == pytest.approx([LN20 / days] * 3)
    # the report's change section
    html_path = tmp_path / "report.html"
    assert main(["report", "--db", str(db), "--out", str(html_path), "--quiet"]) == 0
    text = re.sub(r"<[^>]+>", " ", html_path.read_text(encoding="utf-8"))
    assert re.search(r"length of a day on the clock\s+2 s", text)
    assert f"below {LN20 / days:.3g} / day for every one" in text


def test_without_a_stored_day_the_default_is_said(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from webcrawl.crawler.cli import main

    db = tmp_path / "crawl.db"
    asyncio.run(_write(db, 86400.0, store_day=False))
    assert main(["analyze", "changes", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "One day = 86400 s (the default; the database stores no day length)" in out
    assert change_report(load_visit_log(db)).observed_days.tolist() == pytest.approx([1.0] * 3)
