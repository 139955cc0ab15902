"""Read-only, synchronous access to a crawl database, as numpy arrays.

:class:`CrawlReader` opens the file with a read-only ``file:...?mode=ro`` URI, so an
analysis process can read a crawl while the crawler writes it (WAL).  Each method is
one query; wrap several in :meth:`CrawlReader.snapshot` to see one consistent state
of a crawl that is still being written.

Array conventions: ids are int64; SQL ``NULL`` becomes ``-1`` in integer columns and
``nan`` in float columns; outcomes are int8 codes into :data:`OUTCOMES` (``-1``: in
the frontier, no outcome yet).  The link arrays come straight from the per-page int32
BLOBs of the ``links`` table, or from the blocks of ``link_blocks`` of an imported
graph (see ``schema.sql``), concatenated by SQLite a range at a time into one array:
no Python loop over links.  An imported graph of integer ids has no ``urls`` rows
(``id_ranges`` names its nodes): every method reads it as if it had them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from webcrawl.storage._idranges import IdRanges
from webcrawl.storage._sqlite import check_crawl_db, map_error, sqlite_uri
from webcrawl.storage.arrays import FloatArray, Int8Array, IntArray, ObjectArray
from webcrawl.storage.errors import StoreError
from webcrawl.storage.records import FetchKind, Outcome


def _folder_read_only(path: Path) -> bool:
    """True if the folder of ``path`` cannot be written (read-only mount or mode)."""
    folder = path.absolute().parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        pass
    return not os.access(folder, os.W_OK)


# UrlStrings is public but not yet in the package facade (webcrawl.storage).
__all__ = ["FETCH_KINDS", "OUTCOMES", "CrawlReader", "FetchTable", "LinkArrays", "UrlTable"]

#: Outcome of each int8 outcome code (code ``i`` is ``OUTCOMES[i]``; ``-1``: none).
OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)
#: Fetch kind of each int8 kind code.
FETCH_KINDS: tuple[FetchKind, ...] = tuple(FetchKind)

_LINK_DTYPE = np.dtype("<i4")
#: Bytes of link arrays SQLite concatenates at once for :meth:`CrawlReader.links_csr`.
BLOB_CHUNK = 1 << 27


def _code_sql(column: str, values: tuple[str, ...]) -> str:
    # The values are our enum constants, never user data.
    whens = " ".join(f"WHEN '{v}' THEN {i}" for i, v in enumerate(values))
    return f"CASE {column} {whens} ELSE -1 END"


def outcome_code(outcome: Outcome | str) -> int:
    """The int8 code of an outcome in the arrays of this module."""
    return OUTCOMES.index(Outcome(outcome))


class UrlStrings(Sequence[str]):
    """URLs held as one Arrow string array (UTF-8 bytes and offsets), read as a sequence.

    About 8 bytes a URL besides its text, where a ``list`` of ``str`` costs about 57
    (18.5M ids of an imported graph: 0.3 GB instead of 1.2).  Indexing gives ``str``
    (a slice: a ``list``); :meth:`take` selects by position, :attr:`arrow` is the
    array (for Parquet, pyarrow compute).  Equal to any sequence of the same strings.
    """

    __slots__ = ("arrow",)

    def __init__(self, arrow: Any) -> None:
        self.arrow = arrow

    @classmethod
    def from_list(cls, values: Sequence[str]) -> UrlStrings:
        import pyarrow as pa

        return cls(pa.array(list(values), pa.large_string()))

    @classmethod
    def from_joined(cls, joined: str, n: int) -> UrlStrings | None:
        """The ``n`` URLs of NUL-separated ``joined``; None if it does not hold ``n``."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if n == 0:
            return cls.from_list([]) if not joined else None
        parts = pc.split_pattern(pa.array([joined], pa.large_string()), "\x00")[0].values
        return cls(parts) if len(parts) == n else None

    def take(self, positions: np.ndarray) -> UrlStrings:
        """The URLs at ``positions`` (int array), in that order."""
        import pyarrow as pa

        return UrlStrings(self.arrow.take(pa.array(np.asarray(positions, dtype=np.int64))))

    def __len__(self) -> int:
        return len(self.arrow)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.arrow[index].to_pylist()
        value: str = self.arrow[int(index)].as_py()
        return value

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self.arrow), 1 << 16):
            yield from self.arrow[start:start + (1 << 16)].to_pylist()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UrlStrings):
            return bool(self.arrow.equals(other.arrow))
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other,
                                                                           strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        head = ", ".join(repr(u) for u in self[:3])
        return f"UrlStrings([{head}{', ...' if len(self) > 3 else ''}], n={len(self)})"


@dataclass(frozen=True, slots=True, eq=False)
class UrlTable:
    """The ``urls`` table as columns, in id order."""

    ids: np.ndarray             # int64
    urls: UrlStrings            # empty when read with ``text=False``
    host_ids: np.ndarray        # int64
    depth: np.ndarray           # int32
    discovered_seq: np.ndarray  # int64; -1 for seeds
    outcome: np.ndarray         # int8 code into OUTCOMES; -1 in the frontier
    seq: np.ndarray             # int64 seq of the final fetch; -1 if never taken

    def __len__(self) -> int:
        return int(self.ids.size)

    def has_outcome(self, outcome: Outcome | str) -> np.ndarray:
        """Boolean mask of the URLs whose outcome is ``outcome``."""
        return np.asarray(self.outcome == outcome_code(outcome))

    @property
    def in_frontier(self) -> np.ndarray:
        """Boolean mask of the URLs without an outcome yet."""
        return np.asarray(self.outcome < 0)


@dataclass(frozen=True, slots=True, eq=False)
class LinkArrays:
    """Per-page id arrays in CSR form: page ``src[k]`` has ``dst[indptr[k]:indptr[k+1]]``."""

    src: np.ndarray     # int64 page ids, ascending
    indptr: np.ndarray  # int64, len(src) + 1
    dst: np.ndarray     # int32 destination ids

    @property
    def edge_src(self) -> np.ndarray:
        """The source id of every entry of ``dst`` (int64)."""
        return np.repeat(self.src, np.diff(self.indptr))


@dataclass(frozen=True, slots=True)
class FetchTable:
    """The ``fetches`` table as columns, one array per column, in insertion order.

    Integer columns use -1 for NULL (``changed``: -1 unknown, 0, 1), floats nan;
    ``outcome`` and ``kind`` are int8 codes into :data:`OUTCOMES` and
    :data:`FETCH_KINDS`; text columns are object arrays (None for NULL).  Columns are
    attributes; ``table["name"]`` reads one by name too.
    """

    url_id: IntArray
    seq: IntArray
    started_at: FloatArray
    ended_at: FloatArray
    status: IntArray
    size: IntArray
    attempt: IntArray
    priority: FloatArray
    rank: IntArray
    changed: Int8Array
    outcome: Int8Array
    kind: Int8Array
    content_type: ObjectArray
    digest: ObjectArray
    etag: ObjectArray
    last_modified: ObjectArray
    error: ObjectArray
    strategy: ObjectArray

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.__dataclass_fields__:
            raise KeyError(name)
        value: np.ndarray = getattr(self, name)
        return value

    def __len__(self) -> int:
        return int(self.url_id.size)


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
        # Re-entrant: only the outermost snapshot opens and ends the read transaction.
        outer = self._conn.in_transaction is False
        if outer:
            self._run("BEGIN")
        try:
            yield self
        finally:
            if outer:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("COMMIT")

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise map_error(exc, self.path, "reading") from exc

    def _all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise map_error(exc, self.path, "reading") from exc

    # -- small tables ---------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        return dict(self._all("SELECT key, value FROM meta"))

    def _has_table(self, name: str) -> bool:
        # A version 1 file (webcrawl.storage._sqlite.MIGRATABLE) lacks the tables version 2 added.
        return bool(self._all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                              (name,)))

    def link_cuts(self) -> list[tuple[int, int, int]]:
        """Pages whose links were cut at ``links_max_per_page``: (url id, kept, dropped)."""
        if not self._has_table("link_cuts"):
            return []
        return [tuple(r) for r in self._all("SELECT src, kept, dropped FROM link_cuts"
                                             " ORDER BY src")]

    def url_sources(self) -> list[tuple[int, str, str]]:
        """URLs found by another source than links and seeds: (url id, source, via)."""
        if not self._has_table("url_sources"):
            return []
        return [tuple(r) for r in self._all("SELECT url_id, source, via FROM url_sources"
                                             " ORDER BY url_id")]

    def duplicates(self) -> tuple[np.ndarray, np.ndarray]:
        """Pages recorded as duplicates (``urls.duplicate_of``): their ids and the ids of
        the pages whose bodies they repeat (int64, by id).  A file written before
        schema version 5 has none."""
        columns = {r[1] for r in self._all("PRAGMA table_info(urls)")}
        if "duplicate_of" not in columns:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        rows = self._all("SELECT id, duplicate_of FROM urls WHERE duplicate_of IS NOT NULL"
                         " ORDER BY id")
        pairs = np.array(rows, dtype=np.int64).reshape(-1, 2)
        return pairs[:, 0].copy(), pairs[:, 1].copy()

    def _id_ranges(self) -> IdRanges | None:
        """The ``id_ranges`` of an imported graph of integer ids (None: its nodes are
        ``urls`` rows).  Read once: only the importer writes the table."""
        if self._ranges is False:
            try:
                self._ranges = IdRanges.read(self._conn)
            except sqlite3.Error as exc:
                raise map_error(exc, self.path, "reading") from exc
        assert self._ranges is not True
        return self._ranges

    def seeds(self) -> np.ndarray:
        """URL ids of the seeds (``discovered_seq = -1``), ascending."""
        ranges = self._id_ranges()
        if ranges is not None:  # the seeds' ids are in meta
            names = [int(u) for u in json.loads(self.meta().get("seeds", "[]"))]
            nodes = ranges.nodes(np.array(names, dtype=np.int64))
            return np.unique(nodes[nodes >= 0])
        rows = self._all("SELECT id FROM urls WHERE discovered_seq = -1 ORDER BY id")
        return np.array([r[0] for r in rows], dtype=np.int64)

    def seed_urls(self) -> list[str]:
        """The seed URLs as given to the crawl (``meta.seeds``), else from ``urls``."""
        raw = self.meta().get("seeds")
        if raw is not None:
            return [str(u) for u in json.loads(raw)]
        return [r[0] for r in self._all("SELECT url FROM urls WHERE discovered_seq = -1"
                                        " ORDER BY id")]

    def hosts(self) -> tuple[np.ndarray, list[str]]:
        """Host ids (int64, ascending) and their names (``host[:port]``)."""
        rows = self._all("SELECT id, name FROM hosts ORDER BY id")
        return np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows]

    # -- urls -----------------------------------------------------------------------

    def urls(self, *, text: bool = True) -> UrlTable:
        """The ``urls`` table as columns (``text=False`` skips the URL strings)."""
        outcome = _code_sql("outcome", tuple(o.value for o in OUTCOMES))
        exprs = ["id", "host_id", "depth", "discovered_seq", outcome, "ifnull(seq, -1)"]
        urls = UrlStrings.from_list([])
        ranges = self._id_ranges()
        if ranges is not None:
            return self._implied_urls(ranges, text=text)
        if text:
            ints, urls = self._url_strings(exprs, "urls NOT INDEXED")
        else:
            ints, _ = self._columns(exprs, "urls NOT INDEXED")
        ids, host, depth, dseq, code, seq = ints
        order = _id_order(ids)
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
            self._out_degrees(n) > 0
        outcome = np.where(fetched, outcome_code(Outcome.FETCHED), -1).astype(np.int8)
        discovered = np.zeros(n, dtype=np.int64)
        discovered[self.seeds()] = -1
        urls = UrlStrings(pa.array(ranges.names()).cast(pa.large_string())) if text else \
            UrlStrings.from_list([])
        return UrlTable(ids=np.arange(n, dtype=np.int64), urls=urls,
                        host_ids=np.zeros(n, dtype=np.int64),
                        depth=np.full(n, -1, dtype=np.int32), discovered_seq=discovered,
                        outcome=outcome, seq=np.full(n, -1, dtype=np.int64))

    def _columns(self, exprs: list[str], source: str,
                 text: str | None = None) -> tuple[list[np.ndarray], list[str]]:
        """Integer columns (and one text column) of ONE scan, each as one ``group_concat``.

        Parsing one comma-separated string per column with numpy is 2-3x faster than
        building a Python tuple per row.  Every expression must be non-NULL
        (``group_concat`` skips NULLs); all columns come from the same scan, so they
        stay aligned (``source`` says ``NOT INDEXED`` to scan in rowid order; callers
        still check the order).  The text column is joined with NUL; if a value
        holds a NUL, it is read again row by row.
        """
        parts = [f"group_concat({e})" for e in exprs]
        if text is not None:
            parts.append(f"group_concat({text}, char(0))")
        row = self._all(f"SELECT {', '.join(parts)} FROM {source}")[0]
        ints = [_parse_numbers(v, np.int64) for v in row[:len(exprs)]]
        if text is None:
            return ints, []
        joined = row[-1]
        values = [] if joined is None else str(joined).split("\x00")
        if len(values) != (ints[0].size if ints else len(values)):
            values = [v for (v,) in self._run(f"SELECT {text} FROM {source}")]
        return ints, values

    def _url_strings(self, exprs: list[str],
                     source: str) -> tuple[list[np.ndarray], UrlStrings]:
        """:meth:`_columns` with the ``url`` column as :class:`UrlStrings`."""
        parts = [f"group_concat({e})" for e in exprs] + ["group_concat(url, char(0))"]
        row = self._all(f"SELECT {', '.join(parts)} FROM {source}")[0]
        ints = [_parse_numbers(v, np.int64) for v in row[:len(exprs)]]
        joined = row[-1]
        del row
        urls = UrlStrings.from_joined("" if joined is None else str(joined),
                                      int(ints[0].size))
        if urls is None:  # a URL holds a NUL (never from the crawler): row by row
            urls = UrlStrings.from_list([v for (v,) in self._run(f"SELECT url FROM {source}")])
        return ints, urls

    def url_strings(self, ids: np.ndarray | list[int]) -> list[str]:
        """The URLs of the given ids, in the given order (KeyError if one is unknown)."""
        id_list = [int(i) for i in ids]
        if self._id_ranges() is not None:
            found = self._url_map(set(id_list))
            return [found[i] for i in id_list]
        found = dict(self._all("SELECT id, url FROM urls WHERE id IN"
                               " (SELECT value FROM json_each(?))", (json.dumps(id_list),)))
        return [found[i] for i in id_list]

    # -- links ----------------------------------------------------------------------

    def links_csr(self, as_of_seq: int | None = None) -> LinkArrays:
        """Every page's out-links (``links.dst``), in document order.

        ``as_of_seq``: each page's link set as it was after the fetches of crawl
        sequence numbers up to ``as_of_seq`` (from ``link_versions``; a page whose
        first links came later has none).  Default: the latest version.
        """
        blocks = self._block_csr()
        if blocks is not None:  # an imported graph: one version, without a fetch (seq -1)
            return blocks if as_of_seq is None or as_of_seq >= -1 else _no_links()
        if as_of_seq is None:
            return self._blob_csr("dst")
        return self._versions_csr("dst", as_of_seq)

    def nofollow_csr(self, as_of_seq: int | None = None) -> LinkArrays:
        """Every page's nofollow destination ids (``links.nofollow``); ``as_of_seq`` as in
        :meth:`links_csr`."""
        if as_of_seq is None:
            return self._blob_csr("nofollow")
        return self._versions_csr("nofollow", as_of_seq)

    def _block_csr(self) -> LinkArrays | None:
        """The links of ``link_blocks`` (None if the file has none: its links are rows).

        The destinations are concatenated by SQLite :data:`BLOB_CHUNK` bytes at a time
        into one array; the sources only counted, range by range (no array of them).
        """
        total = self._block_total()
        if total is None:
            return None
        ranges = self._id_ranges()
        if ranges is not None:
            nodes = ranges.n
        else:
            top = self._all("SELECT max(id) FROM urls")[0][0]
            nodes = 1 + (-1 if top is None else int(top))
        dst = np.empty(total, dtype=_LINK_DTYPE)
        counts = self._out_degrees(nodes, dst)
        pages = np.flatnonzero(counts)
        indptr = np.zeros(pages.size + 1, dtype=np.int64)
        np.cumsum(counts[pages], out=indptr[1:])
        return LinkArrays(src=pages.astype(np.int64), indptr=indptr, dst=dst)

    def _block_total(self) -> int | None:
        """The number of links in ``link_blocks`` (None: the file has no blocks)."""
        if not self._has_table("link_blocks"):
            return None
        last = self._all("SELECT first + length(dst) / 4 FROM link_blocks"
                         " ORDER BY first DESC LIMIT 1")
        return int(last[0][0]) if last else None

    def _out_degrees(self, nodes: int, dst: np.ndarray | None = None) -> np.ndarray:
        """Out-link count of each of ``nodes`` nodes in ``link_blocks`` (int64), the
        sources only counted, range by range (no array of them); with ``dst`` (as long
        as the blocks' links), their destinations are copied into it."""
        counts = np.zeros(nodes, dtype=np.int64)
        total = self._block_total() or 0
        step = BLOB_CHUNK // _LINK_DTYPE.itemsize
        column = "''" if dst is None else "group_concat(dst, '')"
        sql = (f"SELECT group_concat(src, ''), {column} FROM link_blocks"
               " WHERE first >= ? AND first < ?")
        self._conn.text_factory = bytes
        try:
            pos = 0
            for lo in range(0, total, step):
                src_bytes, dst_bytes = self._run(sql, (lo, lo + step)).fetchone()
                src = np.frombuffer(src_bytes or b"", dtype=_LINK_DTYPE)
                if dst is not None:
                    part = np.frombuffer(dst_bytes or b"", dtype=_LINK_DTYPE)
                    dst[pos:pos + part.size] = part
                    del part
                if src.size:
                    low = int(src[0])  # ascending: count within the range only
                    counts[low:int(src[-1]) + 1] += np.bincount(src - low)
                pos += src.size
                del src_bytes, dst_bytes, src
        finally:
            self._conn.text_factory = str
        if pos != total:
            raise StoreError(f"{self.path}: link_blocks holds {pos} links, not {total}")
        return counts

    def _versions_csr(self, column: str, as_of_seq: int) -> LinkArrays:
        """Per page, the newest link version whose fetch has ``seq <= as_of_seq``."""
        tables = {r[0] for r in self._all("SELECT name FROM sqlite_master WHERE type='table'")}
        if "link_versions" not in tables:  # a version-1 file: one version per page
            sql = (f"SELECT l.src, l.{column} FROM links l WHERE l.{column} IS NOT NULL"
                   " ORDER BY l.src")
            params: tuple[Any, ...] = ()
        else:
            # Versions without a fetch (imported graphs) count as seq -1.
            sql = (
                f"SELECT src, {column}, max(s) FROM ("
                f" SELECT l.src, l.{column}, ifnull(f.seq, -1) AS s FROM links l"
                "  LEFT JOIN fetches f ON f.id = l.fetch_id"
                " UNION ALL"
                f" SELECT v.src, v.{column}, ifnull(f.seq, -1) FROM link_versions v"
                "  LEFT JOIN fetches f ON f.id = v.fetch_id)"
                " WHERE s <= ? GROUP BY src ORDER BY src")
            params = (as_of_seq,)
        # SQLite's bare columns of a max() aggregate come from the row of the maximum.
        rows = [r for r in self._all(sql, params) if r[1] is not None]
        src = np.array([r[0] for r in rows], dtype=np.int64)
        nbytes = np.array([len(r[1]) for r in rows], dtype=np.int64)
        indptr = np.zeros(src.size + 1, dtype=np.int64)
        np.cumsum(nbytes // _LINK_DTYPE.itemsize, out=indptr[1:])
        blob = b"".join(r[1] for r in rows)
        return LinkArrays(src=src, indptr=indptr, dst=np.frombuffer(blob, dtype=_LINK_DTYPE))

    def _blob_csr(self, column: str) -> LinkArrays:
        source = f"links NOT INDEXED WHERE {column} IS NOT NULL"
        with self.snapshot():
            (src, nbytes), _ = self._columns(["src", f"length({column})"], source)
            dst = self._joined_blobs(column, src, nbytes)
        order = _id_order(src)
        if order is not None or dst is None:
            # Fallback (never expected): one row per page, joined in Python.
            rows = self._all(f"SELECT src, {column} FROM {source} ORDER BY src")
            src = np.array([r[0] for r in rows], dtype=np.int64)
            nbytes = np.array([len(r[1]) for r in rows], dtype=np.int64)
            dst = np.frombuffer(b"".join([r[1] for r in rows]), dtype=_LINK_DTYPE)
        indptr = np.zeros(src.size + 1, dtype=np.int64)
        np.cumsum(nbytes // _LINK_DTYPE.itemsize, out=indptr[1:])
        return LinkArrays(src=src, indptr=indptr, dst=dst)

    def _joined_blobs(self, column: str, src: np.ndarray,
                      nbytes: np.ndarray) -> np.ndarray | None:
        """All BLOBs of ``column`` concatenated, as one int32 array; None on a mismatch.

        SQLite concatenates the BLOBs of a range of pages at a time (``group_concat``
        with an empty separator: in a UTF-8 database no transcoding happens, and no
        Python object per page), each range at most :data:`BLOB_CHUNK` bytes (SQLite
        refuses a value over 1 GB), copied into the array allocated once: the peak is
        the array plus one range, twice.  None when the lengths do not add up (the
        caller falls back).
        """
        if self._encoding() != "UTF-8" or (src.size > 1 and bool(np.any(src[1:] <= src[:-1]))):
            return None
        total = int(nbytes.sum())
        out = np.empty(total // _LINK_DTYPE.itemsize, dtype=_LINK_DTYPE)
        view = out.view(np.uint8)
        ends = np.cumsum(nbytes)
        cuts = np.searchsorted(ends, np.arange(BLOB_CHUNK, total, BLOB_CHUNK), side="right")
        bounds = np.unique(np.concatenate([[0], np.maximum(cuts, 1), [src.size]]))
        sql = (f"SELECT group_concat({column}, '') FROM links"
               f" WHERE src BETWEEN ? AND ? AND {column} IS NOT NULL")
        self._conn.text_factory = bytes
        try:
            pos = 0
            for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
                if lo >= hi:
                    continue
                value = self._conn.execute(sql, (int(src[lo]), int(src[hi - 1]))).fetchone()[0]
                size = 0 if value is None else len(value)
                if pos + size > total:
                    return None
                view[pos:pos + size] = np.frombuffer(value or b"", dtype=np.uint8)
                pos += size
                del value
        except sqlite3.Error:
            return None
        finally:
            self._conn.text_factory = str
        return out if pos == total else None

    def _encoding(self) -> str:
        return str(self._all("PRAGMA encoding")[0][0])

    # -- fetches --------------------------------------------------------------------

    def fetches(self, kind: FetchKind | str | None = None) -> FetchTable:
        """The ``fetches`` table as typed columns, in insertion order (:class:`FetchTable`)."""
        where, params = ("", ()) if kind is None else (" WHERE kind = ?", (str(FetchKind(kind)),))
        num = self._all(
            "SELECT url_id, seq, started_at, ended_at, ifnull(status, -1), ifnull(size, -1),"
            " attempt, ifnull(priority, 'nan'), ifnull(rank, -1), ifnull(changed, -1), "
            f"{_code_sql('outcome', tuple(o.value for o in OUTCOMES))}, "
            f"{_code_sql('kind', tuple(k.value for k in FETCH_KINDS))} "
            f"FROM fetches{where} ORDER BY id", params)
        arr = np.array(num, dtype=np.float64).reshape(len(num), 12)
        text = self._all("SELECT content_type, digest, etag, last_modified, error, strategy"
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

    def fetch_order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """URLs in the order the crawl took them: ``(url_ids, seqs, fetched_at)``.

        Every URL with a final crawl fetch (``urls.seq`` set), by seq.  ``fetched_at``
        is the ``ended_at`` of its final crawl attempt, to the microsecond (nan if it
        has no fetch row, e.g. a URL excluded by robots.txt without a request).
        """
        with self.snapshot():
            (ids, seqs), _ = self._columns(["id", "seq"], "urls NOT INDEXED WHERE seq IS NOT NULL")
            crawl = "fetches NOT INDEXED WHERE kind = 'crawl'"
            # Times travel as integer microseconds so that they share the one scan.
            (fid, fseq, ended_us), _ = self._columns(
                ["id", "seq", "CAST(round(ended_at * 1e6) AS INTEGER)"], crawl)
        ended = ended_us / 1e6
        order = np.argsort(seqs, kind="stable")
        ids, seqs = ids[order], seqs[order]
        by_id = _id_order(fid)
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
        if self._has_table("link_blocks"):
            yield from self._iter_block_edges(chunk_pages)
        for rows in self._batches("SELECT src, dst, nofollow FROM links WHERE src > ?"
                                  " ORDER BY src LIMIT ?", chunk_pages):
            ids = {r[0] for r in rows}
            for r in rows:
                ids.update(np.frombuffer(r[1], dtype=_LINK_DTYPE).tolist())
            url = self._url_map(ids)
            for src, dst, nofollow in rows:
                nf = set(np.frombuffer(nofollow, dtype=_LINK_DTYPE).tolist()) if nofollow else ()
                src_url = url[src]
                for d in np.frombuffer(dst, dtype=_LINK_DTYPE).tolist():
                    yield src_url, url[d], d in nf

    def _batches(self, sql: str, size: int) -> Iterator[list[Any]]:
        """The rows of ``sql`` (``... WHERE key > ? ORDER BY key LIMIT ?``, the key its
        first column) ``size`` at a time."""
        last = -1
        while True:
            rows = self._all(sql, (last, size))
            if not rows:
                return
            last = rows[-1][0]
            yield rows

    def _url_map(self, ids: set[int]) -> dict[int, str]:
        """The URL of each of ``ids`` (those that are nodes)."""
        ranges = self._id_ranges()
        if ranges is not None:
            nodes = np.array(sorted(ids), dtype=np.int64)
            nodes = nodes[(nodes >= 0) & (nodes < ranges.n)]
            names = ranges.names_of(nodes)
            return dict(zip(nodes.tolist(), (str(v) for v in names.tolist()), strict=True))
        return dict(self._all("SELECT id, url FROM urls WHERE id IN"
                              " (SELECT value FROM json_each(?))", (json.dumps(sorted(ids)),)))

    def _iter_block_edges(self, chunk_blocks: int) -> Iterator[tuple[str, str, bool]]:
        """:meth:`iter_edges` of the ``link_blocks`` rows (never nofollow)."""
        for rows in self._batches("SELECT first, src, dst FROM link_blocks WHERE first > ?"
                                  " ORDER BY first LIMIT ?", chunk_blocks):
            src = np.frombuffer(b"".join(r[1] for r in rows), dtype=_LINK_DTYPE).tolist()
            dst = np.frombuffer(b"".join(r[2] for r in rows), dtype=_LINK_DTYPE).tolist()
            url = self._url_map({*src, *dst})
            for s, d in zip(src, dst, strict=True):
                yield url[s], url[d], False

    def iter_fetches(self) -> Iterator[tuple[Any, ...]]:
        """Yield one row per fetch attempt, in insertion order, with its URL.

        Columns: ``url, url_id, seq, kind, attempt, started_at, ended_at, outcome,
        status, content_type, size, digest, etag, last_modified, error, strategy,
        priority, rank, changed``.
        """
        yield from _rows(self._run(
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
        yield from _rows(self._run(
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


def _no_links() -> LinkArrays:
    return LinkArrays(src=np.zeros(0, dtype=np.int64), indptr=np.zeros(1, dtype=np.int64),
                      dst=np.zeros(0, dtype=_LINK_DTYPE))


def _rows(cursor: sqlite3.Cursor) -> Iterator[Any]:
    """The rows of ``cursor`` without its ``close``: ``yield from cursor`` would close it
    when the generator is dropped, which fails once the reader is closed (a reader of
    ``export ... | head`` gone: "Exception ignored ... closed database")."""
    return iter(cursor.fetchone, None)


def _parse_numbers(joined: str | None, dtype: type[np.generic]) -> np.ndarray:
    """Parse a comma-separated ``group_concat`` result (None: no rows)."""
    if not joined:
        return np.zeros(0, dtype=dtype)
    return np.fromstring(joined, dtype=dtype, sep=",")


def _id_order(ids: np.ndarray) -> np.ndarray | None:
    """None if ``ids`` ascend strictly (scan order = id order), else the sorting order."""
    if ids.size < 2 or bool(np.all(ids[1:] > ids[:-1])):
        return None
    return np.argsort(ids, kind="stable")


#: Column names of :meth:`CrawlReader.iter_pages` rows.
PAGE_COLUMNS = ("url", "status", "seq", "fetched_at", "depth", "outcome", "host",
                "content_type", "size", "digest", "etag", "last_modified", "error",
                "attempts", "discovered_seq", "id")
