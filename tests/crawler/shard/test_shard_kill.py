"""kill -9 of the coordinator or of a worker of ``webcrawl crawl --workers 2``, then resume.

Kills are deterministic (``WEBCRAWL_TEST_KILL``, :func:`webcrawl.storage._testhooks.kill_at`):
the coordinator kills itself after its N-th worker result was enqueued to the store; a
worker kills itself after sending its N-th batch of results (the coordinator then restarts
it and the crawl goes on; a restarted worker never inherits the kill point). Every batch
holds at most one result per host and the crawl fetches about 280 pages of 8 hosts, so
whatever the batching, some worker sends more than the largest N. One fixture server
serves the killed run and the resume, so its audit covers both: 0 politeness violations at
a 20 ms minimum delay, across the kill. The final graph is the fixture truth's, every URL
ends with one outcome, and the file passes ``PRAGMA integrity_check``.
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import pytest
from clirun import WEBCRAWL, run_webcrawl
from test_fixture_crawl import expected_edges, page_edges
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

pytestmark = pytest.mark.timeout(600)  # a hang guard, never a measurement (slow under load)

MIN_DELAY = 0.02


def crawl_cmd(db: Path, *extra: str) -> list[str]:
    return [*WEBCRAWL, "crawl", "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "--allow-host", "*.test", "--delay-factor", "0", "--min-delay", str(MIN_DELAY),
            "--max-delay", "1", "--concurrency", "16", "--workers", "2", "--quiet", *extra]


def check_final(db: Path, web: FixtureWeb, port: int, report: dict[str, object]) -> None:
    page_urls = {p.url for p in web.truth_pages(port)}
    assert page_edges(db, page_urls) == expected_edges(web, port)
    assert report["violation_count"] == 0, report["failures"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM urls WHERE outcome IS NULL").fetchone() == (0,)
        # A URL's fetch rows all belong to one fetch (one seq): nothing fetched twice.
        assert conn.execute("SELECT count(*) FROM (SELECT url_id FROM fetches "
                            "GROUP BY url_id HAVING count(DISTINCT seq) > 1)").fetchone() == (0,)


@pytest.fixture(scope="module")
def web() -> FixtureWeb:
    return FixtureWeb.build(FixtureConfig(pages=300, hosts=8, seed=5))


@pytest.mark.parametrize("nth", [1, 5, 30, 90, 180])
def test_coordinator_killed_then_resumed(tmp_path: Path, web: FixtureWeb, nth: int) -> None:
    db = tmp_path / "c.db"
    with serve_in_thread(web) as server:
        killed = run_webcrawl(crawl_cmd(db, server.seed_url), kill=f"shard_page:{nth}")
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert "Traceback" not in killed.stderr
        # The seed again: a kill before the store's first commit leaves no stored seeds.
        resumed = run_webcrawl(crawl_cmd(db, server.seed_url, "--resume"))
        assert resumed.returncode == 0, resumed.stderr
        report = server.audit(max_concurrency=1, min_gap=MIN_DELAY)
    check_final(db, web, server.port, report)


@pytest.mark.parametrize("nth", [1, 3, 6, 10, 16])
def test_worker_killed_restarted(tmp_path: Path, web: FixtureWeb, nth: int) -> None:
    db = tmp_path / "c.db"
    with serve_in_thread(web) as server:
        done = run_webcrawl(crawl_cmd(db, server.seed_url), kill=f"shard_worker_batch:{nth}")
        assert done.returncode == 0, done.stderr
        report = server.audit(max_concurrency=1, min_gap=MIN_DELAY)
    # Some worker died, each at most once (a restarted one has no kill point).
    lost = [done.stderr.count(f"shard worker {w} lost") for w in (0, 1)]
    assert sum(lost) >= 1 and max(lost) == 1, done.stderr
    check_final(db, web, server.port, report)
