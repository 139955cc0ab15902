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

A writer that ends (a clean exit, an error, Ctrl-C) removes the sidecar file: a process
that opened it meanwhile finds it unlinked once it holds it and retries on a new file
(:meth:`WriterLock.release`).  A killed writer's stays, tiny and harmless, unlocked by
the kernel: the next writer takes it over.

A new database written whole (``import edges``, ``import warc``) goes through
:func:`new_database`: under the writer lock it is built in a temporary file beside the
target (``.NAME.importing``, same folder so that the final rename is atomic) and renamed
into place only when complete, so no reader ever sees half of it.  A failure removes
the temporary file and its SQLite sidecars; a killed writer's are removed by a small
guardian process that outlives it (it waits on a pipe only the writer holds, then takes
the writer lock, so it never touches a later writer's files); the next writer of the
same path also clears any that remain.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from webcrawl.storage import _testhooks
from webcrawl.storage._sqlite import check_db_path
from webcrawl.storage.errors import StoreError, StoreLockedError, StoreReadOnlyError
from webcrawl.storage.output import sync_file

__all__ = ["WriterLock", "lock_path", "new_database"]

_SUFFIX = "-writer"
#: SQLite's files beside a database (its own writer lock's sidecar included).
_SIDECARS = ("-wal", "-shm", "-journal", _SUFFIX)


def lock_path(db: Path) -> Path:
    """The sidecar lock file of database ``db``."""
    if not db.name:  # '/', '.' (also what Path('') reads as): a folder, never a file
        raise StoreError(f"{db} is a directory, not a crawl database file")
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
        while self._fd is None:
            self._try_acquire()

    def _try_acquire(self) -> None:
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
        if not _still_linked(fd, self.path):
            os.close(fd)  # removed by the holder we waited for: lock the new file
            return
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
        lock.release(remove=True)  # a killed writer's file: nobody holds it

    def release(self, *, remove: bool = False) -> None:
        """Drop the lock (idempotent); the file keeps the last holder's description.

        ``remove``: delete the lock file first (the writer ends); a process that opened
        it meanwhile sees it unlinked once it holds it, and retries on a new file.
        """
        fd, self._fd = self._fd, None
        if fd is not None:
            if remove:
                self.path.unlink(missing_ok=True)
            os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _temp_path(db: Path) -> Path:
    """Where a new database ``db`` is written before its rename to ``db``."""
    return db.with_name(f".{db.name}.importing")


def _temp_files(db: Path) -> list[Path]:
    temp = _temp_path(db)
    return [temp, *(temp.with_name(temp.name + s) for s in _SIDECARS)]


def _remove(paths: list[Path]) -> None:
    for p in paths:
        p.unlink(missing_ok=True)


# Run by the guardian: wait until the writer's end of the pipe closes; unless it said
# "done", take the writer lock (blocking: never beside a later writer) and remove the
# temporary files, and the lock file if no database is there.  Silent whatever happens.
_GUARDIAN = """\
import fcntl, os, sys
db, lock, *temp = sys.argv[1:]
try:
    if sys.stdin.buffer.read() != b"done":
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.path.samestat(os.fstat(fd), os.stat(lock)):  # else a later writer's turn
            for p in temp:
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass
            if not os.path.exists(db):
                os.unlink(lock)
except BaseException:
    pass
"""


@contextlib.contextmanager
def new_database(db: str | Path) -> Iterator[Path]:
    """Write a new database ``db`` whole or not at all (see the module docstring).

    Yields the temporary path to build the database in; when the block ends without an
    exception the file is synced and renamed to ``db``.  The writer lock of ``db`` is
    held throughout.

    Raises
    ------
    StoreError
        ``db`` already exists (and is not empty), is a directory or a device, or its
        folder does not exist.
    StoreLockedError
        Another process is writing ``db``.
    """
    db = Path(db)
    check_db_path(db)
    _refuse_existing(db)
    lock = WriterLock(db)
    lock.acquire()
    try:
        _refuse_existing(db)
        leftovers = _temp_files(db)
        _remove(leftovers)  # of a killed writer whose guardian could not run
        guardian = subprocess.Popen(
            [sys.executable, "-S", "-c", _GUARDIAN, str(db), str(lock.path),
             *map(str, leftovers)],
            # Its own session: a Ctrl-C to the writer's process group does not stop it.
            # It keeps the writer's stderr (it writes nothing) so that whoever reads the
            # writer's stderr to its end also waits for the clean-up after a kill.
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True)
        assert guardian.stdin is not None
        try:
            yield leftovers[0]
            _testhooks.kill_at("new_database")  # test-only: a kill -9 before the rename
            sync_file(leftovers[0])
            os.replace(leftovers[0], db)
        finally:
            _remove(leftovers)
            with contextlib.suppress(OSError):
                guardian.stdin.write(b"done")
                guardian.stdin.close()
            guardian.wait()
    finally:
        lock.release(remove=True)


def _refuse_existing(db: Path) -> None:
    if db.exists() and db.stat().st_size > 0:
        raise StoreError(f"{db} already exists; import into a new database file")


def _still_linked(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


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
