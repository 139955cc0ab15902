"""kill -9 of a real ``webcrawl crawl`` at many points, then resume: nothing lost, nothing twice.

Kills land at fetch counts chosen at random (seeded) and, through the test-only hooks
of :mod:`webcrawl.storage._testhooks` (``WEBCRAWL_TEST_PAUSE``), deterministically inside a
batch transaction of the store and inside a PageRank recomputation (the live one in
its worker thread, and the one a resume runs while replaying the stored crawl).
After every kill the file passes ``PRAGMA integrity_check`` and every URL whose
outcome was committed keeps exactly its fetch rows to the end; the finished crawl has
the same edge set and URL outcomes as an uninterrupted one.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from miniweb import read_db
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

pytestmark = pytest.mark.timeout(600)  # a hang guard: a run took over 120 s at load 13

WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]
#: Enough pages for PageRank's first live recomputation (after 1000 fetches: every=1000).
PAGES = 1300


def crawl_cmd(seed: str, db: Path, *extra: str) -> list[str]:
    return [*WEBCRAWL, "crawl", seed, "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "--allow-host", "*.test", "--delay-factor", "0", "--min-delay", "0",
            "--max-delay", "0", "--concurrency", "16", "--strategy", "pagerank",
            "--strategy-opt", "every=1000", "--quiet",
            *extra]


def fetch_count(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM fetches").fetchone()[0])
    except sqlite3.Error:
        return 0


def kill_at(cmd: list[str], db: Path, *, fetches: int | None = None,
            pause: str | None = None, marker: Path | None = None,
            committed_first: bool = False) -> None:
    """Run ``cmd`` and SIGKILL it once ``fetches`` rows are committed or ``pause`` is hit.

    ``committed_first``: once paused, also wait until some URL's outcome is committed (the
    other threads go on writing while one sits at the hook).
    """
    env = dict(os.environ)
    if pause is not None:
        assert marker is not None
        marker.unlink(missing_ok=True)
        env["WEBCRAWL_TEST_PAUSE"] = f"{pause}:{marker}"
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 300  # a safety net: kill points took minutes under load
    while proc.poll() is None and time.monotonic() < deadline:
        if pause is not None and marker is not None and marker.exists():
            break
        if fetches is not None and fetch_count(db) >= fetches:
            break
        time.sleep(0.005)
    if proc.poll() is not None:  # read its pipe: a pipe left open fails a later test
        _, err = proc.communicate()
        pytest.fail(f"the crawl ended before the kill point ({pause or fetches}): "
                    f"{err.decode()[-500:]}")
    if marker is not None and pause is not None:
        assert marker.exists()  # the kill lands while the process sits at the hook
    while committed_first and proc.poll() is None and time.monotonic() < deadline:
        if committed_outcomes(db):
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert b"Traceback" not in err, err.decode()


def committed_outcomes(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute(
                "SELECT count(*) FROM urls WHERE outcome IS NOT NULL").fetchone()[0])
    except sqlite3.Error:
        return 0


def integrity_ok(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def completed_fetches(db: Path) -> dict[str, set[tuple[int, int]]]:
    """(seq, attempt) of the fetch rows of every URL whose outcome is committed."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT u.url, f.seq, f.attempt FROM fetches f JOIN urls u ON u.id = f.url_id"
            " WHERE u.outcome IS NOT NULL").fetchall()
    done: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for url, seq, attempt in rows:
        done[url].add((seq, attempt))
    return done


def check_one_take_per_url(db: Path) -> None:
    seqs: dict[str, set[int]] = defaultdict(set)
    for url, seq, *_ in read_db(db)["fetches"]:
        seqs[url].add(seq)
    assert not {u: s for u, s in seqs.items() if len(s) > 1}


@pytest.fixture(scope="module")
def served() -> Iterator[Any]:
    web = FixtureWeb.build(FixtureConfig(pages=PAGES, hosts=8, seed=11))
    with serve_in_thread(web) as server:
        yield server


@pytest.fixture(scope="module")
def baseline(served: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("base") / "c.db"
    subprocess.run(crawl_cmd(served.seed_url, db), check=True, timeout=180)
    data = read_db(db)
    assert None not in data["outcomes"].values()
    assert len(data["fetches"]) > 1000  # PageRank recomputed live at least once
    return data


def finish_and_compare(cmd: list[str], db: Path, baseline: dict[str, Any],
                       committed: dict[str, set[tuple[int, int]]]) -> None:
    done = subprocess.run([*cmd, "--resume"], timeout=180, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    integrity_ok(db)
    data = read_db(db)
    assert data["edges"] == baseline["edges"]
    assert data["outcomes"] == baseline["outcomes"]
    after = completed_fetches(db)
    # No completed fetch was repeated: committed URLs kept exactly their fetch rows.
    assert {u: after[u] for u in committed} == committed
    check_one_take_per_url(db)


def test_kill_9_at_many_points_then_resume(served: Any, baseline: dict[str, Any],
                                           tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    marker = tmp_path / "paused"
    cmd = crawl_cmd(served.seed_url, db)
    rng = random.Random(20240601)
    random_points = sorted(rng.sample(range(150, 1050), 4))
    points: list[dict[str, Any]] = [
        {"fetches": 1},                          # right after the first commit
        {"pause": "store_write:2"},              # inside a batch transaction
        {"pause": "recompute:1"},                # PageRank of the resume's replay
        {"fetches": random_points[0]},
        {"pause": "store_write:1"},              # the resumed run's first batch
        {"fetches": random_points[1]},
        {"pause": "store_write:1"},              # (a run writes at least once)
        {"fetches": random_points[2]},
        {"pause": "recompute:1"},
        {"fetches": random_points[3]},
    ]
    committed: dict[str, set[tuple[int, int]]] = {}
    for i, point in enumerate(points):
        kill_at(cmd if i == 0 else [*cmd, "--resume"], db, marker=marker, **point)
        integrity_ok(db)
        now = completed_fetches(db)
        # What was committed before stays committed, unchanged.
        assert {u: now[u] for u in committed} == committed, point
        check_one_take_per_url(db)
        committed = now
    assert len(committed) > random_points[2]
    finish_and_compare(cmd, db, baseline, committed)


def test_kill_9_during_live_pagerank_recompute(served: Any, baseline: dict[str, Any],
                                               tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    cmd = crawl_cmd(served.seed_url, db)
    # The first recomputation of a fresh crawl is the live one, in its worker thread,
    # after 1000 fetches; the crawl goes on writing meanwhile.
    # Small batches, and the kill waits until one has landed while the recompute sits
    # paused: on a fast machine the first 1000 fetches can all fit in the store's first
    # (0.5 s, 2000-row) batch, so none would be committed yet.
    cmd = [*cmd, "-s", "store_batch_size=100"]
    kill_at(cmd, db, pause="recompute:1", marker=tmp_path / "paused", committed_first=True)
    integrity_ok(db)
    committed = completed_fetches(db)
    assert committed  # some batches landed; the rest of the run is lost and redone
    finish_and_compare(cmd, db, baseline, committed)
