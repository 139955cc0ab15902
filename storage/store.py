"""The crawl database writer (aiosqlite, WAL); the schema is in ``schema.sql``.

The crawler owns id assignment (it keeps url -> id and host -> id maps in memory and
asks the store for the next free ids when it opens); the store is a write-behind
buffer: the ``add_*``/``set_*`` methods are synchronous and only enqueue (O(1), no
I/O), a background task commits the queue in one transaction per batch (every
``batch_size`` records or ``flush_interval`` seconds).  Everything enqueued between
two commits lands together, so the crawler enqueues all records of one fetch (fetch
row, new URLs, links, outcome) without an ``await`` in between and a crash never
splits them.

Within one batch the rows are written in a fixed order (meta, hosts, host updates,
URLs, fetches, links, outcomes, duplicates), so an outcome may be set for a URL added
in the same batch; for the same key, the last ``set_meta``/``update_host``/``set_outcome``/
``set_duplicate`` wins.

Back-pressure: a producer that can outrun the disk either awaits :meth:`CrawlStore.drain`
now and then (it commits inline when too much waits), or, when it must never block
(the crawl's dispatcher), checks :attr:`CrawlStore.backlogged` before producing more and
registers :meth:`CrawlStore.on_commit` to hear when the background writer caught up.

Errors: after a failed write (disk full, read-only, ...) the background writer stops,
everything committed before stays intact, and the next ``add_*``, ``set_*``,
``flush`` or ``aclose`` raises the :class:`~webcrawl.storage.errors.StoreError` (never
swallowed, never a hang).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
from webcrawl.storage import _testhooks
from webcrawl.storage._sqlite import (
    ADDED_COLUMNS,
    MIGRATABLE,
    SCHEMA_VERSION,
    check_crawl_db,
    check_db_path,
    decode_ids,
    encode_ids,
    map_error,
    schema_sql,
    sqlite_uri,
    upgrade_script,
)
from webcrawl.storage.errors import StoreError
from webcrawl.storage.lock import WriterLock
from webcrawl.storage.records import FetchRecord, Outcome

__all__ = ["CrawlStore", "HostRow", "ResumeState", "UrlRow"]

#: Page cache of the writer connection (KiB); keeps the ``urls.url`` index hot so the
#: insert rate does not fall as the file grows.
CACHE_KIB = 64 * 1024
#: How long a write waits for a lock held by another connection (a reader's
#: checkpoint), in milliseconds.
BUSY_TIMEOUT_MS = 5000
#: ``drain()`` default: commit inline when more than this many batches are queued.
DRAIN_BATCHES = 8

_HOST_FIELDS = frozenset({"name", "robots_status", "robots_body", "robots_fetched_at",
                          "crawl_delay"})
_OUTCOMES: dict[str | None, Outcome] = {o.value: o for o in Outcome}

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


@dataclass(slots=True)
class HostRow:
    id: int
    name: str                         # host[:port] as in webcrawl.crawler.urls.host_key
    robots_status: int | None = None  # HTTP status of /robots.txt; None: not fetched yet
    robots_body: str | None = None
    robots_fetched_at: float | None = None
    crawl_delay: float | None = None


@dataclass(slots=True)
class UrlRow:
    id: int
    url: str
    host_id: int
    depth: int
    discovered_seq: int               # crawl seq of the fetch that discovered it (-1: seed)
    outcome: Outcome | None = None    # None while in the frontier
    seq: int | None = None            # seq of its final fetch


@dataclass(slots=True)
class ResumeState:
    """Everything a crawl needs to continue where it stopped."""

    meta: dict[str, str]
    hosts: list[HostRow]
    urls: list[UrlRow]                # in id order
    next_seq: int                     # 1 + the highest seq recorded
    # Fetched pages' out-links in fetch (seq) order, for replaying strategy state:
    fetched_links: list[tuple[int, Sequence[int]]]
    #: pages recorded as cut at links_max_per_page (the link_cuts table)
    link_cuts: int = 0

    @property
    def next_url_id(self) -> int:
        """1 + the highest URL id (0 for an empty crawl)."""
        return self.urls[-1].id + 1 if self.urls else 0

    @property
    def next_host_id(self) -> int:
        """1 + the highest host id (0 for an empty crawl)."""
        return max((h.id for h in self.hosts), default=-1) + 1


@dataclass(slots=True)
class _Batch:
    """Records enqueued since the last commit."""

    meta: dict[str, str]
    hosts: list[tuple[Any, ...]]
    host_updates: dict[int, dict[str, Any]]
    urls: list[tuple[Any, ...]]
    fetches: list[tuple[Any, ...]]
    links: list[tuple[int, bytes, bytes | None, int | None]]
    outcomes: dict[int, tuple[str, int | None]]
    link_cuts: list[tuple[int, int, int]]
    url_sources: list[tuple[int, str, str]]
    last_fetch: dict[int, int]        # url id -> id of its last fetch in this batch
    duplicates: dict[int, int | None]  # url id -> the page it duplicates (None: none)
    near: dict[int, tuple[int | None, float | None]]  # url id -> (leader, resemblance)

    @classmethod
    def empty(cls) -> _Batch:
        return cls({}, [], {}, [], [], [], {}, [], [], {}, {}, {})


def _fetch_row(r: FetchRecord) -> tuple[Any, ...]:
    return (r.url_id, r.seq, r.started_at, r.ended_at, str(r.outcome), r.status,
            r.content_type, r.size, r.digest, r.etag, r.last_modified, r.error, r.attempt,
            str(r.kind), r.strategy, r.priority, r.rank,
            None if r.changed is None else int(r.changed), r.sketch)


class CrawlStore:
    """Async writer of one crawl database file (see ``schema.sql``)."""

    #: SQLite URI mode of the writer connection (tests set ``"ro"`` to simulate a
    #: read-only file when running as root, where chmod does not stop writes).
    _open_mode = "rwc"

    def __init__(self, db: aiosqlite.Connection, path: Path, batch_size: int,
                 flush_interval: float, writer: WriterLock) -> None:
        """Use :meth:`open`."""
        self._db = db
        self._writer_lock = writer
        self.path = path
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self._batch = _Batch.empty()
        self._next_fetch_id = 1           # fetches.id is ours to assign (see add_links)
        self._pending = 0
        self._error: StoreError | None = None
        self._closed = False
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._on_commit: list[Callable[[], None]] = []
        self._writer = asyncio.create_task(self._run(), name=f"CrawlStore writer {path}")

    # -- opening ------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        resume: bool = False,
        batch_size: int = 2000,
        flush_interval: float = 0.5,
    ) -> CrawlStore:
        """Open (create) the database. ``resume=False`` on a non-empty file is an error.

        Raises
        ------
        StoreError
            The file already holds a crawl and ``resume`` is false; ``resume`` is true
            and there is no file; the file is not a crawl database (a directory, a
            device, a foreign file).
        StoreLockedError
            Another process is writing the database (see :mod:`webcrawl.storage.lock`); the
            lock is held until :meth:`aclose` (or the process ends).
        SchemaVersionError
            The file was written by another schema version.
        StoreReadOnlyError, StoreFullError
            The file or folder cannot be written; the disk is full.
        """
        from webcrawl.storage.errors import ConfigError

        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        if not flush_interval > 0:
            raise ConfigError(f"flush_interval must be > 0, got {flush_interval}")
        path = Path(path)
        check_db_path(path)
        if resume and not path.exists():
            raise StoreError(f"nothing to resume: no crawl database at {path}")
        writer = WriterLock(path)
        writer.acquire()  # one writer per database for the store's whole life
        try:
            existing = await asyncio.to_thread(_existing_crawl, path)
            if existing and not resume:
                raise StoreError(
                    f"{path} already holds a crawl; pass --resume to continue it "
                    "or choose another --db path"
                )
            try:
                mode = _testhooks.open_mode(cls._open_mode)
                db = await aiosqlite.connect(sqlite_uri(path, mode), uri=True,
                                             isolation_level=None)
            except sqlite3.Error as exc:
                raise map_error(exc, path, "opening") from exc
            try:
                await _prepare(db, existing)
            except BaseException as exc:
                await db.close()
                if isinstance(exc, sqlite3.Error):
                    raise map_error(exc, path, "opening") from exc
                raise
            try:
                cursor = await db.execute("SELECT ifnull(max(id), 0) FROM fetches")
                row = await cursor.fetchone()
            except BaseException:
                await db.close()
                raise
        except BaseException:
            writer.release()
            raise
        store = cls(db, path, batch_size, flush_interval, writer)
        store._next_fetch_id = int(row[0]) + 1 if row else 1
        return store

    # -- resuming -----------------------------------------------------------------

    async def load_state(self) -> ResumeState:
        """Read everything committed (after flushing the queue) for resuming."""
        await self.flush()
        try:
            return await asyncio.to_thread(_load_state, self.path)
        except sqlite3.Error as exc:
            raise map_error(exc, self.path, "reading") from exc

    # -- enqueueing (synchronous, O(1)) -------------------------------------------

    def set_meta(self, key: str, value: str) -> None:
        self._check()
        self._batch.meta[key] = value
        self._added(1)

    def add_host(self, row: HostRow) -> None:
        self._check()
        self._batch.hosts.append((row.id, row.name, row.robots_status, row.robots_body,
                                  row.robots_fetched_at, row.crawl_delay))
        self._added(1)

    def update_host(self, host_id: int, **fields: Any) -> None:
        """Set some columns of a host (``robots_status``, ``crawl_delay``, ...)."""
        self._check()
        unknown = fields.keys() - _HOST_FIELDS
        if unknown:
            raise StoreError(f"update_host: unknown host fields {sorted(unknown)}")
        self._batch.host_updates.setdefault(host_id, {}).update(fields)
        self._added(1)

    def add_url(self, row: UrlRow) -> None:
        self._check()
        outcome = None if row.outcome is None else str(row.outcome)
        self._batch.urls.append((row.id, row.url, row.host_id, row.depth, row.discovered_seq,
                                 outcome, row.seq))
        self._added(1)

    def add_fetch(self, record: FetchRecord) -> None:
        self._check()
        fetch_id = self._next_fetch_id
        self._next_fetch_id += 1
        self._batch.fetches.append((fetch_id, *_fetch_row(record)))
        self._batch.last_fetch[record.url_id] = fetch_id
        self._added(1)

    def add_links(
        self, src_id: int, dst_ids: Sequence[int], nofollow_ids: Sequence[int] = ()
    ) -> None:
        """Record a page's out-links (document order).

        They replace the page's earlier links; if those differ they are kept as an
        earlier version (``link_versions``, with the fetch they came from).
        """
        self._check()
        nofollow = encode_ids(nofollow_ids) if len(nofollow_ids) else None
        self._batch.links.append((src_id, encode_ids(dst_ids), nofollow,
                                  self._batch.last_fetch.get(src_id)))
        self._added(1)

    def add_link_cut(self, src_id: int, kept: int, dropped: int) -> None:
        """Record that a page's links were cut: ``kept`` recorded, ``dropped`` not."""
        self._check()
        self._batch.link_cuts.append((src_id, kept, dropped))
        self._added(1)

    def add_url_source(self, url_id: int, source: str, via: str) -> None:
        """Record where a URL that no link or seed led to came from (``sitemap``)."""
        self._check()
        self._batch.url_sources.append((url_id, source, via))
        self._added(1)

    def set_duplicate(self, url_id: int, original: int | None) -> None:
        """Record that a page's body repeats page ``original``'s (``None``: it no longer
        does); see ``urls.duplicate_of`` in ``schema.sql``."""
        self._check()
        self._batch.duplicates[url_id] = original
        self._added(1)

    def set_near_duplicate(self, url_id: int, leader: int | None,
                           resemblance: float | None) -> None:
        """Record that a page's text resembles page ``leader``'s (``None``: it is no near
        copy); see ``urls.near_of`` in ``schema.sql``."""
        self._check()
        self._batch.near[url_id] = (leader, resemblance)
        self._added(1)

    def set_outcome(self, url_id: int, outcome: Outcome, seq: int | None) -> None:
        self._check()
        self._batch.outcomes[url_id] = (str(outcome), seq)
        self._added(1)

    @property
    def pending(self) -> int:
        """Records enqueued and not yet committed."""
        return self._pending

    @property
    def backlogged(self) -> bool:
        """More records wait than :meth:`drain` lets pile up (``DRAIN_BATCHES`` batches)."""
        return self._pending > DRAIN_BATCHES * self.batch_size

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every commit attempt (also a failed one: the next
        ``add_*`` or ``flush`` then raises), for a producer held back by
        :attr:`backlogged`."""
        self._on_commit.append(callback)

    # -- committing ---------------------------------------------------------------

    async def flush(self) -> None:
        """Commit everything enqueued so far (one transaction)."""
        self._check_open()
        await self._commit()

    async def drain(self, max_pending: int | None = None) -> None:
        """Back-pressure: commit now if more than ``max_pending`` records wait.

        The default is ``DRAIN_BATCHES * batch_size``.  A producer that can outrun
        the disk awaits this now and then to keep the queue (and memory) bounded.
        """
        limit = DRAIN_BATCHES * self.batch_size if max_pending is None else max_pending
        if self._pending > limit:
            await self.flush()

    async def aclose(self) -> None:
        """Flush, stop the background writer and close the file."""
        if self._closed:
            return
        try:
            if self._error is None:
                await self._commit()
        finally:
            self._closed = True
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            try:
                await self._db.close()
            finally:
                self._writer_lock.release()
        if self._error is not None:
            raise self._error

    async def __aenter__(self) -> CrawlStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- internals ----------------------------------------------------------------

    def _check_open(self) -> None:
        if self._error is not None:
            # A fresh traceback each time: re-raising the stored object would append
            # every caller's frames to the same traceback, growing without bound.
            raise self._error.with_traceback(None)
        if self._closed:
            raise StoreError(f"the crawl store {self.path} is closed")

    _check = _check_open

    def _added(self, n: int) -> None:
        self._pending += n
        if self._pending >= self.batch_size:
            self._wake.set()

    async def _run(self) -> None:
        """Background writer: commit every ``batch_size`` records or ``flush_interval``."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.flush_interval):
                    await self._wake.wait()
            self._wake.clear()
            try:
                await self._commit()
            except StoreError:
                return  # recorded in self._error; raised to the next caller

    async def _commit(self) -> None:
        async with self._lock:
            if self._error is not None:
                raise self._error
            if not self._pending:
                return
            # Taking the batch is synchronous: records enqueued together stay together.
            batch, self._batch, self._pending = self._batch, _Batch.empty(), 0
            try:
                await self._write(batch)
            except Exception as exc:
                with contextlib.suppress(Exception):
                    await self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    self._error = map_error(exc, self.path, "writing")
                else:
                    self._error = StoreError(f"writing {self.path} failed: {exc!r}")
                raise self._error from exc
            finally:
                for callback in self._on_commit:
                    callback()

    async def _write(self, b: _Batch) -> None:
        db = self._db
        await db.execute("BEGIN")
        if b.meta:
            await db.executemany(_INSERT_META, list(b.meta.items()))
        if b.hosts:
            await db.executemany(_INSERT_HOST, b.hosts)
        for host_id, fields in b.host_updates.items():
            # Column names come from the _HOST_FIELDS whitelist, values are parameters.
            cols = ", ".join(f"{name} = ?" for name in fields)
            await db.execute(f"UPDATE hosts SET {cols} WHERE id = ?", [*fields.values(), host_id])
        if b.urls:
            await db.executemany(_INSERT_URL, b.urls)
        _testhooks.reached("store_write")  # test-only: lets a kill land mid-transaction
        if b.fetches:
            await db.executemany(_INSERT_FETCH, b.fetches)
        for links in _rounds(b.links):
            await db.executemany(_KEEP_LINK_VERSION, links)
            await db.executemany(_INSERT_LINKS, links)
        if b.link_cuts:
            await db.executemany(_INSERT_LINK_CUT, b.link_cuts)
        if b.url_sources:
            await db.executemany(_INSERT_URL_SOURCE, b.url_sources)
        if b.outcomes:
            await db.executemany(_SET_OUTCOME,
                                 [(o, s, i) for i, (o, s) in b.outcomes.items()])
        if b.duplicates:
            await db.executemany(_SET_DUPLICATE, [(o, i) for i, o in b.duplicates.items()])
        if b.near:
            await db.executemany(_SET_NEAR, [(o, r, i) for i, (o, r) in b.near.items()])
        await db.execute("COMMIT")


def _rounds(rows: list[tuple[int, bytes, bytes | None, int | None]]
            ) -> list[list[tuple[int, bytes, bytes | None, int | None]]]:
    """Split link rows so that no page occurs twice in one round (rows in order): each
    round's versions are kept before the next round replaces them."""
    rounds: list[list[tuple[int, bytes, bytes | None, int | None]]] = []
    seen: dict[int, int] = {}
    for row in rows:
        k = seen.get(row[0], 0)
        seen[row[0]] = k + 1
        if k == len(rounds):
            rounds.append([])
        rounds[k].append(row)
    return rounds


def _existing_crawl(path: Path) -> bool:
    """True if ``path`` holds a crawl database of our version (checks the version)."""
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(sqlite_uri(path, "ro"), uri=True)
    except sqlite3.Error as exc:
        raise map_error(exc, path, "opening") from exc
    try:
        return check_crawl_db(conn, path)
    except sqlite3.Error as exc:
        raise map_error(exc, path, "opening") from exc
    finally:
        conn.close()


async def _prepare(db: aiosqlite.Connection, existing: bool) -> None:
    """Set the connection up, create the schema, and prove the file is writable."""
    await db.execute("PRAGMA journal_mode = WAL")
    await db.execute("PRAGMA synchronous = NORMAL")
    await db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    limit = _testhooks.max_page_count()  # test-only: a full disk without root
    if limit is not None:
        await db.execute(f"PRAGMA max_page_count = {int(limit)}")
    if existing:
        # Take (and release) the write lock now: a read-only file or a second
        # writer fails here, at open, not at the first commit.
        await db.execute("BEGIN IMMEDIATE")
        try:
            await db.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
        finally:
            await db.execute("ROLLBACK")
        cursor = await db.execute("SELECT value FROM meta WHERE key = 'schema_version'")
        row = await cursor.fetchone()
        if row is not None and str(row[0]) in {str(v) for v in MIGRATABLE}:
            # Upgrade in one transaction (see schema.sql, upgrade_script).
            columns: dict[str, set[str]] = {}
            for table in {t for _, t, _, _ in ADDED_COLUMNS}:
                info = await db.execute(f"PRAGMA table_info({table})")
                columns[table] = {r[1] for r in await info.fetchall()}
            await db.executescript(
                f"BEGIN IMMEDIATE;\n{upgrade_script(int(row[0]), columns)}\nCOMMIT;")
        return
    created = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    # One script, one transaction: a file has the whole schema and its version, or
    # nothing.  Both literals are ours (an int and an ISO timestamp), never user data.
    await db.executescript(
        f"BEGIN IMMEDIATE;\n{schema_sql()}\n"
        f"INSERT INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}'),"
        f" ('created_at', '{created}');\nCOMMIT;"
    )


def _load_state(path: Path) -> ResumeState:
    """Read the resume state with a plain read-only sqlite3 connection (in a thread)."""
    conn = sqlite3.connect(sqlite_uri(path, "ro"), uri=True)
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        hosts = [HostRow(*row) for row in conn.execute(
            "SELECT id, name, robots_status, robots_body, robots_fetched_at, crawl_delay"
            " FROM hosts ORDER BY id")]
        oc = _OUTCOMES
        urls = [UrlRow(i, u, h, d, ds, oc.get(o), s) for i, u, h, d, ds, o, s in conn.execute(
            "SELECT id, url, host_id, depth, discovered_seq, outcome, seq FROM urls ORDER BY id")]
        top = conn.execute("SELECT max(m) FROM (SELECT max(seq) AS m FROM fetches"
                           " UNION ALL SELECT max(seq) FROM urls)").fetchone()[0]
        link_rows = conn.execute("SELECT src, dst FROM links").fetchall()
        cuts = conn.execute("SELECT count(*) FROM link_cuts").fetchone()[0]
    finally:
        conn.close()
    return ResumeState(meta=meta, hosts=hosts, urls=urls,
                       next_seq=0 if top is None else int(top) + 1,
                       fetched_links=_links_in_seq_order(urls, link_rows), link_cuts=cuts)


def _links_in_seq_order(urls: list[UrlRow],
                        link_rows: list[tuple[int, bytes]]) -> list[tuple[int, Sequence[int]]]:
    if not link_rows:
        return []
    import numpy as np  # only here: keep `import storage` light

    ids = np.fromiter((u.id for u in urls), dtype=np.int64, count=len(urls))
    seqs = np.fromiter((-1 if u.seq is None else u.seq for u in urls), dtype=np.int64,
                       count=len(urls))
    src = np.fromiter((r[0] for r in link_rows), dtype=np.int64, count=len(link_rows))
    pos = np.searchsorted(ids, src)  # urls are in id order
    pos = np.minimum(pos, ids.size - 1)
    src_seq = np.where(ids[pos] == src, seqs[pos], -1)
    order = np.argsort(src_seq, kind="stable")
    return [(link_rows[i][0], decode_ids(link_rows[i][1])) for i in order.tolist()]
