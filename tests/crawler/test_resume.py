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
from typing import Any

import pytest
from miniweb import read_db
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]


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
    deadline = time.monotonic() + 300  # a safety net: kill points took minutes under load
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
def baseline_data(served: object, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("base") / "c.db"
    subprocess.run(crawl_cmd(served.seed_url, db), check=True, timeout=120)  # type: ignore[attr-defined]
    data = read_db(db)
    assert None not in data["outcomes"].values()
    return data


@pytest.fixture(scope="module")
def baseline(baseline_data: dict[str, Any]) -> set[tuple[str, str]]:
    return baseline_data["edges"]  # type: ignore[no-any-return]


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


def test_plain_resume_after_sigkill_remembers_every_option(
        served: object, baseline_data: dict[str, Any], tmp_path: Path) -> None:
    """``--resume`` alone: --resolve, --allow-host, delays and concurrency come from the db."""
    db = tmp_path / "c.db"
    code = run_until(crawl_cmd(served.seed_url, db), db, 250, signal.SIGKILL)  # type: ignore[attr-defined]
    assert code == -signal.SIGKILL
    assert None in read_db(db)["outcomes"].values()
    done = subprocess.run([*WEBCRAWL, "crawl", "--db", str(db), "--resume", "--quiet"],
                          timeout=120, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""  # nothing given again: no note
    data = read_db(db)
    # Without the stored --resolve every *.test host would be a network error.
    assert data["outcomes"] == baseline_data["outcomes"]
    assert data["edges"] == baseline_data["edges"]
    check_no_refetch(db)


def _pages(db: Path) -> int:
    no_request = ("out_of_scope", "robots_excluded", None)
    return sum(o not in no_request for o in read_db(db)["outcomes"].values())


def test_max_pages_then_resume_with_a_higher_limit(
        served: object, baseline_data: dict[str, Any], tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    first = subprocess.run(crawl_cmd(served.seed_url, db, "--max-pages", "100"),  # type: ignore[attr-defined]
                           timeout=120, capture_output=True)
    assert first.returncode == 0, first.stderr.decode()
    assert _pages(db) == 100
    assert "abandoned" not in read_db(db)["outcomes"].values()
    more = subprocess.run([*WEBCRAWL, "crawl", "--db", str(db), "--resume", "--quiet",
                           "--max-pages", "200"], timeout=120, capture_output=True)
    assert more.returncode == 0, more.stderr.decode()
    assert more.stderr.decode() == (
        "webcrawl: note: overriding the crawl's stored settings: --max-fetches 100 -> 200\n")
    assert _pages(db) == 200
    check_no_refetch(db)
    # The stored limit is now 200: a plain resume has nothing to do.
    again = subprocess.run([*WEBCRAWL, "crawl", "--db", str(db), "--resume", "--quiet"],
                           timeout=120, capture_output=True)
    assert again.returncode == 0 and _pages(db) == 200
    every = sum(o not in ("out_of_scope", "robots_excluded")
                for o in baseline_data["outcomes"].values())
    assert every > 200
