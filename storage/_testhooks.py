"""Test-only fault hooks, driven by environment variables (internal; never set them in use).

Crash and failure tests run a real ``webcrawl`` subprocess and need a kill, a full
disk or a read-only file to land at a precise point.  Without the variables below
every hook is a no-op costing one dictionary lookup at import time.

``WEBCRAWL_TEST_PAUSE=POINT:N:PATH``
    The ``N``-th time (1-based) the code reaches the named point, create the file
    ``PATH`` and block the calling thread (for at most :data:`PAUSE_SECONDS`), so the
    test, which waits for ``PATH`` to appear, can ``kill -9`` the process right there.
    Points: ``store_write`` (inside a batch transaction, after the URL rows and before the
    fetch rows and the COMMIT) and ``recompute`` (in the worker thread of a strategy
    recomputation, e.g. PageRank, before it runs). ``WEBCRAWL_TEST_MAX_PAGE_COUNT=N``
    ``PRAGMA max_page_count = N`` on the writer connection: the database cannot grow
    beyond ``N`` pages, so writes fail with SQLITE_FULL exactly as on a full disk (a small
    tmpfs would need root). ``WEBCRAWL_TEST_KILL=POINT:N`` The ``N``-th time the code
    reaches ``POINT`` (:func:`kill_at`), the process sends itself SIGKILL: a ``kill -9``
    at a precise point with no waiting in the test. ``WEBCRAWL_TEST_OPEN_MODE=ro`` Open
    the writer connection with this SQLite URI mode; ``ro`` simulates a read-only file or
    mount (root ignores ``chmod``, and a read-only mount needs root).
    """

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["PAUSE_SECONDS", "kill_at", "max_page_count", "open_mode", "reached", "reload"]

#: Longest a paused process blocks (the test kills it long before).
PAUSE_SECONDS = 60.0

_PAUSE = os.environ.get("WEBCRAWL_TEST_PAUSE", "")
_counts: dict[str, int] = {}


def reached(point: str) -> None:
    """Mark that the code reached ``point``; pause there if the test asked for it."""
    if not _PAUSE:
        return
    name, _, rest = _PAUSE.partition(":")
    if name != point:
        return
    nth, _, marker = rest.partition(":")
    count = _counts[point] = _counts.get(point, 0) + 1
    if count == int(nth):
        Path(marker).touch()
        time.sleep(PAUSE_SECONDS)


def max_page_count() -> int | None:
    """The page limit of ``WEBCRAWL_TEST_MAX_PAGE_COUNT``, if set."""
    value = os.environ.get("WEBCRAWL_TEST_MAX_PAGE_COUNT")
    return int(value) if value else None


def open_mode(default: str) -> str:
    """The writer's URI mode: ``WEBCRAWL_TEST_OPEN_MODE`` if set, else ``default``."""
    return os.environ.get("WEBCRAWL_TEST_OPEN_MODE") or default


_KILL = os.environ.get("WEBCRAWL_TEST_KILL", "")


def reload() -> None:
    """Read the variables again, counts from zero: a process forked off another one
    (a shard worker) whose environment was changed after the fork."""
    global _PAUSE, _KILL
    _PAUSE = os.environ.get("WEBCRAWL_TEST_PAUSE", "")
    _KILL = os.environ.get("WEBCRAWL_TEST_KILL", "")
    _counts.clear()


def kill_at(point: str) -> None:
    """``WEBCRAWL_TEST_KILL=POINT:N``: the ``N``-th time ``point`` is reached, SIGKILL self.

    Points: ``shard_page`` (the sharded crawl's coordinator, after a worker's page
    result was enqueued to the store), ``shard_worker_batch`` (each worker of a
    sharded crawl, after sending a batch of results; restarted workers never see the
    variable), ``warc_record`` (``import warc``, after each record), ``warc_exchange``
    (a crawl's WARC archive, after each exchange's records are written) and
    ``new_database`` (a new database complete in its temporary file, before its
    rename).  A deterministic ``kill -9`` without sleeping in the test.
    """
    if not _KILL:
        return
    name, _, nth = _KILL.partition(":")
    if name != point:
        return
    count = _counts[point] = _counts.get(point, 0) + 1
    if count == int(nth):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
