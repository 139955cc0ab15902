"""SQLite helpers shared by the writer and the reader (internal).

One place for: the schema version, the connection URI, the check that a file is a
crawl database of our version (:func:`check_crawl_db`: its tables, their columns and the
JSON of its meta values, what every open checks), the int32 id-array codec of the
``links`` table, and the mapping of ``sqlite3`` errors onto :mod:`webcrawl.storage.errors`.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import sys
from array import array
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import TypeVar

from webcrawl.storage.errors import (
    SchemaVersionError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)

#: Version of ``schema.sql``; stored in ``meta.schema_version``.
SCHEMA_VERSION = 8
#: Older versions read as they are and upgraded by the writer (:func:`upgrade_script`:
#: ``schema.sql`` adds the tables they lack, ``ALTER TABLE`` the columns).
MIGRATABLE = frozenset({1, 2, 3, 4, 5, 6, 7})
#: Columns added to existing tables since version ``v``: ``(v, table, column, type)``;
#: a file older than ``v`` gets them by ``ALTER TABLE ... ADD COLUMN``.
ADDED_COLUMNS: tuple[tuple[int, str, str, str], ...] = (
    (3, "links", "fetch_id", "INTEGER"),
    (5, "urls", "duplicate_of", "INTEGER"),
    (8, "fetches", "sketch", "BLOB"),
    (8, "urls", "near_of", "INTEGER"),
    (8, "urls", "near_resemblance", "REAL"),
)
#: Views whose definition changed in version ``v``: ``(v, view)``; an older file's
#: copy is dropped and made again from ``schema.sql``.
CHANGED_VIEWS: tuple[tuple[int, str], ...] = ((6, "edges"), (7, "edges"))
#: Tables added since version ``v``: ``(v, table)``; a file older than ``v`` lacks them
#: (readers read them as empty, the writer creates them).  The others every file has.
ADDED_TABLES: tuple[tuple[int, str], ...] = (
    (2, "link_cuts"), (2, "url_sources"), (3, "link_versions"), (6, "link_blocks"),
    (7, "id_ranges"))
#: Tables of ``schema.sql`` that hold no crawl data (the edges view's counter): never
#: required.
_HELPER_TABLES = frozenset({"link_positions"})
#: Meta values that are JSON: the type each must decode to, and its JSON name.
JSON_META: dict[str, tuple[type, str]] = {"seeds": (list, "list"), "settings": (dict, "object")}

# Primary result codes (https://sqlite.org/rescode.html); extended codes keep them
# in the low byte.
_SQLITE_READONLY = 8
_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6
_SQLITE_FULL = 13
_SQLITE_CANTOPEN = 14
_SQLITE_NOTADB = 26
_SQLITE_IOERR = 10
_SQLITE_CORRUPT = 11
# Extended code of a failed write(2): EFBIG (file size limit), EIO, ...; SQLite itself
# reports ENOSPC as SQLITE_FULL.
_SQLITE_IOERR_WRITE = _SQLITE_IOERR | (3 << 8)

_LITTLE_ENDIAN = sys.byteorder == "little"


def schema_sql() -> str:
    """The text of ``schema.sql``."""
    # The installed package's name (webcrawl.storage), not the repository folder's: a
    # crawl started outside the repository must find it too.
    package = resources.files(__package__ or "webcrawl.storage")
    return package.joinpath("schema.sql").read_text(encoding="utf-8")


def sqlite_uri(path: Path, mode: str) -> str:
    """A ``file:`` URI for ``path`` opened with ``mode`` (``ro``, ``rw``, ``rwc``)."""
    return f"{path.absolute().as_uri()}?mode={mode}"


_T = TypeVar("_T")


def read_only(path: Path, read: Callable[[sqlite3.Connection], _T]) -> _T:
    """``read(conn)`` on a read-only connection to ``path``, closed after; SQLite's
    errors mapped onto the storage errors (:func:`map_error`)."""
    try:
        conn = sqlite3.connect(sqlite_uri(path, "ro"), uri=True)
    except sqlite3.Error as exc:
        raise map_error(exc, path, "opening") from exc
    try:
        return read(conn)
    except sqlite3.Error as exc:
        raise map_error(exc, path, "reading") from exc
    finally:
        conn.close()


def encode_ids(ids: Iterable[int]) -> bytes:
    """Little-endian int32 array of ``ids`` (the ``links.dst`` layout)."""
    arr = array("i", ids)
    if not _LITTLE_ENDIAN:  # pragma: no cover - no big-endian CI
        arr.byteswap()
    return arr.tobytes()


def decode_ids(blob: bytes | None) -> array[int]:
    """Inverse of :func:`encode_ids` (``None`` gives an empty array); ValueError if
    ``blob`` is not an int32 array (a damaged file)."""
    arr = array("i")
    if blob:
        if not isinstance(blob, bytes) or len(blob) % arr.itemsize:
            raise ValueError("not an int32 array")
        arr.frombytes(blob)
        if not _LITTLE_ENDIAN:  # pragma: no cover
            arr.byteswap()
    return arr


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's *busy* or *locked*: another connection's lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return "database is locked" in str(exc)


def map_error(exc: BaseException, path: Path, action: str) -> StoreError:
    """Convert a ``sqlite3`` error into the matching :class:`StoreError` subclass."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary == _SQLITE_FULL or "database or disk is full" in text:
        return StoreFullError(f"disk full while {action} {path}; committed data is intact")
    if primary == _SQLITE_READONLY or "readonly" in text:
        return StoreReadOnlyError(f"cannot write {path}: the database or its folder is read-only")
    if primary == _SQLITE_CANTOPEN:
        folder = path.absolute().parent
        if not folder.is_dir():
            return StoreError(f"cannot open {path}: folder {folder} does not exist")
        if not os.access(folder, os.W_OK):
            return StoreReadOnlyError(f"cannot open {path}: folder {folder} is not writable")
        return StoreError(f"cannot open {path}: {text}")
    if is_busy(exc):
        return StoreBusyError(f"{path} is locked by another program: it holds an open write "
                              "transaction on it (a sqlite3 shell or a notebook?); end that "
                              "transaction, then try again")
    if primary == _SQLITE_NOTADB:
        return StoreError(f"{path} is not a crawl database ({text})")
    if primary == _SQLITE_CORRUPT:
        return StoreCorruptError(f"{path} is damaged ({text})")
    if code == _SQLITE_IOERR_WRITE:
        return StoreError(f"write error while {action} {path} (disk full, file size limit "
                          "or I/O error); committed data is intact")
    if primary == _SQLITE_IOERR:
        return StoreError(f"I/O error while {action} {path}: {text}")
    return StoreError(f"error while {action} {path}: {text}")


def check_db_path(path: Path) -> None:
    """Refuse a database path that is a directory, a device or in a missing folder."""
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a crawl database file")
    if path.exists() and not path.is_file():
        raise StoreError(f"{path} is a device or special file, not a crawl database file")
    folder = path.absolute().parent
    if not folder.is_dir():
        raise StoreError(f"cannot open {path}: folder {folder} does not exist")


def check_crawl_db(conn: sqlite3.Connection, path: Path) -> bool:
    """Check that ``conn`` holds a crawl database of our schema version.

    Returns False for an empty database (no tables: a fresh file), True for a crawl
    database of :data:`SCHEMA_VERSION`; raises :class:`StoreError` for a foreign
    SQLite file and :class:`SchemaVersionError` for another version.
    """
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return False
    if "meta" not in tables:
        raise StoreError(f"{path} is an SQLite file but not a webcrawl crawl database")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        raise StoreError(f"{path} has no schema_version: not a webcrawl crawl database")
    if str(row[0]) != str(SCHEMA_VERSION) and str(row[0]) not in {str(v) for v in MIGRATABLE}:
        raise SchemaVersionError(
            f"{path} was written with schema version {row[0]}; "
            f"this webcrawl reads version {SCHEMA_VERSION}"
        )
    _check_tables(conn, path, int(row[0]), tables)
    _check_meta(conn, path)
    return True


@functools.cache
def schema_columns() -> dict[str, frozenset[str]]:
    """The columns of every table of ``schema.sql`` (read from an in-memory copy)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(schema_sql())
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        # Table names are our schema's own, never user data.
        return {t: frozenset(r[1] for r in conn.execute(f"PRAGMA table_info({t})"))
                for t in names}
    finally:
        conn.close()


def _check_tables(conn: sqlite3.Connection, path: Path, version: int,
                  tables: set[str]) -> None:
    """Every table (and column) a file of ``version`` has, or :class:`StoreCorruptError`."""
    added = dict((t, v) for v, t in ADDED_TABLES)
    new_columns = {(t, c) for v, t, c, _ in ADDED_COLUMNS if version < v}
    wanted = {t: cols for t, cols in schema_columns().items()
              if t not in _HELPER_TABLES and version >= added.get(t, 0)}
    missing = sorted(wanted.keys() - tables)
    if missing:
        raise StoreCorruptError(f"{path} is damaged or not a crawl database: it lacks the "
                                f"table{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    for table, columns in sorted(wanted.items()):
        # Table names come from schema.sql, never from the file.
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        lacking = sorted(c for c in columns - have if (table, c) not in new_columns)
        if lacking:
            raise StoreCorruptError(f"{path} is damaged: its table {table} lacks the "
                                    f"column{'s' if len(lacking) > 1 else ''} "
                                    f"{', '.join(lacking)}")


def _check_meta(conn: sqlite3.Connection, path: Path) -> None:
    """The JSON meta values decode to what they must be, or :class:`StoreCorruptError`."""
    for key, (kind, name) in JSON_META.items():
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            continue
        try:
            ok = isinstance(json.loads(row[0]), kind)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise StoreCorruptError(f"{path} is damaged: its meta value {key!r} is not a "
                                    f"JSON {name}")


def upgrade_script(version: int, columns: dict[str, set[str]]) -> str:
    """SQL that upgrades a file of ``version`` (in :data:`MIGRATABLE`) whose tables have
    ``columns`` to :data:`SCHEMA_VERSION`, without a transaction: the columns added since
    (those it lacks), the views changed since (dropped, to be made again), then
    ``schema.sql`` (its tables and views are ``IF NOT EXISTS``), then the new version
    number."""
    steps = [f"DROP VIEW IF EXISTS {view};" for since, view in CHANGED_VIEWS if version < since]
    steps += [f"ALTER TABLE {table} ADD COLUMN {column} {kind};"
             for since, table, column, kind in ADDED_COLUMNS
             if version < since and column not in columns.get(table, set())]
    steps.append(schema_sql())
    steps.append(f"UPDATE meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema_version';")
    return "\n".join(steps)
