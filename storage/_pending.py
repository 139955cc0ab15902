"""Records a stopped writer could not commit, kept beside the database (internal).

When another program's write lock outlasts the writer's wait
(:class:`~webcrawl.storage.errors.StoreBusyError`), the store closes by writing what it
could not commit, its batches in order, to ``<db>-pending`` (:func:`save`: JSON, written
whole or not at all by :func:`webcrawl.storage.output.open_output`).  The next writer of
the database applies them when it opens it (:func:`apply`), before anything else, in one
transaction that also sets the meta key ``pending_applied`` to the file's token, and
then removes the file: a writer killed between that commit and the removal finds its
token applied and only removes the file.  So nothing fetched is lost, and a resumed crawl
fetches none of it again.

A pending file names the state of the database it continues (its ``created_at`` and its
last fetch id): one left beside another database at the same path, or beside the same
database written since, is refused, never applied to it.  Readers do not
apply it; :func:`pending_records` lets them say it is there.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from pathlib import Path
from typing import Any

from webcrawl.storage._batch import Batch, write_batch
from webcrawl.storage._busy import begin_immediate
from webcrawl.storage.errors import StoreCorruptError, StoreError
from webcrawl.storage.output import open_output

__all__ = ["SUFFIX", "apply", "pending_path", "pending_records", "save"]

SUFFIX = "-pending"
_FORMAT = "webcrawl pending records 1"
_APPLIED = "pending_applied"


def pending_path(db: Path) -> Path:
    return db.with_name(db.name + SUFFIX)


def identity(db: sqlite3.Connection) -> dict[str, Any]:
    """The state of the database a pending file continues (see the module docstring)."""
    created = db.execute("SELECT value FROM meta WHERE key = 'created_at'").fetchone()
    last = db.execute("SELECT ifnull(max(id), 0) FROM fetches").fetchone()
    return {"created_at": None if created is None else str(created[0]),
            "last_fetch_id": 0 if last is None else int(last[0])}


def save(db: Path, state: dict[str, Any], batches: list[Batch]) -> int:
    """Write ``batches``, which continue the database ``db`` in ``state``
    (:func:`identity`), to its pending file; return how many records they hold."""
    records = sum(len(b) for b in batches)
    doc = {"format": _FORMAT, "token": secrets.token_hex(16), "continues": state,
           "records": records, "batches": [b.to_json() for b in batches]}
    with open_output(pending_path(db)) as out:
        json.dump(doc, out)
    return records


def pending_records(db: Path) -> int:
    """How many records wait in ``db``'s pending file (0: none, or it cannot be read)."""
    try:
        doc = json.loads(pending_path(db).read_text(encoding="utf-8"))
        return int(doc["records"])
    except (OSError, ValueError, TypeError, KeyError):
        return 0


async def apply(db: sqlite3.Connection, path: Path, busy_wait: float) -> int:
    """Write ``path``'s pending records into the open writer connection ``db`` and
    remove the file; return how many there were (0: no file)."""
    pending = pending_path(path)
    if not pending.exists():
        return 0
    doc = _load(pending)
    applied = db.execute("SELECT value FROM meta WHERE key = ?", (_APPLIED,)).fetchone()
    if applied is not None and applied[0] == doc["token"]:
        pending.unlink()  # applied by a writer killed before it removed the file
        return 0
    if identity(db) != doc.get("continues"):
        raise StoreError(f"{pending} holds records that do not continue {path} as it is "
                         "now (another database, or written since); move it away to go on")
    try:
        batches = [Batch.from_json(b) for b in doc["batches"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreCorruptError(f"{pending} is damaged ({exc}); move it away to go on "
                                "(its records are then lost)") from None
    await begin_immediate(db, path, busy_wait)
    try:
        for batch in batches:
            write_batch(db, batch)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                   (_APPLIED, doc["token"]))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    pending.unlink()
    return int(doc.get("records", 0))


def _load(pending: Path) -> dict[str, Any]:
    try:
        doc = json.loads(pending.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreCorruptError(f"{pending} cannot be read ({exc}); move it away to go on "
                                "(its records are then lost)") from None
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT or "token" not in doc:
        raise StoreCorruptError(f"{pending} is not a webcrawl pending-records file; move it "
                                "away to go on")
    return doc
