"""The records of one commit of the writer, and how they are written (internal).

:class:`Batch` holds what :class:`~webcrawl.storage.store.CrawlStore` enqueued between two
commits; :func:`write_batch` writes it inside the caller's transaction, in a fixed
order (meta, hosts, host updates, URLs, fetches, links, outcomes, duplicates, near
copies), so an
outcome may be set for a URL added in the same batch; for the same key, the last
``set_meta``/``update_host``/``set_outcome``/``set_duplicate`` wins.  A batch also
travels as JSON (:meth:`Batch.to_json`, :meth:`Batch.from_json`): the pending-records
file of :mod:`webcrawl.storage._pending` keeps batches a stopped writer could not commit.
"""

from __future__ import annotations

import base64
import sqlite3
from dataclasses import dataclass
from typing import Any

from webcrawl.storage import _testhooks
from webcrawl.storage.records import FetchRecord

__all__ = ["HOST_FIELDS", "Batch", "fetch_row", "write_batch"]

#: The ``hosts`` columns a host update may set (their names are formatted into SQL).
HOST_FIELDS = frozenset({"name", "robots_status", "robots_body", "robots_fetched_at",
                         "crawl_delay"})

_INSERT_META = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"
_INSERT_HOST = ("INSERT INTO hosts (id, name, robots_status, robots_body, robots_fetched_at,"
                " crawl_delay) VALUES (?, ?, ?, ?, ?, ?)")
_INSERT_URL = ("INSERT INTO urls (id, url, host_id, depth, discovered_seq, outcome, seq)"
               " VALUES (?, ?, ?, ?, ?, ?, ?)")
_INSERT_FETCH = (
    "INSERT INTO fetches (id, url_id, seq, started_at, ended_at, outcome, status,"
    " content_type, size, digest, etag, last_modified, error, attempt, kind, strategy,"
    " priority, rank, changed, sketch)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# A page's links, with the fetch that gave them (?4: the page's fetch enqueued with
# them; else its newest fetch row).  When the page already has a different link set,
# the old one moves to link_versions first (link history); the same links leave the
# row untouched.
_LINK_FETCH = "ifnull(?4, (SELECT max(id) FROM fetches WHERE url_id = ?1))"
_KEEP_LINK_VERSION = (
    "INSERT INTO link_versions (src, fetch_id, superseded_by, dst, nofollow)"
    f" SELECT src, fetch_id, {_LINK_FETCH}, dst, nofollow"
    " FROM links WHERE src = ?1 AND (dst != ?2 OR nofollow IS NOT ?3)")
_INSERT_LINKS = (
    "INSERT INTO links (src, dst, nofollow, fetch_id)"
    f" VALUES (?1, ?2, ?3, {_LINK_FETCH})"
    " ON CONFLICT (src) DO UPDATE SET dst = excluded.dst, nofollow = excluded.nofollow,"
    " fetch_id = excluded.fetch_id"
    " WHERE links.dst != excluded.dst OR links.nofollow IS NOT excluded.nofollow")
_SET_OUTCOME = "UPDATE urls SET outcome = ?, seq = ? WHERE id = ?"
_INSERT_LINK_CUT = "INSERT OR REPLACE INTO link_cuts (src, kept, dropped) VALUES (?, ?, ?)"
_INSERT_URL_SOURCE = "INSERT OR IGNORE INTO url_sources (url_id, source, via) VALUES (?, ?, ?)"
_SET_DUPLICATE = "UPDATE urls SET duplicate_of = ? WHERE id = ?"
_SET_NEAR = "UPDATE urls SET near_of = ?, near_resemblance = ? WHERE id = ?"

LinkRow = tuple[int, bytes, bytes | None, int | None]


@dataclass(slots=True)
class Batch:
    """Records enqueued since the last commit."""

    meta: dict[str, str]
    hosts: list[tuple[Any, ...]]
    host_updates: dict[int, dict[str, Any]]
    urls: list[tuple[Any, ...]]
    fetches: list[tuple[Any, ...]]
    links: list[LinkRow]
    outcomes: dict[int, tuple[str, int | None]]
    link_cuts: list[tuple[int, int, int]]
    url_sources: list[tuple[int, str, str]]
    last_fetch: dict[int, int]        # url id -> id of its last fetch in this batch
    duplicates: dict[int, int | None]  # url id -> the page it duplicates (None: none)
    near: dict[int, tuple[int | None, float | None]]  # url id -> (leader, resemblance)

    @classmethod
    def empty(cls) -> Batch:
        return cls({}, [], {}, [], [], [], {}, [], [], {}, {}, {})

    def to_json(self) -> dict[str, Any]:
        """The batch as JSON values (BLOBs in base64; ``last_fetch``, used only while
        enqueueing, left out)."""
        return {
            "meta": self.meta, "hosts": self.hosts,
            "host_updates": list(self.host_updates.items()), "urls": self.urls,
            "fetches": [(*row[:-1], _b64(row[-1])) for row in self.fetches],
            "links": [(src, _b64(dst), _b64(nofollow), fetch)
                      for src, dst, nofollow, fetch in self.links],
            "outcomes": [(i, o, s) for i, (o, s) in self.outcomes.items()],
            "link_cuts": self.link_cuts, "url_sources": self.url_sources,
            "duplicates": list(self.duplicates.items()),
            "near": [(i, leader, r) for i, (leader, r) in self.near.items()],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Batch:
        """Inverse of :meth:`to_json` (KeyError, TypeError or ValueError if damaged)."""
        links = [(int(src), _unb64(dst) or b"", _unb64(nofollow),
                  None if fetch is None else int(fetch))
                 for src, dst, nofollow, fetch in doc["links"]]
        return cls(
            meta=dict(doc["meta"]), hosts=[tuple(r) for r in doc["hosts"]],
            host_updates={int(k): _host_fields(v) for k, v in doc["host_updates"]},
            urls=[tuple(r) for r in doc["urls"]],
            fetches=[_fetch_from_json(r) for r in doc["fetches"]],
            links=links, outcomes={int(i): (str(o), s) for i, o, s in doc["outcomes"]},
            link_cuts=[(int(a), int(b), int(c)) for a, b, c in doc["link_cuts"]],
            url_sources=[(int(a), str(b), str(c)) for a, b, c in doc["url_sources"]],
            last_fetch={}, duplicates={int(k): v for k, v in doc["duplicates"]},
            near={int(i): (leader, r) for i, leader, r in doc.get("near", ())})

    def __len__(self) -> int:
        """The number of records (rows and updates) in the batch."""
        return (len(self.meta) + len(self.hosts) + len(self.host_updates) + len(self.urls)
                + len(self.fetches) + len(self.links) + len(self.outcomes)
                + len(self.link_cuts) + len(self.url_sources) + len(self.duplicates)
                + len(self.near))


def fetch_row(r: FetchRecord) -> tuple[Any, ...]:
    """The ``fetches`` columns of ``r`` after its id."""
    return (r.url_id, r.seq, r.started_at, r.ended_at, str(r.outcome), r.status,
            r.content_type, r.size, r.digest, r.etag, r.last_modified, r.error, r.attempt,
            str(r.kind), r.strategy, r.priority, r.rank,
            None if r.changed is None else int(r.changed), r.sketch)


def write_batch(db: sqlite3.Connection, b: Batch) -> None:
    """Write ``b`` inside the transaction the caller opened (and commits)."""
    if b.meta:
        db.executemany(_INSERT_META, list(b.meta.items()))
    if b.hosts:
        db.executemany(_INSERT_HOST, b.hosts)
    for host_id, fields in b.host_updates.items():
        # Column names come from HOST_FIELDS (checked), values are parameters.
        cols = ", ".join(f"{name} = ?" for name in fields)
        db.execute(f"UPDATE hosts SET {cols} WHERE id = ?", [*fields.values(), host_id])
    if b.urls:
        db.executemany(_INSERT_URL, b.urls)
    _testhooks.reached("store_write")  # test-only: lets a kill land mid-transaction
    if b.fetches:
        db.executemany(_INSERT_FETCH, b.fetches)
    for links in _rounds(b.links):
        db.executemany(_KEEP_LINK_VERSION, links)
        db.executemany(_INSERT_LINKS, links)
    if b.link_cuts:
        db.executemany(_INSERT_LINK_CUT, b.link_cuts)
    if b.url_sources:
        db.executemany(_INSERT_URL_SOURCE, b.url_sources)
    if b.outcomes:
        db.executemany(_SET_OUTCOME, [(o, s, i) for i, (o, s) in b.outcomes.items()])
    if b.duplicates:
        db.executemany(_SET_DUPLICATE, [(o, i) for i, o in b.duplicates.items()])
    if b.near:
        db.executemany(_SET_NEAR, [(o, r, i) for i, (o, r) in b.near.items()])


def _rounds(rows: list[LinkRow]) -> list[list[LinkRow]]:
    """Split link rows so that no page occurs twice in one round (rows in order): each
    round's versions are kept before the next round replaces them."""
    rounds: list[list[LinkRow]] = []
    seen: dict[int, int] = {}
    for row in rows:
        k = seen.get(row[0], 0)
        seen[row[0]] = k + 1
        if k == len(rounds):
            rounds.append([])
        rounds[k].append(row)
    return rounds


def _host_fields(fields: dict[str, Any]) -> dict[str, Any]:
    unknown = set(fields) - HOST_FIELDS
    if unknown:
        raise ValueError(f"unknown host fields {sorted(unknown)}")
    return dict(fields)


def _fetch_from_json(row: list[Any]) -> tuple[Any, ...]:
    """A ``fetches`` row back from JSON: its sketch (the last column) from base64; a row
    kept before schema version 8 has no sketch."""
    if len(row) < len(_INSERT_FETCH.split("VALUES")[1].split(",")):
        return (*row, None)
    return (*row[:-1], _unb64(row[-1]))


def _b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text, validate=True)
