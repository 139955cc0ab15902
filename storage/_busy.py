"""Waiting for another program's write lock on the database (internal).

Our writers exclude each other with :mod:`webcrawl.storage.lock`, so when SQLite says
*busy* to the writer, another program holds SQLite's own write lock: a ``sqlite3`` shell
or a notebook with an open write transaction.  :func:`begin_immediate` opens the
writer's transaction and waits for such a lock, said once on the ``webcrawl`` log (a
warning the CLI prints), for at most the writer's ``busy_wait`` seconds, then raises
:class:`~webcrawl.storage.errors.StoreBusyError` naming a lock held by another program.

Each attempt blocks SQLite's busy handler for at most :data:`NOTICE_MS` (the
connection's ``busy_timeout``): a checkpoint or a short write of another program
passes unnoticed, a longer one gets the message within a second.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import aiosqlite
from webcrawl.storage._sqlite import is_busy
from webcrawl.storage.errors import StoreBusyError

__all__ = ["NOTICE_MS", "begin_immediate", "busy_error"]

log = logging.getLogger("webcrawl.storage.store")

#: The writer connection's ``busy_timeout`` (ms): one attempt's longest block, and the
#: longest lock of another program that passes without a message.
NOTICE_MS = 1000


def busy_error(path: Path, wait: float) -> StoreBusyError:
    return StoreBusyError(
        f"{path} is locked by another program: an open write transaction (a sqlite3 shell "
        f"or a notebook?) held it for more than {wait:g} s (store_busy_wait); end that "
        "transaction, then try again")


async def begin_immediate(db: aiosqlite.Connection, path: Path, wait: float,
                          on_wait: Callable[[bool], None] | None = None) -> None:
    """``BEGIN IMMEDIATE`` on ``db``, waiting up to ``wait`` seconds for another
    program's write lock; ``on_wait(True)`` when the wait starts, ``on_wait(False)``
    when it ends (either way)."""
    started = time.monotonic()
    waiting = False
    try:
        while True:
            try:
                await db.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
            if wait > 0 and not waiting:
                waiting = True
                if on_wait is not None:
                    on_wait(True)
                log.warning("%s is locked by another program (an open write transaction: "
                            "a sqlite3 shell or a notebook?); waiting up to %g s for it to "
                            "end (store_busy_wait)", path, wait)
            if time.monotonic() - started >= wait:
                raise busy_error(path, wait)
        if waiting:
            log.warning("%s: the other program's lock ended after %.1f s; writing goes on",
                        path, time.monotonic() - started)
    finally:
        if waiting and on_wait is not None:
            on_wait(False)
