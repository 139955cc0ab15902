"""Test-only fault hooks, driven by environment variables (internal; never set them in use).

Crash and failure tests run a real ``webcrawl`` subprocess and need a kill, a full
disk or a read-only file to land at a precise point.  Without the variables below
every hook is a no-op costing one dictionary lookup at import time.

``WEBCRAWL_TEST_PAUSE=POINT:N:PATH``
    The ``N``-th time (1-based) the code reaches the named point, create the file
    ``PATH`` and block the calling thread (for at most :data:`PAUSE_SECONDS`), so the
    test, which waits for ``PATH`` to appear, can ``kill -9`` the process right there.
    Points: ``store_write`` (inside a batch transaction, after the URL rows and before
    the fetch rows and the COMMIT) and ``recompute`` (in the worker thread of a
    strategy recomputation, e.g. PageRank, before it runs).
``WEBCRAWL_TEST_MAX_PAGE_COUNT=N``
    ``PRAGMA max_page_count = N`` on the writer connection: the database cannot grow
    beyond ``N`` pages, so writes fail with SQLITE_FULL exactly as on a full disk
    (a small tmpfs would need root).
``WEBCRAWL_TEST_OPEN_MODE=ro``
    Open the writer connection with this SQLite URI mode; ``ro`` simulates a read-only
    file or mount (root ignores ``chmod``, and a read-only mount needs root).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["PAUSE_SECONDS", "max_page_count", "open_mode", "reached"]

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
