"""Read-only, synchronous access to a crawl database, as numpy arrays.

:class:`CrawlReader` opens the file with a read-only ``file:...?mode=ro`` URI, so an
analysis process can read a crawl while the crawler writes it (WAL).  Each method is
one query; wrap several in :meth:`CrawlReader.snapshot` to see one consistent state
of a crawl that is still being written.

What it returns are the typed columns of :mod:`webcrawl.storage.tables` (their
conventions: ids int64, ``NULL`` as ``-1`` or ``nan``, outcomes as int8 codes); the
link arrays come from :mod:`webcrawl.storage._linkread`, with no Python loop over links.
An imported graph of integer ids has no ``urls`` rows (``id_ranges`` names its nodes):
every method reads it as if it had them.

Contract: a file that is not a crawl database, or a damaged one, raises a
:class:`~webcrawl.storage.errors.StoreError` naming the file
(:class:`~webcrawl.storage.errors.StoreCorruptError` for damage: a missing table or
column at open, a value of the wrong type, a link array that does not decode or names no
URL, when read), never a numpy or ``sqlite3`` error.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from webcrawl.storage import _linkread
from webcrawl.storage._idranges import IdRanges
from webcrawl.storage._query import Query, cursor_rows, id_order
from webcrawl.storage._sqlite import check_crawl_db, map_error, sqlite_uri
from webcrawl.storage.arrays import ObjectArray
from webcrawl.storage.errors import StoreError
from webcrawl.storage.records import FetchKind, Outcome
from webcrawl.storage.tables import (
    FETCH_KINDS,
    LINK_DTYPE,
    OUTCOMES,
    PAGE_COLUMNS,
    FetchTable,
    LinkArrays,
    UrlTable,
    code_sql,
    outcome_code,
)
from webcrawl.storage.urlstrings import UrlStrings, int64_array

# The tables' names are re-exported: they were defined here first.
__all__ = ["FETCH_KINDS", "OUTCOMES", "PAGE_COLUMNS", "CrawlReader", "FetchTable", "LinkArrays",
           "UrlStrings", "UrlTable", "outcome_code"]


def _folder_read_only(path: Path) -> bool:
    """True if the folder of ``path`` cannot be written (read-only mount or mode)."""
    folder = path.absolute().parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        pass
    return not os.access(folder, os.W_OK)


class CrawlReader:
    """Read-only view of one crawl database file (sync; safe while a crawl writes it)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a crawl database file")
        if self.path.exists() and not self.path.is_file():
            raise StoreError(f"{self.path} is a device or special file, not a crawl database")
        if not self.path.is_file():
            raise StoreError(f"no crawl database at {self.path}")
        #: opened with ``immutable=1``: the folder is read-only (see :func:`_open`)
        self.immutable = False
        self._ranges: IdRanges | bool | None = False  # False: not read yet
        try:
            self._conn = self._open(immutable=False)
        except StoreError:
            if not _folder_read_only(self.path):
                raise
            self._conn = self._open(immutable=True)
            self.immutable = True
        self._q = Query(self._conn, self.path)

    def _open(self, *, immutable: bool) -> sqlite3.Connection:
        """Connect read-only and check the schema.

        A WAL database needs its ``-shm`` file, which a reader creates when missing;
        in a read-only folder (a read-only mount, an archive) that fails, and the file
        is opened ``immutable=1`` instead: nobody can be writing it there, since a
        writer needs the folder too.  A WAL file left there by a killed crawl would be
        ignored that way, so it is refused with a clear error instead.
        """
        uri = sqlite_uri(self.path, "ro")
        if immutable:
            wal = self.path.with_name(self.path.name + "-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise StoreError(
                    f"{self.path} has uncheckpointed changes in {wal.name} and its folder is "
                    "read-only; copy the database and its -wal file to a writable folder")
            uri += "&immutable=1"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise map_error(exc, self.path, "opening") from exc
        try:
            if not check_crawl_db(conn, self.path):
                raise StoreError(f"{self.path} is empty: not a crawl database")
        except BaseException as exc:
            conn.close()
            if isinstance(exc, sqlite3.Error):
                raise map_error(exc, self.path, "opening") from exc
            raise
        return conn

    # -- lifetime -----------------------------------------------------------------

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> CrawlReader:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[CrawlReader]:
        """Read one consistent state: every query inside sees the same commits."""
        with self._q.snapshot():
            yield self

    # -- small tables ---------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        return dict(self._q.all("SELECT key, value FROM meta"))

    def link_cuts(self) -> list[tuple[int, int, int]]:
        """Pages whose links were cut at ``links_max_per_page``: (url id, kept, dropped)."""
        if not self._q.has_table("link_cuts"):
            return []
        return [tuple(r) for r in self._q.all("SELECT src, kept, dropped FROM link_cuts"
                                             " ORDER BY src")]

    def url_sources(self) -> list[tuple[int, str, str]]:
        """URLs found by another source than links and seeds: (url id, source, via)."""
        if not self._q.has_table("url_sources"):
            return []
        return [tuple(r) for r in self._q.all("SELECT url_id, source, via FROM url_sources"
                                             " ORDER BY url_id")]

    def duplicates(self) -> tuple[np.ndarray, np.ndarray]:
        """Pages recorded as duplicates (``urls.duplicate_of``): their ids and the ids of
        the pages whose bodies they repeat (int64, by id).  A file written before
        schema version 5 has none."""
        columns = {r[1] for r in self._q.all("PRAGMA table_info(urls)")}
        if "duplicate_of" not in columns:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        with self._q.snapshot():
            (ids, original), _ = self._q.columns(
                ["id", "duplicate_of"], "urls NOT INDEXED WHERE duplicate_of IS NOT NULL")
            nodes = self._nodes()
        if original.size and (int(original.min()) < 0 or int(original.max()) >= nodes):
            raise self._q.damaged("urls.duplicate_of names a page that does not exist")
        order = id_order(ids)
        return (ids, original) if order is None else (ids[order], original[order])

    def near_duplicates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pages recorded as near copies (``urls.near_of``): their ids, the ids of their
        groups' leaders (int64, by id) and the estimated resemblance (float64).  A file
        written before schema version 8 has none."""
        columns = {r[1] for r in self._q.all("PRAGMA table_info(urls)")}
        if "near_of" not in columns:
            return (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64),
                    np.empty(0, dtype=np.float64))
        rows = self._q.all("SELECT id, near_of, ifnull(near_resemblance, 0) FROM urls"
                           " WHERE near_of IS NOT NULL ORDER BY id")
        try:
            pairs = np.array(rows, dtype=np.float64).reshape(-1, 3)
        except (TypeError, ValueError):
            raise self._q.damaged("urls.near_of holds values that are not numbers") from None
        ids, leaders = pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.int64)
        if leaders.size and (int(leaders.min()) < 0 or int(leaders.max()) >= self._nodes()):
            raise self._q.damaged("urls.near_of names a page that does not exist")
        return ids, leaders, pairs[:, 2].copy()

    def _id_ranges(self) -> IdRanges | None:
        """The ``id_ranges`` of an imported graph of integer ids (None: its nodes are
        ``urls`` rows).  Read once: only the importer writes the table."""
        if self._ranges is False:
            try:
                self._ranges = IdRanges.read(self._conn)
            except sqlite3.Error as exc:
                raise map_error(exc, self.path, "reading") from exc
            except (TypeError, ValueError):
                raise self._q.damaged("id_ranges holds values that are not integers") from None
        assert self._ranges is not True
        return self._ranges

    def seeds(self) -> np.ndarray:
        """URL ids of the seeds (``discovered_seq = -1``), ascending."""
        ranges = self._id_ranges()
        if ranges is not None:  # the seeds' ids are in meta
            try:
                names = [int(u) for u in json.loads(self.meta().get("seeds", "[]"))]
            except (TypeError, ValueError):
                raise self._q.damaged("meta.seeds of a graph of integer ids holds a seed that "
                                      "is not an integer") from None
            nodes = ranges.nodes(np.array(names, dtype=np.int64))
            return np.unique(nodes[nodes >= 0])
        rows = self._q.all("SELECT id FROM urls WHERE discovered_seq = -1 ORDER BY id")
        return np.array([r[0] for r in rows], dtype=np.int64)

    def seed_urls(self) -> list[str]:
        """The seed URLs as given to the crawl (``meta.seeds``), else from ``urls``."""
        raw = self.meta().get("seeds")
        if raw is not None:
            return [str(u) for u in json.loads(raw)]
        return [r[0] for r in self._q.all("SELECT url FROM urls WHERE discovered_seq = -1"
                                        " ORDER BY id")]

    def hosts(self) -> tuple[np.ndarray, list[str]]:
        """Host ids (int64, ascending) and their names (``host[:port]``)."""
        rows = self._q.all("SELECT id, name FROM hosts ORDER BY id")
        return np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows]

    # -- urls -----------------------------------------------------------------------

    def urls(self, *, text: bool = True) -> UrlTable:
        """The ``urls`` table as columns (``text=False`` skips the URL strings)."""
        outcome = code_sql("outcome", tuple(o.value for o in OUTCOMES))
        exprs = ["id", "host_id", "depth", "discovered_seq", outcome, "ifnull(seq, -1)"]
        urls = UrlStrings.from_list([])
        ranges = self._id_ranges()
        if ranges is not None:
            return self._implied_urls(ranges, text=text)
        if text:
            ints, urls = self._q.url_strings(exprs, "urls NOT INDEXED")
        else:
            ints, _ = self._q.columns(exprs, "urls NOT INDEXED")
        ids, host, depth, dseq, code, seq = ints
        order = id_order(ids)
        if order is not None:  # never seen in practice: the scan is in rowid order
            ids, host, depth, dseq, code, seq = (c[order] for c in (ids, host, depth, dseq,
                                                                     code, seq))
            urls = urls.take(order) if text else urls
        return UrlTable(ids=ids, urls=urls, host_ids=host, depth=depth.astype(np.int32),
                        discovered_seq=dseq, outcome=code.astype(np.int8), seq=seq)

    def _implied_urls(self, ranges: IdRanges, *, text: bool) -> UrlTable:
        """:meth:`urls` of a file whose nodes are ``id_ranges`` (``schema.sql`` says
        what each column is): the outcome from the out-links, the URL from the id."""
        import pyarrow as pa

        n = ranges.n
        # meta pages = 'all' (import edges' default): every node is a page (schema.sql)
        fetched = np.ones(n, dtype=bool) if self.meta().get("pages") == "all" else \
            _linkread.out_degrees(self._q, n) > 0
        outcome = np.where(fetched, outcome_code(Outcome.FETCHED), -1).astype(np.int8)
        discovered = np.zeros(n, dtype=np.int64)
        discovered[self.seeds()] = -1
        urls = UrlStrings(int64_array(ranges.names()).cast(pa.large_string())) if text else \
            UrlStrings.from_list([])
        return UrlTable(ids=np.arange(n, dtype=np.int64), urls=urls,
                        host_ids=np.zeros(n, dtype=np.int64),
                        depth=np.full(n, -1, dtype=np.int32), discovered_seq=discovered,
                        outcome=outcome, seq=np.full(n, -1, dtype=np.int64))

    def url_strings(self, ids: np.ndarray | list[int]) -> list[str]:
        """The URLs of the given ids, in the given order (KeyError if one is unknown)."""
        id_list = [int(i) for i in ids]
        if self._id_ranges() is not None:
            found = self._url_map(set(id_list))
            return [found[i] for i in id_list]
        found = dict(self._q.all("SELECT id, url FROM urls WHERE id IN"
                               " (SELECT value FROM json_each(?))", (json.dumps(id_list),)))
        return [found[i] for i in id_list]

    # -- links ----------------------------------------------------------------------

    def links_csr(self, as_of_seq: int | None = None) -> LinkArrays:
        """Every page's out-links (``links.dst``), in document order.

        ``as_of_seq``: each page's link set as it was after the fetches of crawl
        sequence numbers up to ``as_of_seq`` (from ``link_versions``; a page whose
        first links came later has none).  Default: the latest version.
        """
        with self._q.snapshot():
            nodes = self._nodes()
            blocks = _linkread.block_csr(self._q, nodes)
            if blocks is not None:  # an imported graph: one version, without a fetch (seq -1)
                return blocks if as_of_seq is None or as_of_seq >= -1 else _linkread.no_links()
            if as_of_seq is None:
                return _linkread.links_csr(self._q, "dst", nodes)
            return _linkread.versions_csr(self._q, "dst", as_of_seq, nodes)

    def nofollow_csr(self, as_of_seq: int | None = None) -> LinkArrays:
        """Every page's nofollow destination ids (``links.nofollow``); ``as_of_seq`` as in
        :meth:`links_csr`."""
        with self._q.snapshot():
            nodes = self._nodes()
            if as_of_seq is None:
                return _linkread.links_csr(self._q, "nofollow", nodes)
            return _linkread.versions_csr(self._q, "nofollow", as_of_seq, nodes)

    def _nodes(self) -> int:
        """The number of node ids: every id a link may name is below it."""
        ranges = self._id_ranges()
        if ranges is not None:
            return ranges.n
        top = self._q.all("SELECT max(id) FROM urls")[0][0]
        return 1 + (-1 if top is None else int(top))

    # -- fetches --------------------------------------------------------------------

    def fetches(self, kind: FetchKind | str | None = None) -> FetchTable:
        """The ``fetches`` table as typed columns, in insertion order (:class:`FetchTable`)."""
        where, params = ("", ()) if kind is None else (" WHERE kind = ?", (str(FetchKind(kind)),))
        num = self._q.all(
            "SELECT url_id, seq, started_at, ended_at, ifnull(status, -1), ifnull(size, -1),"
            " attempt, ifnull(priority, 'nan'), ifnull(rank, -1), ifnull(changed, -1), "
            f"{code_sql('outcome', tuple(o.value for o in OUTCOMES))}, "
            f"{code_sql('kind', tuple(k.value for k in FETCH_KINDS))} "
            f"FROM fetches{where} ORDER BY id", params)
        try:
            arr = np.array(num, dtype=np.float64).reshape(len(num), 12)
        except (TypeError, ValueError):
            raise self._q.damaged("fetches holds a value that is not a number where its "
                                  "schema wants one") from None
        text = self._q.all("SELECT content_type, digest, etag, last_modified, error, strategy"
                         f" FROM fetches{where} ORDER BY id", params)

        def column(j: int) -> ObjectArray:
            col = np.empty(len(text), dtype=object)
            col[:] = [row[j] for row in text]
            return col

        return FetchTable(
            url_id=arr[:, 0].astype(np.int64), seq=arr[:, 1].astype(np.int64),
            started_at=arr[:, 2].copy(), ended_at=arr[:, 3].copy(),
            status=arr[:, 4].astype(np.int64), size=arr[:, 5].astype(np.int64),
            attempt=arr[:, 6].astype(np.int64), priority=arr[:, 7].copy(),
            rank=arr[:, 8].astype(np.int64), changed=arr[:, 9].astype(np.int8),
            outcome=arr[:, 10].astype(np.int8), kind=arr[:, 11].astype(np.int8),
            content_type=column(0), digest=column(1), etag=column(2),
            last_modified=column(3), error=column(4), strategy=column(5),
        )

    def payload_digests(self, chunk: int = 10_000) -> Iterator[tuple[str, str, float]]:
        """``(digest, url, started_at)`` of every fetch that read a whole body (size > 0,
        not cut at the size cap), in insertion order: the payloads this crawl holds, for a
        later crawl's WARC deduplication (``webcrawl.crawler.warc_dedup``)."""
        sql = ("SELECT f.id, f.digest, u.url, f.started_at FROM fetches f"
               " JOIN urls u ON u.id = f.url_id WHERE f.id > ? AND f.digest IS NOT NULL"
               " AND f.size > 0 AND f.outcome != 'too_large' ORDER BY f.id LIMIT ?")
        for rows in self._batches(sql, chunk):
            for _, digest, url, started_at in rows:
                yield str(digest), str(url), float(started_at)

    def fetch_order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """URLs in the order the crawl took them: ``(url_ids, seqs, fetched_at)``.

        Every URL with a final crawl fetch (``urls.seq`` set), by seq.  ``fetched_at``
        is the ``ended_at`` of its final crawl attempt, to the microsecond (nan if it
        has no fetch row, e.g. a URL excluded by robots.txt without a request).
        """
        with self.snapshot():
            (ids, seqs), _ = self._q.columns(["id", "seq"],
                                             "urls NOT INDEXED WHERE seq IS NOT NULL")
            crawl = "fetches NOT INDEXED WHERE kind = 'crawl'"
            # Times travel as integer microseconds so that they share the one scan; a
            # value that is no number reads as NULL, which the scan refuses.
            (fid, fseq, ended_us), _ = self._q.columns(
                ["id", "seq", "CASE WHEN typeof(ended_at) IN ('real', 'integer') THEN"
                 " CAST(round(ended_at * 1e6) AS INTEGER) END"], crawl)
        ended = ended_us / 1e6
        order = np.argsort(seqs, kind="stable")
        ids, seqs = ids[order], seqs[order]
        by_id = id_order(fid)
        if by_id is not None:
            fseq, ended = fseq[by_id], ended[by_id]
        # The last attempt of each seq is its final one (retries share the seq).
        useq, first = np.unique(fseq[::-1], return_index=True)
        last_ended = ended[::-1][first]
        times = np.full(seqs.size, np.nan)
        if useq.size:
            pos = np.minimum(np.searchsorted(useq, seqs), useq.size - 1)
            hit = useq[pos] == seqs
            times[hit] = last_ended[pos[hit]]
        return ids, seqs, times

    # -- streaming (export) ---------------------------------------------------------

    def iter_edges(self, chunk_pages: int = 5000) -> Iterator[tuple[str, str, bool]]:
        """Yield ``(src_url, dst_url, nofollow)`` for every stored link, page by page.

        Memory is bounded by ``chunk_pages`` pages (their links and URLs), or as many
        blocks of an imported graph, not by the crawl's size.
        """
        if self._q.has_table("link_blocks"):
            yield from self._iter_block_edges(chunk_pages)
        for rows in self._batches("SELECT src, dst, nofollow FROM links WHERE src > ?"
                                  " ORDER BY src LIMIT ?", chunk_pages):
            pages = [(src, self._ids(dst, src), set(self._ids(nofollow, src)))
                     for src, dst, nofollow in rows]
            ids = {src for src, _, _ in pages}
            for _, dst, _ in pages:
                ids.update(dst)
            url = self._url_map(ids)
            if len(url) < len(ids):
                raise self._q.damaged(f"links name ids that no URL has "
                                      f"({min(ids - url.keys())}, ...)")
            for src, dst, nf in pages:
                src_url = url[src]
                for d in dst:
                    yield src_url, url[d], d in nf

    def _batches(self, sql: str, size: int) -> Iterator[list[Any]]:
        """The rows of ``sql`` (``... WHERE key > ? ORDER BY key LIMIT ?``, the key its
        first column) ``size`` at a time."""
        last = -1
        while True:
            rows = self._q.all(sql, (last, size))
            if not rows:
                return
            last = rows[-1][0]
            yield rows

    def _ids(self, blob: Any, src: int) -> list[int]:
        """The ids of one link BLOB (None: no ids), checked to be an int32 array."""
        if blob is None:
            return []
        if not isinstance(blob, bytes) or len(blob) % LINK_DTYPE.itemsize:
            raise self._q.damaged(f"the links of page {src} are not an int32 array")
        ids: list[int] = np.frombuffer(blob, dtype=LINK_DTYPE).tolist()
        return ids

    def _url_map(self, ids: set[int]) -> dict[int, str]:
        """The URL of each of ``ids`` (those that are nodes)."""
        ranges = self._id_ranges()
        if ranges is not None:
            nodes = np.array(sorted(ids), dtype=np.int64)
            nodes = nodes[(nodes >= 0) & (nodes < ranges.n)]
            names = ranges.names_of(nodes)
            return dict(zip(nodes.tolist(), (str(v) for v in names.tolist()), strict=True))
        return dict(self._q.all("SELECT id, url FROM urls WHERE id IN"
                              " (SELECT value FROM json_each(?))", (json.dumps(sorted(ids)),)))

    def _iter_block_edges(self, chunk_blocks: int) -> Iterator[tuple[str, str, bool]]:
        """:meth:`iter_edges` of the ``link_blocks`` rows (never nofollow)."""
        for rows in self._batches("SELECT first, src, dst FROM link_blocks WHERE first > ?"
                                  " ORDER BY first LIMIT ?", chunk_blocks):
            src = [i for r in rows for i in self._ids(r[1], r[0])]
            dst = [i for r in rows for i in self._ids(r[2], r[0])]
            url = self._url_map({*src, *dst})
            if len(src) != len(dst) or len(url) < len({*src, *dst}):
                raise self._q.damaged("a link block of link_blocks does not decode")
            for s, d in zip(src, dst, strict=True):
                yield url[s], url[d], False

    def iter_fetches(self) -> Iterator[tuple[Any, ...]]:
        """Yield one row per fetch attempt, in insertion order, with its URL.

        Columns: ``url, url_id, seq, kind, attempt, started_at, ended_at, outcome,
        status, content_type, size, digest, etag, last_modified, error, strategy,
        priority, rank, changed``.
        """
        yield from cursor_rows(self._q.run(
            "SELECT u.url, f.url_id, f.seq, f.kind, f.attempt, f.started_at, f.ended_at,"
            " f.outcome, f.status, f.content_type, f.size, f.digest, f.etag,"
            " f.last_modified, f.error, f.strategy, f.priority, f.rank, f.changed"
            " FROM fetches f LEFT JOIN urls u ON u.id = f.url_id ORDER BY f.id"))

    def iter_pages(self) -> Iterator[tuple[Any, ...]]:
        """Yield one row per URL (id order) with its final crawl fetch, if any.

        Columns: :data:`PAGE_COLUMNS`; fetch fields are None for URLs never fetched.
        """
        if self._id_ranges() is not None:  # imported: no fetches, a page per node
            yield from self._implied_pages()
            return
        yield from cursor_rows(self._q.run(
            "SELECT u.url, f.status, u.seq, f.ended_at, u.depth, u.outcome, h.name,"
            " f.content_type, f.size, f.digest, f.etag, f.last_modified,"
            # A URL never requested because its host's robots.txt was unreachable shows
            # the crawl's cause (meta robots_unreachable:<host>, see crawler.engine).
            " COALESCE(f.error, CASE WHEN u.outcome = 'robots_unreachable' THEN"
            "   (SELECT NULLIF(m.value, '') FROM meta m"
            "    WHERE m.key = 'robots_unreachable:' || h.name) END),"
            " f.attempt, u.discovered_seq, u.id"
            " FROM urls u LEFT JOIN hosts h ON h.id = u.host_id"
            " LEFT JOIN fetches f ON f.id = (SELECT max(g.id) FROM fetches g"
            "   WHERE g.url_id = u.id AND g.seq = u.seq AND g.kind = 'crawl')"
            " ORDER BY u.id"))

    def _implied_pages(self, chunk: int = 1 << 16) -> Iterator[tuple[Any, ...]]:
        """:meth:`iter_pages` of a file whose nodes are ``id_ranges``."""
        table = self.urls()
        host = dict(zip(*self.hosts(), strict=True)).get(0)
        for lo in range(0, len(table), chunk):
            hi = min(len(table), lo + chunk)
            outcomes = [OUTCOMES[c].value if c >= 0 else None
                        for c in table.outcome[lo:hi].tolist()]
            for url, outcome, discovered, node in zip(
                    table.urls[lo:hi], outcomes, table.discovered_seq[lo:hi].tolist(),
                    range(lo, hi), strict=True):
                yield (url, None, None, None, -1, outcome, host, None, None, None, None,
                       None, None, None, discovered, node)
