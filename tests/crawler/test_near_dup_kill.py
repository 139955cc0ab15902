"""kill -9 of a crawl running the near-duplicate test, then resume: the same groups.

The crawl sketches and tests the pages of each store commit together, just before the
commit (:mod:`webcrawl.crawler.near_batch`).  Killed inside a batch transaction and at
fetch counts, after every kill: each committed page has its sketch, and each planted
pair whose two pages are committed is recorded as a group (the test of the later page
was written in the same transaction as its rows); resumed to the end, the groups are an
uninterrupted crawl's, and the fixture's planted pairs.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_crash_safety import crawl_cmd, integrity_ok, kill_at
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Any, set[frozenset[str]]]]:
    web = FixtureWeb.build(FixtureConfig(pages=400, hosts=4, seed=3, near_duplicate_pairs=36,
                                         similar_pages=40, robots_disallow_fraction=0.0))
    with serve_in_thread(web) as server:
        planted = {frozenset((t.url, t.source_url)) for t in web.truth_near(server.port)
                   if t.source_url and t.url != t.source_url}
        yield server, planted


def _cmd(server: Any, db: Path) -> list[str]:
    # (PageRank order.)  The store commits every 2,000 records or 0.5 s: on an idle
    # machine the 400 pages took one commit, and no second batch was there to kill in.
    # Every 50 records, a run commits dozens of batches whatever the machine's speed.
    return crawl_cmd(server.seed_url, db, "--near-duplicates",
                     "--set", "store_batch_size=50")


def _state(db: Path) -> tuple[set[frozenset[str]], set[str], set[str]]:
    """The recorded groups (pairs of URLs), the committed fetched pages (no byte copies)
    and those of them without a sketch."""
    with sqlite3.connect(db) as conn:
        groups = {frozenset(p) for p in conn.execute(
            "SELECT u.url, l.url FROM urls u JOIN urls l ON l.id = u.near_of")}
        rows = conn.execute(
            "SELECT u.url, f.sketch IS NULL FROM urls u JOIN fetches f ON f.url_id = u.id"
            " WHERE u.outcome = 'fetched' AND f.outcome = 'fetched'"
            " AND u.duplicate_of IS NULL").fetchall()
    return groups, {u for u, _ in rows}, {u for u, missing in rows if missing}


def test_kill_9_then_resume_gives_the_uninterrupted_groups(
        served: tuple[Any, set[frozenset[str]]], tmp_path: Path) -> None:
    server, planted = served
    base = tmp_path / "base.db"
    subprocess.run(_cmd(server, base), check=True, timeout=300)
    base_groups, base_pages, base_unsketched = _state(base)
    assert base_groups == planted and len(base_pages) > 300

    db, marker = tmp_path / "c.db", tmp_path / "paused"
    cmd = _cmd(server, db)
    points: list[dict[str, Any]] = [
        {"pause": "store_write:2"},   # inside a batch transaction
        {"fetches": 200},
        {"pause": "store_write:1"},   # the resumed run's first batch
    ]
    for i, point in enumerate(points):
        kill_at(cmd if i == 0 else [*cmd, "--resume"], db, marker=marker, **point)
        integrity_ok(db)
        groups, pages, unsketched = _state(db)
        assert unsketched <= base_unsketched, point  # no page committed without its sketch
        # every pair whose two pages are committed is recorded, and nothing else
        assert groups == {p for p in planted if p <= pages}, point
    done = subprocess.run([*cmd, "--resume"], timeout=300, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    integrity_ok(db)
    assert _state(db) == (base_groups, base_pages, base_unsketched)
