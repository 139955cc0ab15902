"""Making the writer's connection ready (internal): pragmas, a new file's schema, an old
file's upgrade, the pending records of a stopped writer.

:func:`existing_crawl` checks the file with a read-only connection first (a foreign or
damaged file is refused before anything is written); :func:`prepare` then sets the
writer connection up (WAL, the busy timeout of :mod:`webcrawl.storage._busy`), creates
the schema of a new file in one transaction (a file has the whole schema and its
version, or nothing), or, for an existing file, proves it writable at open (not at the
first commit), upgrades an older version in one transaction and applies its pending
records (:mod:`webcrawl.storage._pending`).
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from pathlib import Path

from webcrawl.storage import _pending, _testhooks
from webcrawl.storage._busy import NOTICE_MS, begin_immediate
from webcrawl.storage._sqlite import (
    ADDED_COLUMNS,
    MIGRATABLE,
    SCHEMA_VERSION,
    check_crawl_db,
    map_error,
    schema_sql,
    sqlite_uri,
    upgrade_script,
)
from webcrawl.storage.errors import StoreCorruptError

__all__ = ["CACHE_KIB", "existing_crawl", "prepare"]

#: Page cache of the writer connection (KiB); keeps the ``urls.url`` index hot so the
#: insert rate does not fall as the file grows.
CACHE_KIB = 64 * 1024


def existing_crawl(path: Path) -> bool:
    """True if ``path`` holds a crawl database of our version (checks the version, the
    schema and, with SQLite's ``quick_check``, every page of the file: a writer must not
    add to a damaged file)."""
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(sqlite_uri(path, "ro"), uri=True)
    except sqlite3.Error as exc:
        raise map_error(exc, path, "opening") from exc
    try:
        if not check_crawl_db(conn, path):
            return False
        # One pass over the file, what resuming reads anyway (see the storage results).
        verdict = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if verdict != "ok":
            detail = "; ".join(line for line in str(verdict).splitlines()
                               if not line.startswith("***"))
            raise StoreCorruptError(f"{path} is damaged ({detail})")
        return True
    except sqlite3.Error as exc:
        raise map_error(exc, path, "opening") from exc
    finally:
        conn.close()


async def prepare(db: sqlite3.Connection, path: Path, existing: bool,
                  busy_wait: float) -> None:
    """Set the connection up, create or upgrade the schema, prove the file writable and
    apply its pending records."""
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    db.execute(f"PRAGMA busy_timeout = {min(NOTICE_MS, int(busy_wait * 1000))}")
    limit = _testhooks.max_page_count()  # test-only: a full disk without root
    if limit is not None:
        db.execute(f"PRAGMA max_page_count = {int(limit)}")
    if not existing:
        _create(db)
        return
    # Take (and release) the write lock now: a read-only file or a second writer fails
    # here, at open, not at the first commit.
    await begin_immediate(db, path, busy_wait)
    try:
        db.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
    finally:
        db.execute("ROLLBACK")
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is not None and str(row[0]) in {str(v) for v in MIGRATABLE}:
        _upgrade(db, int(row[0]))
    await _pending.apply(db, path, busy_wait)


def _create(db: sqlite3.Connection) -> None:
    created = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    # One script, one transaction: a file has the whole schema and its version, or
    # nothing.  Both literals are ours (an int and an ISO timestamp), never user data.
    db.executescript(
        f"BEGIN IMMEDIATE;\n{schema_sql()}\n"
        f"INSERT INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}'),"
        f" ('created_at', '{created}');\nCOMMIT;"
    )


def _upgrade(db: sqlite3.Connection, version: int) -> None:
    """Upgrade a file of ``version`` in one transaction (see schema.sql, upgrade_script)."""
    columns: dict[str, set[str]] = {}
    for table in {t for _, t, _, _ in ADDED_COLUMNS}:
        info = db.execute(f"PRAGMA table_info({table})").fetchall()
        columns[table] = {r[1] for r in info}
    db.executescript(f"BEGIN IMMEDIATE;\n{upgrade_script(version, columns)}\nCOMMIT;")
