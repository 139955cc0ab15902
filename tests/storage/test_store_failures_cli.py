"""A full disk or a read-only database under a real ``webcrawl crawl``: one line, clean stop.

Tests must not need root, and root ignores ``chmod``; so the failures are produced by
the test-only hooks of :mod:`webcrawl.storage._testhooks` (``WEBCRAWL_TEST_MAX_PAGE_COUNT``:
SQLite's ``max_page_count``, which fails writes with SQLITE_FULL exactly like a full
disk; ``WEBCRAWL_TEST_OPEN_MODE=ro``: the writer opens the file read-only, like a
read-only mount) and, with no hook at all, by a file-size rlimit
(``RLIMIT_FSIZE``: write(2) fails with EFBIG) set in the child.
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

pytestmark = pytest.mark.timeout(600)  # a hang guard, never a measurement (slow under load)

WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]


def crawl(seed: str | None, db: Path, *, env: dict[str, str] | None = None,
          preexec: Any = None, resume: bool = False) -> subprocess.CompletedProcess[str]:
    cmd = [*WEBCRAWL, "crawl", *([seed] if seed else []), "--db", str(db),
           "--resolve", "*.test=127.0.0.1", "--allow-host", "*.test", "--delay-factor", "0",
           "--min-delay", "0.01", "--max-delay", "0.01", *(["--resume"] if resume else [])]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=540,
                          env={**os.environ, **(env or {})}, preexec_fn=preexec)


def one_line_error(out: subprocess.CompletedProcess[str], *words: str) -> None:
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("webcrawl: error: "), out.stderr
    for word in words:
        assert word in lines[0], lines[0]


def intact(db: Path) -> dict[str, int]:
    """Integrity, and every committed fetch has its URL row and outcome (whole fetches)."""
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        orphans = conn.execute(
            "SELECT count(*) FROM fetches f LEFT JOIN urls u ON u.id = f.url_id"
            " WHERE u.id IS NULL OR u.outcome IS NULL").fetchone()[0]
        assert orphans == 0
        fetched_without_links = conn.execute(
            "SELECT count(*) FROM urls WHERE outcome = 'fetched'"
            " AND id NOT IN (SELECT src FROM links)").fetchone()[0]
        assert fetched_without_links == 0
        return {"fetches": conn.execute("SELECT count(*) FROM fetches").fetchone()[0],
                "frontier": conn.execute(
                    "SELECT count(*) FROM urls WHERE outcome IS NULL").fetchone()[0]}


def edges(db: Path) -> set[tuple[str, str]]:
    from webcrawl.storage._sqlite import decode_ids

    with sqlite3.connect(db) as conn:
        urls = dict(conn.execute("SELECT id, url FROM urls"))
        return {(urls[s], urls[int(d)]) for s, blob in conn.execute("SELECT src, dst FROM links")
                for d in decode_ids(blob)}


@pytest.fixture(scope="module")
def served() -> Iterator[Any]:
    web = FixtureWeb.build(FixtureConfig(pages=500, hosts=4, seed=4))
    with serve_in_thread(web) as server:
        yield server


@pytest.fixture(scope="module")
def baseline(served: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("base") / "c.db"
    assert crawl(served.seed_url, db).returncode == 0
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    return {"edges": edges(db), "pages": pages}


def half_full(baseline: dict[str, Any]) -> dict[str, str]:
    """A "disk" holding three quarters of the complete crawl."""
    return {"WEBCRAWL_TEST_MAX_PAGE_COUNT": str(baseline["pages"] * 3 // 4)}


def test_disk_full_one_line_clean_stop_then_resume(served: Any, baseline: dict[str, Any],
                                                   tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    out = crawl(served.seed_url, db, env=half_full(baseline))
    one_line_error(out, "disk full", str(db), "committed data is intact")
    state = intact(db)
    assert state["fetches"] > 0 and state["frontier"] > 0  # stopped mid-crawl
    # Space freed: the crawl resumes from what was committed and completes.
    done = crawl(None, db, resume=True)
    assert done.returncode == 0, done.stderr
    assert intact(db)["frontier"] == 0
    assert edges(db) == baseline["edges"]


def _file_size_limit() -> None:  # pragma: no cover - runs in the child
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write, do not kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))


def test_file_size_limit_is_a_clean_write_error(served: Any, tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    out = crawl(served.seed_url, db, preexec=_file_size_limit)
    one_line_error(out, "write error", "file size limit", "committed data is intact")
    assert intact(db)["fetches"] > 0


def test_read_only_database_refused_and_untouched(served: Any, baseline: dict[str, Any],
                                                 tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    out = crawl(served.seed_url, db, env=half_full(baseline))
    assert out.returncode == 1
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # the failed run closed cleanly
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    out = crawl(None, db, resume=True, env={"WEBCRAWL_TEST_OPEN_MODE": "ro"})
    one_line_error(out, "read-only", str(db))
    # Readers may create an empty -wal/-shm beside the file; the data is untouched.
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert not wal.exists() or wal.stat().st_size == 0
    assert intact(db)["fetches"] > 0
