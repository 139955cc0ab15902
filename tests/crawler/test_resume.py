"""Resume after SIGKILL and SIGINT of a real ``webcrawl crawl`` subprocess."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from miniweb import read_db

from fixtures import FixtureConfig, FixtureWeb, serve_in_thread

WEBCRAWL = [sys.executable, "-m", "crawler.cli"]


def crawl_cmd(seed: str, db: Path, *extra: str) -> list[str]:
    return [*WEBCRAWL, "crawl", seed, "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "--allow-host", "*.test", "--delay-factor", "0", "--min-delay", "0.004",
            "--max-delay", "0.004", "--concurrency", "8", "--quiet", *extra]


def fetch_count(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM fetches").fetchone()[0])
    except sqlite3.Error:
        return 0


def run_until(cmd: list[str], db: Path, fetches: int, sig: int) -> int:
    """Start ``cmd``, send ``sig`` once the db holds ``fetches`` fetch rows; exit code."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while proc.poll() is None and fetch_count(db) < fetches and time.monotonic() < deadline:
        time.sleep(0.01)
    if proc.poll() is None:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err, err.decode()
    return proc.returncode


def check_no_refetch(db: Path) -> None:
    """Every URL's fetch rows come from one take (one seq): nothing fetched twice."""
    seqs: dict[str, set[int]] = defaultdict(set)
    for url, seq, *_ in read_db(db)["fetches"]:
        seqs[url].add(seq)
    twice = {u: s for u, s in seqs.items() if len(s) > 1}
    assert not twice


@pytest.fixture(scope="module")
def served() -> object:
    web = FixtureWeb.build(FixtureConfig(pages=900, hosts=8, seed=11))
    with serve_in_thread(web) as server:
        yield server


@pytest.fixture(scope="module")
def baseline(served: object, tmp_path_factory: pytest.TempPathFactory) -> set[tuple[str, str]]:
    db = tmp_path_factory.mktemp("base") / "c.db"
    subprocess.run(crawl_cmd(served.seed_url, db), check=True, timeout=120)  # type: ignore[attr-defined]
    data = read_db(db)
    assert None not in data["outcomes"].values()
    return data["edges"]


def test_sigkill_at_several_points_then_resume(served: object, baseline: set,
                                               tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    seed = served.seed_url  # type: ignore[attr-defined]
    code = run_until(crawl_cmd(seed, db), db, 1, signal.SIGKILL)
    assert code == -signal.SIGKILL
    for point in (150, 400):
        code = run_until(crawl_cmd(seed, db, "--resume"), db, point, signal.SIGKILL)
        assert code == -signal.SIGKILL
        check_no_refetch(db)
    done = subprocess.run(crawl_cmd(seed, db, "--resume"), timeout=120, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    data = read_db(db)
    assert None not in data["outcomes"].values()
    assert data["edges"] == baseline
    check_no_refetch(db)


def test_sigint_stops_cleanly_then_resume(served: object, baseline: set, tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    seed = served.seed_url  # type: ignore[attr-defined]
    code = run_until(crawl_cmd(seed, db), db, 200, signal.SIGINT)
    assert code == 130
    stopped = read_db(db)
    assert len(stopped["fetches"]) > 0 and None in stopped["outcomes"].values()
    done = subprocess.run(crawl_cmd(seed, db, "--resume"), timeout=120, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    assert read_db(db)["edges"] == baseline
    check_no_refetch(db)


def test_resume_without_db_fails(tmp_path: Path) -> None:
    out = subprocess.run([*WEBCRAWL, "crawl", "--db", str(tmp_path / "none.db"), "--resume"],
                         capture_output=True, timeout=60, env={**os.environ})
    assert out.returncode != 0
    assert out.stderr.decode().count("\n") == 1 and "resume" in out.stderr.decode()
