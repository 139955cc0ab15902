"""One writer per crawl database: an exclusive lock on a sidecar file.

SQLite's own write lock lasts one transaction, so under WAL two crawls of one file
interleave their commits happily.  A writer (:class:`~webcrawl.storage.store.CrawlStore`: a
crawl, a resumed crawl, a revisit) therefore holds ``flock(LOCK_EX)`` on
``<db>-writer`` for as long as it lives:

* it is released on any exit, a crash or ``kill -9`` included (the kernel drops the
  locks of a dead process), so a lock is never stale and never needs clearing;
* a second writer does not wait: it gets :class:`~webcrawl.storage.errors.StoreLockedError`
  naming the holder (pid, command and start time, which the holder writes into the
  sidecar file);
* readers (analysis, export, report) never touch it.

The sidecar file stays next to the database (deleting a lock file races with a
process that has just opened it); it is tiny and harmless.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import os
import sys
from pathlib import Path

from webcrawl.storage.errors import StoreError, StoreLockedError, StoreReadOnlyError

__all__ = ["WriterLock", "lock_path"]

_SUFFIX = "-writer"


def lock_path(db: Path) -> Path:
    """The sidecar lock file of database ``db``."""
    return db.with_name(db.name + _SUFFIX)


class WriterLock:
    """The exclusive writer lock of one database; :meth:`acquire` never blocks."""

    def __init__(self, db: str | Path) -> None:
        self.db = Path(db)
        self.path = lock_path(self.db)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise :class:`StoreLockedError` naming the holder."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            folder = self.path.absolute().parent
            if exc.errno in (13, 30):  # EACCES, EROFS
                raise StoreReadOnlyError(
                    f"cannot write {self.db}: folder {folder} is not writable") from exc
            raise StoreError(f"cannot create the writer lock {self.path}: "
                             f"{exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            raise StoreLockedError(
                f"{self.db} is being written by another process ({holder}); "
                "wait for it to end or stop it, then try again") from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {self.path}: {exc.strerror or exc}") from exc
        self._fd = fd
        _write(fd, _describe_self())

    @classmethod
    def probe(cls, db: str | Path) -> None:
        """Raise :class:`StoreLockedError` now if a writer holds ``db`` (an early check:
        a command refuses before its slow imports; the real lock is taken at open)."""
        if not lock_path(Path(db)).exists():
            return
        lock = cls(db)
        lock.acquire()
        lock.release()

    def release(self) -> None:
        """Drop the lock (idempotent); the file keeps the last holder's description."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _describe_self() -> str:
    started = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path("python")
    prog = script.name
    cli = prog == "webcrawl" or (prog == "__main__.py" and script.parent.name == "cli")
    command = f"webcrawl {sys.argv[1]}" if cli and len(sys.argv) > 1 else prog
    return f"pid {os.getpid()}, '{command}', since {started}"


def _write(fd: int, text: str) -> None:
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode("utf-8", "replace"), 0)
    except OSError:
        pass  # the description is a courtesy; the lock is what matters


def _read(fd: int) -> str:
    try:
        text = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    # a holder that has just locked may not have written its line yet
    return "".join(c for c in text if c.isprintable()) or "a process starting up"
