"""Waiting for another program's write lock on the database (internal).

Our writers exclude each other with :mod:`webcrawl.storage.lock`, so when SQLite says
*busy* to the writer, another program holds SQLite's own write lock: a ``sqlite3`` shell
or a notebook with an open write transaction.  :func:`begin_immediate` opens the
writer's transaction and waits for such a lock, said once on the ``webcrawl`` log (a
warning the CLI prints), for at most the writer's ``busy_wait`` seconds, then raises
:class:`~webcrawl.storage.errors.StoreBusyError` naming a lock held by another program.

The writer's statements run in the event loop's thread (see
:mod:`webcrawl.storage.store`), so an attempt must not block: once the database is open
the connection's ``busy_timeout`` is 0 and :func:`begin_immediate` sleeps
:data:`POLL_SECONDS` on the event loop between attempts (while opening, before any fetch,
SQLite's busy handler waits up to :data:`NOTICE_MS` an attempt).  The message comes
once the lock was held :data:`NOTICE_MS` (or the whole ``busy_wait``, if shorter): a
checkpoint or a short write of another program passes unnoticed, a longer one gets
the message within a second.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from webcrawl.storage._sqlite import is_busy
from webcrawl.storage.errors import StoreBusyError

__all__ = ["NOTICE_MS", "POLL_SECONDS", "begin_immediate", "busy_error"]

log = logging.getLogger("webcrawl.storage.store")

#: The longest lock of another program that passes without a message (ms); also the
#: writer connection's ``busy_timeout`` while the database is opened.
NOTICE_MS = 1000
#: Seconds between two attempts on a locked database.
POLL_SECONDS = 0.05


def busy_error(path: Path, wait: float) -> StoreBusyError:
    return StoreBusyError(
        f"{path} is locked by another program: an open write transaction (a sqlite3 shell "
        f"or a notebook?) held it for more than {wait:g} s (store_busy_wait); end that "
        "transaction, then try again")


async def begin_immediate(db: sqlite3.Connection, path: Path, wait: float,
                          on_wait: Callable[[bool], None] | None = None) -> None:
    """``BEGIN IMMEDIATE`` on ``db``, waiting up to ``wait`` seconds for another
    program's write lock; ``on_wait(True)`` when the wait starts, ``on_wait(False)``
    when it ends (either way).  Returns without yielding to the event loop when the
    database is not locked."""
    started = time.monotonic()
    notice = min(NOTICE_MS / 1000, wait)
    waiting = False
    try:
        while True:
            try:
                db.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
            held = time.monotonic() - started
            if wait > 0 and not waiting and held >= notice:
                waiting = True
                if on_wait is not None:
                    on_wait(True)
                log.warning("%s is locked by another program (an open write transaction: "
                            "a sqlite3 shell or a notebook?); waiting up to %g s for it to "
                            "end (store_busy_wait)", path, wait)
            if held >= wait:
                raise busy_error(path, wait)
            await asyncio.sleep(POLL_SECONDS)
        if waiting:
            log.warning("%s: the other program's lock ended after %.1f s; writing goes on",
                        path, time.monotonic() - started)
    finally:
        if waiting and on_wait is not None:
            on_wait(False)
