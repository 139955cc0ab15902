"""The crawl database writer (SQLite, WAL); the schema is in ``schema.sql``.

The crawler owns id assignment (it keeps url -> id and host -> id maps in memory and
asks the store for the next free ids when it opens); the store is a write-behind
buffer: the ``add_*``/``set_*`` methods are synchronous and only enqueue (O(1), no
I/O), a background task commits the queue in one transaction per batch (every
``batch_size`` records or ``flush_interval`` seconds).  Everything enqueued between
two commits lands together, so the crawler enqueues all records of one fetch (fetch
row, new URLs, links, outcome) without an ``await`` in between and a crash never
splits them.  How a batch is written (its order, which record wins) is
:mod:`webcrawl.storage._batch`'s; opening (schema, upgrade) is
:mod:`webcrawl.storage._prepare`'s; the state to resume from is
:mod:`webcrawl.storage.resume_state`'s.

Back-pressure: a producer that can outrun the disk either awaits :meth:`CrawlStore.drain`
now and then (it commits inline when too much waits), or, when it must never block
(the crawl's dispatcher), checks :attr:`CrawlStore.backlogged` before producing more and
registers :meth:`CrawlStore.on_commit` to hear when the background writer caught up.

Records computed for many pages at once (the crawl's near-duplicate test: text sketches
and groups) are enqueued by a :meth:`CrawlStore.before_commit`
callback: it runs just before a batch is taken, so what it adds for the pages of that
batch lands in the same transaction as their rows (a kill never commits one without
the other); :meth:`CrawlStore.set_sketch` fills in a fetch row enqueued since the last
commit.

The writes run in the event loop's thread, a batch's SQL statements with no ``await``
between them: a commit holds the loop for some tens of milliseconds (a one-process
crawl of the nginx site in docs/results/crawling.md: commits of about 1,000 records,
median 28 ms, at most 111 ms, at load 6).  A writer thread was measured to cost more
than it saves: while the crawl kept the interpreter busy, its ``executemany`` handed
the GIL back and forth at every row (``sqlite3`` releases it around each step):
83,000 context switches and 2-4 CPU seconds more for a 16,000-page crawl that took 15
CPU seconds written inline, and no shorter (benchmarks/bench_crawl.py,
docs/results/crawling.md).

Errors: after a failed write (disk full, read-only, ...) the background writer stops,
everything committed before stays intact, and the next ``add_*``, ``set_*``,
``flush``, ``drain`` or ``aclose`` raises the :class:`~webcrawl.storage.errors.StoreError`
(never swallowed, never a hang).

Another program's write lock (a ``sqlite3`` shell or a notebook in a write transaction)
is waited for, for up to ``busy_wait`` seconds, with a warning on the ``webcrawl`` log
(:mod:`webcrawl.storage._busy`); meanwhile :attr:`~CrawlStore.backlogged` is true, so no
new fetch starts.  If the wait runs out, :meth:`~CrawlStore.flush`, :meth:`~CrawlStore.drain`
and :meth:`~CrawlStore.aclose` raise :class:`~webcrawl.storage.errors.StoreBusyError`,
while ``add_*`` and ``set_*`` still take the records of fetches under way; :meth:`aclose`
then keeps everything uncommitted in the pending-records file that the next writer
applies (:mod:`webcrawl.storage._pending`): nothing fetched is lost or fetched again.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

from webcrawl.storage import _pending, _testhooks
from webcrawl.storage._batch import HOST_FIELDS, Batch, fetch_row, write_batch
from webcrawl.storage._busy import begin_immediate
from webcrawl.storage._prepare import CACHE_KIB, existing_crawl, prepare
from webcrawl.storage._sqlite import check_db_path, encode_ids, map_error, sqlite_uri
from webcrawl.storage.errors import ConfigError, StoreBusyError, StoreError
from webcrawl.storage.lock import WriterLock
from webcrawl.storage.records import FetchRecord, HostRow, Outcome, UrlRow
from webcrawl.storage.resume_state import ResumeState, load_state

# HostRow, UrlRow and ResumeState are re-exported: they were defined here first.
__all__ = ["CACHE_KIB", "DRAIN_BATCHES", "CrawlStore", "HostRow", "ResumeState", "UrlRow"]

#: ``drain()`` default: commit inline when more than this many batches are queued.
DRAIN_BATCHES = 8
#: Default of ``busy_wait``, seconds (``CrawlSettings.store_busy_wait``).
BUSY_WAIT = 60.0


class CrawlStore:
    """Async writer of one crawl database file (see ``schema.sql``)."""

    #: SQLite URI mode of the writer connection (tests set ``"ro"`` to simulate a
    #: read-only file when running as root, where chmod does not stop writes).
    _open_mode = "rwc"

    def __init__(self, db: sqlite3.Connection, path: Path, batch_size: int,
                 flush_interval: float, writer: WriterLock, busy_wait: float) -> None:
        """Use :meth:`open`."""
        self._db = db
        self._writer_lock = writer
        self.path = path
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.busy_wait = busy_wait
        self._batch = Batch.empty()
        self._next_fetch_id = 1           # fetches.id is ours to assign (see add_links)
        self._pending = 0
        self._error: StoreError | None = None
        self._unwritten: list[Batch] = []  # taken by a commit another program's lock stopped
        self._waiting = False              # a commit waits for another program's lock
        self._closed = False
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._on_commit: list[Callable[[], None]] = []
        self._before_commit: list[Callable[[], None]] = []
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
        busy_wait: float = BUSY_WAIT,
    ) -> CrawlStore:
        """Open (create) the database. ``resume=False`` on a non-empty file is an error.

        ``busy_wait``: seconds a write waits for another program's write lock (see the
        module docstring).

        Raises
        ------
        StoreError
            The file already holds a crawl and ``resume`` is false; ``resume`` is true
            and there is no file; the file is not a crawl database (a directory, a
            device, a foreign file).
        StoreCorruptError
            The file is damaged (a table or column missing).
        StoreLockedError
            Another process is writing the database (see :mod:`webcrawl.storage.lock`); the
            lock is held until :meth:`aclose` (or the process ends).
        StoreBusyError
            Another program held SQLite's write lock for longer than ``busy_wait``.
        SchemaVersionError
            The file was written by another schema version.
        StoreReadOnlyError, StoreFullError
            The file or folder cannot be written; the disk is full.
        """
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        if not flush_interval > 0:
            raise ConfigError(f"flush_interval must be > 0, got {flush_interval}")
        if not busy_wait >= 0:
            raise ConfigError(f"busy_wait must be >= 0, got {busy_wait}")
        path = Path(path)
        check_db_path(path)
        if resume and not path.exists():
            raise StoreError(f"nothing to resume: no crawl database at {path}")
        writer = WriterLock(path)
        writer.acquire()  # one writer per database for the store's whole life
        try:
            db, next_fetch_id = await _connect(cls._open_mode, path, resume, busy_wait)
        except BaseException:
            writer.release(remove=True)
            raise
        store = cls(db, path, batch_size, flush_interval, writer, busy_wait)
        store._next_fetch_id = next_fetch_id
        return store

    # -- resuming -----------------------------------------------------------------

    async def load_state(self) -> ResumeState:
        """Read everything committed (after flushing the queue) for resuming."""
        await self.flush()
        return await asyncio.to_thread(load_state, self.path)

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
        unknown = fields.keys() - HOST_FIELDS
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

    def add_new_urls(self, first_id: int, urls: Sequence[str], host_ids: Sequence[int],
                     depth: int, discovered_seq: int,
                     outcomes: Sequence[Outcome | None]) -> None:
        """:meth:`add_url` for URLs ``first_id``, ``first_id + 1``, ... of one depth,
        found by one fetch, at once: a page's new links (one Python step per row
        instead of a :class:`UrlRow` and a call each)."""
        self._check()
        self._batch.urls.extend(zip(
            range(first_id, first_id + len(urls)), urls, host_ids, repeat(depth),
            repeat(discovered_seq), [None if o is None else str(o) for o in outcomes],
            repeat(None), strict=False))
        self._added(len(urls))

    def add_fetch(self, record: FetchRecord) -> int:
        """Enqueue a ``fetches`` row; its id."""
        self._check()
        fetch_id = self._next_fetch_id
        self._next_fetch_id += 1
        self._batch.fetches.append((fetch_id, *fetch_row(record)))
        self._batch.last_fetch[record.url_id] = fetch_id
        self._added(1)
        return fetch_id

    def set_sketch(self, fetch_id: int, sketch: bytes) -> None:
        """Set the text sketch (``fetches.sketch``) of fetch ``fetch_id``, enqueued since
        the last commit (a :meth:`before_commit` callback's sketches of its batch)."""
        self._check()
        rows = self._batch.fetches
        # The batch's fetch rows carry consecutive ids (add_fetch numbers them).
        at = fetch_id - rows[0][0] if rows else -1
        if not 0 <= at < len(rows) or rows[at][0] != fetch_id:
            raise StoreError(f"set_sketch: fetch {fetch_id} is not in the batch being "
                             "enqueued (it was committed, or never added)")
        rows[at] = (*rows[at][:-1], sketch)

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
        """More records wait than :meth:`drain` lets pile up (``DRAIN_BATCHES`` batches),
        or the writer cannot write now (another program's lock, a failed write)."""
        return (self._pending > DRAIN_BATCHES * self.batch_size or self._waiting
                or self._error is not None)

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every commit attempt (also a failed one: the next
        ``add_*`` or ``flush`` then raises), for a producer held back by
        :attr:`backlogged`."""
        self._on_commit.append(callback)

    def before_commit(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` just before every commit takes its batch: the records it
        enqueues are written in the same transaction (see the module docstring).  A
        callback that raises fails the commit, as a failed write does."""
        self._before_commit.append(callback)

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
        self._check_open()
        limit = DRAIN_BATCHES * self.batch_size if max_pending is None else max_pending
        if self._pending > limit:
            await self.flush()

    async def aclose(self) -> None:
        """Flush, stop the background writer and close the file (the pending-records
        file keeps what another program's lock kept from being written)."""
        if self._closed:
            return
        try:
            if self._error is None:
                await self._commit()
        except StoreBusyError:
            pass  # kept below
        finally:
            self._closed = True
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            try:
                await self._keep_unwritten()
                self._db.close()
            finally:
                self._writer_lock.release(remove=True)
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

    def _check(self) -> None:
        """Before enqueueing: records of fetches under way are still taken after another
        program's lock stopped the writer (they are kept, see :meth:`aclose`)."""
        if isinstance(self._error, StoreBusyError) and not self._closed:
            return
        self._check_open()

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
            try:
                self._run_before_commit()
            except Exception as exc:
                self._error = StoreError(f"preparing a commit of {self.path} failed: {exc!r}")
                for callback in self._on_commit:
                    callback()
                raise self._error from exc
            # Taking the batch is synchronous: records enqueued together stay together.
            batch, self._batch, self._pending = self._batch, Batch.empty(), 0
            try:
                await self._write([batch], self.busy_wait)
            except Exception as exc:
                self._error = _store_error(exc, self.path)
                if isinstance(self._error, StoreBusyError):
                    self._unwritten.append(batch)
                raise self._error from exc
            finally:
                for callback in self._on_commit:
                    callback()

    def _run_before_commit(self) -> None:
        for callback in self._before_commit:
            callback()

    async def _write(self, batches: list[Batch], wait: float) -> None:
        """Write ``batches`` in one transaction, waiting up to ``wait`` seconds for
        another program's write lock."""
        await begin_immediate(self._db, self.path, wait, self._on_wait)
        try:
            for batch in batches:
                write_batch(self._db, batch)
            self._db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):
                self._db.execute("ROLLBACK")
            raise

    def _on_wait(self, waiting: bool) -> None:
        self._waiting = waiting

    async def _keep_unwritten(self) -> None:
        """After another program's lock stopped the writer: try once more, else keep the
        uncommitted batches in the pending-records file and say so in the error."""
        if not isinstance(self._error, StoreBusyError):
            return
        with contextlib.suppress(Exception):  # the last pages' records, as a commit adds them
            self._run_before_commit()
        batches = [*self._unwritten, self._batch]
        self._unwritten, self._batch, self._pending = [], Batch.empty(), 0
        if not any(len(b) for b in batches):
            return
        try:  # the lock may have ended meanwhile: one attempt, no wait
            await self._write(batches, 0.0)
            self._error = None
            return
        except (StoreError, sqlite3.Error):
            pass
        kept = _pending.pending_path(self.path)
        state = _pending.identity(self._db)
        try:
            records = _pending.save(self.path, state, batches)
        except OSError as exc:
            self._error = StoreBusyError(f"{self._error}; keeping its last records in {kept} "
                                         f"failed too ({exc.strerror or exc}): they are lost")
            return
        self._error = StoreBusyError(f"{self._error}; its last {records:,} records are kept "
                                     f"in {kept.name} and written when it is resumed")


async def _connect(mode: str, path: Path, resume: bool,
                   busy_wait: float) -> tuple[sqlite3.Connection, int]:
    """The prepared writer connection of ``path`` and its next fetch id."""
    existing = await asyncio.to_thread(existing_crawl, path)
    if existing and not resume:
        raise StoreError(f"{path} already holds a crawl; pass --resume to continue it "
                         "or choose another --db path")
    if not existing and _pending.pending_path(path).exists():
        raise StoreError(f"{_pending.pending_path(path)} holds records of a crawl whose "
                         f"database is not at {path}; move it away to go on")
    try:
        db = sqlite3.connect(sqlite_uri(path, _testhooks.open_mode(mode)), uri=True,
                             isolation_level=None)
    except sqlite3.Error as exc:
        raise map_error(exc, path, "opening") from exc
    try:
        await prepare(db, path, existing, busy_wait)
        # From now on a locked database is waited for on the event loop (_busy).
        db.execute("PRAGMA busy_timeout = 0")
        row = db.execute("SELECT ifnull(max(id), 0) FROM fetches").fetchone()
    except BaseException as exc:
        db.close()
        if isinstance(exc, sqlite3.Error):
            raise map_error(exc, path, "opening") from exc
        raise
    return db, int(row[0]) + 1 if row else 1


def _store_error(exc: BaseException, path: Path) -> StoreError:
    if isinstance(exc, StoreError):
        return exc
    if isinstance(exc, sqlite3.Error):
        return map_error(exc, path, "writing")
    return StoreError(f"writing {path} failed: {exc!r}")
