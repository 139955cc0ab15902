"""The report names the hosts it counts as one site (mirrors), or says there are none."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from webcrawl.analysis.report.document import build_report

#: Four pages on docs.test, copied on mirror.test (their duplicates), and a page of
#: o.test linking to both names.
PATHS = ["/", "/a", "/b", "/c"]


def _crawl(write_crawl: Callable[..., Path], path: Path, mirror: bool) -> Path:
    names = ["docs.test", "mirror.test"] if mirror else ["docs.test"]
    urls = ["http://o.test/"] + [f"http://{n}{p}" for n in names for p in PATHS]
    # o.test links to both names (to the mirror's copy only where there is a mirror)
    links: dict[int, list[int]] = {0: [1, 2, 1 + len(PATHS)] if mirror else [1, 2]}
    for k in range(len(PATHS)):
        links[1 + k] = [1 + (k + 1) % len(PATHS)]
    for k in range(len(PATHS) if mirror else 0):
        links[1 + len(PATHS) + k] = []
    db = write_crawl(path, urls, links)
    with sqlite3.connect(db) as conn:
        conn.executemany("UPDATE urls SET duplicate_of = ? WHERE id = ?",
                         [(1 + k, 1 + len(PATHS) + k)
                          for k in range(len(PATHS) if mirror else 0)])
    return db


def _summary_text(out: Path) -> str:
    text = out.read_text()
    return text.split('<section id="summary">', 1)[1].split("</section>", 1)[0]


def test_the_report_lists_mirrored_hosts(write_crawl: Callable[..., Path],
                                         tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    build_report(_crawl(write_crawl, tmp_path / "m.db", True), out)
    summary = _summary_text(out)
    assert "Sites served under more than one name" in summary
    assert "<td>docs.test, mirror.test</td>" in summary  # the linked-to name first
    assert "one site under 2 host names: docs.test = mirror.test" in summary  # the graph


def test_the_report_says_when_there_is_none(write_crawl: Callable[..., Path],
                                            tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    build_report(_crawl(write_crawl, tmp_path / "p.db", False), out)
    assert "None: no two hosts of this crawl serve the same documents" in \
        _summary_text(out)
