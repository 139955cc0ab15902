"""The change section states its observation window and counts unchanged pages as
censored, on a hand-made visit history whose answer is known.

Four pages are fetched on day 0 and revisited daily on days 1 to 10 (one day = 86,400 s):
page 0 changes at every revisit, page 1 at 3 of them, page 2 at 1, page 3 never.  With
regular daily visits the estimator is the bias-reduced one of Cho and Garcia-Molina,
``-ln((n - X + 0.5) / (n + 0.5))`` per day: intervals of 0.33, 2.97 and 10.0 days, so
one page each in "<= 1 day", "1 day - 1 week" and "> 1 week" (a 10-day window cannot tell
1 - 4 months from longer), and page 3 censored: no change seen in its 10 days.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from webcrawl.analysis.change.change_stats import (
    CHANGE_BUCKETS,
    VisitLog,
    bucket_fractions,
    mean_change_intervals,
    window_buckets,
)
from webcrawl.analysis.report.document import build_report
from webcrawl.analysis.report.html import Section
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

DAY = 86400.0
REVISITS = 10
#: Revisit rounds (1..10) at which each page changed.
CHANGES = {0: set(range(1, 11)), 1: {3, 6, 9}, 2: {5}, 3: set()}


async def _write_history(path: Path) -> None:
    store = await CrawlStore.open(path)
    store.add_host(HostRow(id=0, name="news.test"))
    for u in CHANGES:
        store.add_url(UrlRow(id=u, url=f"https://news.test/p{u}", host_id=0, depth=1,
                             discovered_seq=-1))
    t0, seq = 1_700_000_000.0, 0
    for rnd in range(REVISITS + 1):
        for u, changes in CHANGES.items():
            at = t0 + rnd * DAY + u
            crawl, changed = rnd == 0, rnd in changes
            store.add_fetch(FetchRecord(
                url_id=u, seq=seq, started_at=at, ended_at=at + 0.2,
                outcome=Outcome.FETCHED if crawl or changed else Outcome.NOT_MODIFIED,
                status=200 if crawl or changed else 304,
                digest=f"d{rnd}" if crawl or changed else None,
                kind=FetchKind.CRAWL if crawl else FetchKind.REVISIT,
                changed=None if crawl else changed))
            seq += 1
    for u in CHANGES:
        store.set_outcome(u, Outcome.FETCHED, u)
    await store.aclose()


def test_window_buckets_keep_only_what_the_window_can_tell() -> None:
    def labels(days: float) -> list[str]:
        return [label for label, _ in window_buckets(days)]

    assert labels(10) == ["<= 1 day", "1 day - 1 week", "> 1 week"]
    assert labels(34) == ["<= 1 day", "1 day - 1 week", "1 week - 1 month", "> 1 month"]
    assert labels(3) == ["<= 1 day", "> 1 day"]
    assert window_buckets(120) == window_buckets(400) == CHANGE_BUCKETS   # the paper's
    assert all("4 months" not in label for label in labels(119))
    assert window_buckets(34)[-1][1] == math.inf


def test_a_page_with_a_change_is_never_censored() -> None:
    # Two visits with a change and Last-Modified: the Last-Modified estimator's
    # (n - 1) / T is 0 here, yet a change was seen.
    log = VisitLog.from_arrays([0, 0, 1, 1], [0.0, 4.0, 0.0, 4.0], [True] * 4,
                               [-1, 1, -1, 0], last_modified=[np.nan, 3.0, np.nan, np.nan])
    intervals = mean_change_intervals(log)
    assert intervals[0] == pytest.approx(4.0)     # one change in 4 days
    assert math.isinf(intervals[1])               # none seen: censored


@pytest.fixture
def report_of_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                      ) -> tuple[str, list[tuple[str, object]]]:
    import asyncio

    db = tmp_path / "crawl.db"
    asyncio.run(_write_history(db))
    figures: list[tuple[str, object]] = []
    original = Section.image

    def keep(self: Section, fig: object, alt: str, **kw: object) -> None:
        figures.append((alt, fig))
        original(self, fig, alt, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Section, "image", keep)
    build_report(db, tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    return html[html.index('<section id="changes">'):], figures


def _cells(table_html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>",
                                                          table_html)]


def test_report_interval_table_is_censored_and_bucketed_by_the_window(
        report_of_history: tuple[str, list[tuple[str, object]]]) -> None:
    section, _ = report_of_history
    heading = "Pages by mean change interval (10-day window)"
    assert heading in section
    table = section[section.index(heading):]
    table = table[table.index("<table>"):table.index("</table>")]
    cells = _cells(table)
    head, values = cells[:len(cells) // 2], cells[len(cells) // 2:]
    assert head[:3] == ["&lt;= 1 day", "1 day - 1 week", "&gt; 1 week"]
    assert head[3].startswith("no change seen (censored: interval &gt;= the page&#x27;s "
                              "observed span, median 10 days")
    assert values == ["25.0%", "25.0%", "25.0%", "25.0%"]
    assert "Shares of the 4 pages visited at least twice with an answer." in section
    assert "4 months" not in section


def test_every_change_table_and_figure_states_its_window(
        report_of_history: tuple[str, list[tuple[str, object]]]) -> None:
    section, figures = report_of_history
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section))
    # The whole window: the crawl on day 0 to the last revisit on day 10 (+3 s); the
    # revisits from day 1; each page observed for 10 days.
    assert ("observation window 10 days: from the first fetch (day 0) to the last revisit "
            "(day 10); the revisits ran from day 1 to day 10 (9 days); each page is "
            "observed from its first to its last answered visit (median 10 days)") in text
    assert "Freshness (10-day window)" in text
    assert "over the 10-day window (day 0 to day 10)" in text
    assert "only from day 1 to day 10 (9 days)" in text          # freshness caption
    assert "Pages with a change seen (3) over the 10-day window. The 1 pages" in text
    titles = {alt: [ax.get_title() for ax in fig.axes]  # type: ignore[attr-defined]
              for alt, fig in figures}
    assert titles["histogram of estimated change rates"][0] == \
        "Estimated change rates (10-day window)"
    assert titles["freshness of the collection over time"][0] == \
        "Freshness of the collection (10-day window)"


def test_the_report_agrees_with_analyze_changes_on_the_censored_share(tmp_path: Path) -> None:
    import asyncio

    from webcrawl.analysis.change.change_stats import change_report
    from webcrawl.analysis.change.fetch_history import load_visit_log

    db = tmp_path / "crawl.db"
    asyncio.run(_write_history(db))
    report = change_report(load_visit_log(db))
    assert report.window_days == pytest.approx(10.0, abs=1e-3)
    assert report.censored_fraction == pytest.approx(0.25)
    fractions = bucket_fractions(mean_change_intervals(load_visit_log(db)),
                                 window_buckets(report.window_days))
    # Without the censored column the unchanged page would land in "> 1 week".
    assert fractions.tolist() == pytest.approx([0.25, 0.25, 0.5])


def test_report_output_overwrites_an_existing_file_and_refuses_a_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    from webcrawl.crawler.cli import main

    db = tmp_path / "crawl.db"
    asyncio.run(_write_history(db))
    out = tmp_path / "report.html"
    out.write_text("an older report", encoding="utf-8")
    assert main(["report", "--db", str(db), "-o", str(out), "--quiet"]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    capsys.readouterr()
    assert main(["report", "--db", str(db), "-o", str(tmp_path), "--quiet"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a directory" in err[0], err
