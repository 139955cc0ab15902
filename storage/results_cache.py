"""Arrays computed from a crawl database, kept beside it for the next command.

Each ``webcrawl`` command is its own process: ``analyze pagerank`` and then
``compare`` on the same file computed the same PageRank twice (about 100
CPU-seconds at 300M links).  A result is kept in ``<db>-cache/NAME-KEY.npz`` with the
state of the database it was computed from, and is served only to a reader that
finds the file in that same state and asks with the same parameters.

The contract (what makes a stale result impossible):

* **The file's state** (:func:`database_state`) is the inode, size, modification and
  change times (nanoseconds) of the database and of its ``-wal`` file.  Every commit
  changes the one or the other (the WAL grows, or a checkpoint writes the database);
  an import replaces the file (a new inode).  An empty ``-wal`` holds no commit and
  is left out (a reader may create one).  A state is only taken of a file that
  no writer holds (no ``<db>-writer`` sidecar: a crawl, resumed crawl or revisit
  running, or killed and not resumed) and that nothing wrote in the last
  :data:`QUIET_SECONDS`: a write after the state was taken then always moves the
  times (file times advance by clock ticks of a few milliseconds, so two writes in
  one tick would leave them equal).
* **A result is stored** only when the state taken before the computation read the
  database is still the state after it: a crawl that committed meanwhile leaves
  nothing behind.
* **A result is served** only when its stored state and parameters equal the
  caller's, the caller's state having been taken before its own read.
* **Parameters** are the caller's (graph kind, duplicate rule, damping, ...) plus the
  package version; they are written out in full in the file and compared in full,
  the hash in the name only spreads them over files.

Writes go to a temporary file renamed into place; a folder that cannot be written
(a read-only mount) simply keeps nothing.  Deleting ``<db>-cache/`` is always safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from webcrawl.storage._version import __version__
from webcrawl.storage.lock import lock_path

__all__ = ["QUIET_SECONDS", "DatabaseState", "cache_dir", "database_state", "load_result",
           "store_result"]

#: A database written less than this long ago gets no state (see the module docstring).
QUIET_SECONDS = 1.0


@dataclass(frozen=True)
class DatabaseState:
    """What a crawl database's files looked like (:func:`database_state`)."""

    files: tuple[tuple[str, int, int, int, int], ...]  # (suffix, inode, size, mtime, ctime)

    def to_list(self) -> list[list[Any]]:
        return [list(f) for f in self.files]


def cache_dir(db: str | Path) -> Path:
    """The folder beside database ``db`` that holds its kept results."""
    path = Path(db)
    return path.with_name(path.name + "-cache")


def database_state(db: str | Path, *, now: float | None = None,
                   settle: bool = False) -> DatabaseState | None:
    """The state of ``db``'s files, or None when a result must not be kept or served:
    a writer holds the database (its ``-writer`` sidecar exists), it was written less
    than :data:`QUIET_SECONDS` ago, or it cannot be read.

    ``settle``: a database written less than :data:`QUIET_SECONDS` ago is waited for
    (once, at most that long) instead, for a caller about to spend far longer on it:
    ``webcrawl import edges`` then ``analyze pagerank`` typed in a row, or a script.
    """
    state = _state(Path(db), now)
    if isinstance(state, float) and settle and now is None:
        time.sleep(min(QUIET_SECONDS, QUIET_SECONDS - state + 0.01))
        state = _state(Path(db), None)
    return state if isinstance(state, DatabaseState) else None


def _state(path: Path, now: float | None) -> DatabaseState | float | None:
    """:func:`database_state`, or the seconds since the last write if under
    :data:`QUIET_SECONDS`."""
    if lock_path(path).exists():
        return None
    files = []
    newest = 0
    for suffix in ("", "-wal"):
        try:
            st = os.stat(path.with_name(path.name + suffix))
        except FileNotFoundError:
            if not suffix:
                return None
            continue
        except OSError:
            return None
        if suffix and st.st_size == 0:
            continue  # an empty WAL holds no commit (a reader may have just made it)
        files.append((suffix, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    clock = time.time() if now is None else now
    age = clock - newest / 1e9
    if age < QUIET_SECONDS:
        return max(age, 0.0)
    return DatabaseState(tuple(files))


def _entry(db: Path, name: str, params: dict[str, Any]) -> tuple[Path, str]:
    """The file of result ``name`` with ``params``, and the parameters as stored."""
    text = json.dumps({"name": name, "version": __version__, "params": params},
                      sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return cache_dir(db) / f"{name}-{digest}.npz", text


def load_result(db: str | Path, name: str, params: dict[str, Any],
                state: DatabaseState | None) -> dict[str, np.ndarray] | None:
    """The arrays kept for result ``name`` with ``params`` computed from ``db`` in
    ``state``; None when there are none (or ``state`` is None)."""
    if state is None:
        return None
    file, text = _entry(Path(db), name, params)
    try:
        with np.load(file, allow_pickle=False) as kept:
            if (str(kept["_params"]) != text
                    or json.loads(str(kept["_state"])) != state.to_list()):
                return None
            return {k: kept[k] for k in kept.files if not k.startswith("_")}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None


def store_result(db: str | Path, name: str, params: dict[str, Any],
                 state: DatabaseState | None, arrays: dict[str, np.ndarray]) -> bool:
    """Keep ``arrays`` as result ``name`` with ``params`` of ``db`` in ``state``, if the
    database is still in that state (nothing wrote it since ``state`` was taken).
    Returns whether it was kept."""
    if state is None or database_state(db) != state:
        return False
    file, text = _entry(Path(db), name, params)
    try:
        file.parent.mkdir(exist_ok=True)
        # Created as any file the user writes (the umask's mode, not mkstemp's 0600):
        # whoever may read the database may read what was computed from it.
        tmp = file.with_name(f".{file.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            payload: dict[str, Any] = {"_params": np.array(text),
                                       "_state": np.array(json.dumps(state.to_list())),
                                       **arrays}
            with os.fdopen(fd, "wb") as out:
                np.savez(out, **payload)
            os.replace(tmp, file)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True
