"""kill -9 of a real ``webcrawl revisit`` at ten points, resumed each time: nothing lost.

Seven kills land at revisit counts drawn at random (seeded) and three inside a batch
transaction of the store (the test-only ``WEBCRAWL_TEST_PAUSE=store_write`` hook of
:mod:`webcrawl.storage._testhooks`).  After every kill the file passes ``PRAGMA integrity_check``
and every revisit row committed before it is still there, unchanged, at the end.  A
completed (committed) revisit is never repeated early: under the uniform policy each
page is due ``N / R`` seconds after its last recorded visit, in every process alike,
so two recorded visits of one page are never closer than that, across kills included.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

pytestmark = pytest.mark.timeout(600)  # a hang guard, never a measurement (slow under load)

WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]
DAY_SECONDS = 0.2
BUDGET = 40.0


def revisit_rows(db: Path) -> list[tuple[object, ...]]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute(
                "SELECT f.id, u.url, f.seq, f.outcome, f.started_at, f.ended_at, f.changed"
                " FROM fetches f JOIN urls u ON u.id = f.url_id"
                " WHERE f.kind = 'revisit' ORDER BY f.id").fetchall()
    except sqlite3.Error:
        return []


def kill_during(cmd: list[str], db: Path, *, at_rows: int | None = None,
                pause: str | None = None, marker: Path | None = None) -> None:
    """Run ``cmd``; SIGKILL it at ``at_rows`` committed revisits or at the ``pause`` hook."""
    env = dict(os.environ)
    if pause is not None and marker is not None:
        marker.unlink(missing_ok=True)
        env["WEBCRAWL_TEST_PAUSE"] = f"{pause}:{marker}"
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 300  # a safety net: kill points took minutes under load
    while proc.poll() is None and time.monotonic() < deadline:
        if marker is not None and marker.exists():
            break
        if at_rows is not None and len(revisit_rows(db)) >= at_rows:
            break
        time.sleep(0.005)
    assert proc.poll() is None, f"the revisit ended before the kill point ({pause or at_rows})"
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert b"Traceback" not in err, err.decode()


def test_revisit_survives_ten_kills(tmp_path: Path) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=60, hosts=4, seed=4))
    db = tmp_path / "c.db"
    marker = tmp_path / "paused"
    rng = random.Random(11)
    kills: list[tuple[str, int]] = [("rows", rng.randint(2, 25)) for _ in range(7)]
    kills[2:2] = [("store_write", 2)]
    kills[5:5] = [("store_write", 3)]
    kills.append(("store_write", 2))
    assert len(kills) == 10
    with serve_in_thread(web, day_seconds=DAY_SECONDS) as server:
        settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",),
                                            scope_hosts=("*.test",))
        asyncio.run(Crawler(db, [server.seed_url], settings).run())
        with sqlite3.connect(db) as conn:
            n_pages = conn.execute("SELECT count(*) FROM urls WHERE outcome = 'fetched'"
                                   ).fetchone()[0]
        cmd = [*WEBCRAWL, "revisit", "--db", str(db), "--resolve", "*.test=127.0.0.1",
               "--delay-factor", "0", "--min-delay", "0", "--max-delay", "0", "--quiet",
               "--budget", f"{BUDGET}/s", "--policy", "uniform",
               "--day-seconds", str(DAY_SECONDS)]
        committed: list[list[tuple[object, ...]]] = []
        for kind, arg in kills:
            before = revisit_rows(db)
            if kind == "rows":
                kill_during([*cmd, "--duration", "60"], db, at_rows=len(before) + arg)
            else:
                kill_during([*cmd, "--duration", "60"], db, pause=f"{kind}:{arg}",
                            marker=marker)
            with sqlite3.connect(db) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            after = revisit_rows(db)
            assert after[: len(before)] == before  # nothing committed was lost or changed
            committed.append(after)
        done = subprocess.run([*cmd, "--duration", "2"], stderr=subprocess.PIPE, timeout=300)
        assert done.returncode == 0, done.stderr.decode()

    rows = revisit_rows(db)
    for snapshot in committed:
        assert rows[: len(snapshot)] == snapshot
    assert len(rows) > len(committed[-1])
    seqs = [row[2] for row in rows]
    assert len(seqs) == len(set(seqs))
    # A committed visit is never repeated before the page is due again.
    interval = n_pages / BUDGET
    last: dict[object, float] = {}
    pairs = 0
    for _, url, _, outcome, started, ended, _ in rows:
        if outcome not in ("fetched", "not_modified"):
            continue
        assert isinstance(started, float) and isinstance(ended, float)
        if url in last:
            assert started - last[url] >= interval - 0.01, (url, started - last[url])
            pairs += 1
        last[url] = (started + ended) / 2
    assert pairs >= n_pages


def test_revisit_disk_full_stops_with_one_line(tmp_path: Path) -> None:
    """A full disk mid-revisit: one error line, exit 1, committed rows intact."""
    web = FixtureWeb.build(FixtureConfig(pages=120, hosts=3, seed=2))
    db = tmp_path / "c.db"
    with serve_in_thread(web, day_seconds=DAY_SECONDS) as server:
        settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",),
                                            scope_hosts=("*.test",))
        asyncio.run(Crawler(db, [server.seed_url], settings).run())
        cmd = [*WEBCRAWL, "revisit", "--db", str(db), "--resolve", "*.test=127.0.0.1",
               "--delay-factor", "0", "--min-delay", "0", "--max-delay", "0", "--quiet",
               "--budget", "400/s", "--day-seconds", str(DAY_SECONDS)]
        first = subprocess.run([*cmd, "--duration", "1"], stderr=subprocess.PIPE, timeout=300)
        assert first.returncode == 0, first.stderr.decode()
        with sqlite3.connect(db) as conn:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            before = conn.execute("SELECT * FROM fetches ORDER BY id").fetchall()
            revisits = conn.execute("SELECT count(*) FROM fetches WHERE kind = 'revisit'"
                                    ).fetchone()[0]
        assert revisits > 0
        # The file may not grow by more than a page: the next batch hits SQLITE_FULL.
        env = {**os.environ, "WEBCRAWL_TEST_MAX_PAGE_COUNT": str(pages + 1)}
        done = subprocess.run([*cmd, "--duration", "20"], stderr=subprocess.PIPE, timeout=300,
                              env=env)
    err = done.stderr.decode()
    assert done.returncode == 1
    assert err.count("\n") == 1 and "disk full" in err and "Traceback" not in err, err[:2000]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = conn.execute("SELECT * FROM fetches ORDER BY id").fetchall()
    assert rows[: len(before)] == before  # the earlier run's revisits are intact
