"""Writing an imported graph into a new crawl database (private: see
:mod:`webcrawl.storage.edgelist` for the layout and the contract).

A graph of :data:`BLOCKED_KINDS` (integer ids, plain names: nothing can crawl it) keeps
its links in ``link_blocks`` and its nodes in ``id_ranges`` (ids) or ``urls`` rows
(names); a graph of URLs or reversed hosts has the crawl's layout, a ``links`` row a
page, written by a second thread into a private temporary database and copied in
(:func:`write_graph`).  Rows reach SQLite as JSON integer arrays built by Arrow
(``json_each``) plus int32 blobs sliced by ``substr``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from webcrawl.storage._edgegraph import NO_HOST, Graph, urls_and_hosts
from webcrawl.storage._edgeparse import remap_into, sources_into
from webcrawl.storage._idranges import IdRanges
from webcrawl.storage._sqlite import SCHEMA_VERSION, map_error, schema_sql, sqlite_uri

__all__ = ["BLOCKED_KINDS", "LINK_CHUNK", "NODE_CHUNK", "Written", "write_graph"]

#: Nodes per INSERT statement: bounds the JSON text SQLite parses at once, and its
#: copies (Arrow's, Python's, SQLite's) held while the two writers run together.
NODE_CHUNK = 1 << 20
#: Links per INSERT statement: their int32 blob (32 MB, copied once more by SQLite)
#: stays far below SQLite's 1 GB limit on one value, whatever the graph's size.
LINK_CHUNK = 1 << 23
#: SQLite page size of an imported database (the largest SQLite allows).
PAGE_SIZE = 65536
#: SQLite cache of each connection while writing (negative: KiB): pages beyond it
#: go to the file (the links' temporary database: to a temporary file).
CACHE_KB = -262144
#: Cache of the target while the links are copied in (appended in key order).
XFER_CACHE_KB = -16384


def _create(path: Path, blocked: bool) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(sqlite_uri(path, "rwc"), uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise map_error(exc, path, "creating") from exc
    _bulk_schema(conn, blocked)
    created = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)",
                     [("schema_version", str(SCHEMA_VERSION)), ("created_at", created)])
    return conn


#: The ``urls`` column as ``schema.sql`` declares it, and as a file whose links are in
#: ``link_blocks`` declares it (no UNIQUE index: see ``schema.sql``).
_UNIQUE_URL = "url            TEXT NOT NULL UNIQUE,"
_PLAIN_URL = "url            TEXT NOT NULL,       "


def _schema(blocked: bool) -> str:
    """``schema.sql``, with ``urls.url`` not UNIQUE for a graph stored in blocks."""
    script = schema_sql()
    if blocked:
        assert _UNIQUE_URL in script
        script = script.replace(_UNIQUE_URL, _PLAIN_URL, 1)
    return script


def _bulk_schema(conn: sqlite3.Connection, blocked: bool = False) -> None:
    """Settings for a bulk write into a file no one else sees, then the schema."""
    # A private temporary file, renamed into place only when complete: no journal and
    # no sync needed while it fills (a crash leaves the temporary file, never the db).
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
    # Large pages: a third less CPU for the bulk inserts than the 4 KB default (and
    # fewer, longer reads for the loader); SQLite readers and writers take any size.
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    conn.execute(f"PRAGMA cache_size = {CACHE_KB}")
    conn.executescript(f"BEGIN;\n{_schema(blocked)}\nCOMMIT;")



def _json_ints(values: np.ndarray) -> str:
    """A JSON array of integers, built in Arrow (C++): no Python object per value.

    Feeding SQLite one JSON text through ``json_each`` inserts rows at C speed; a
    Python tuple per row (``executemany``) costs about as much again as the insert.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if values.size == 0:
        return "[]"
    text = pc.cast(pa.array(values), pa.string())
    offsets = pa.array([0, len(text)], pa.int32())
    joined: str = pc.binary_join(pa.ListArray.from_arrays(offsets, text), ",")[0].as_py()
    return f"[{joined}]"


def _chunks(indptr: np.ndarray) -> list[tuple[int, int]]:
    """Node ranges of at most NODE_CHUNK nodes and LINK_CHUNK links (one node more
    only if a single node has more links)."""
    n = indptr.size - 1
    out = []
    lo = 0
    while lo < n:
        cap = int(np.searchsorted(indptr, indptr[lo] + LINK_CHUNK, side="right")) - 1
        hi = max(min(n, lo + NODE_CHUNK, cap), lo + 1)
        out.append((lo, hi))
        lo = hi
    return out


#: Kinds of names whose graphs are stored in ``link_blocks`` (``schema.sql``): those
#: nothing can crawl (no URLs), so no ``links`` row a page and no url index is needed.
BLOCKED_KINDS = frozenset({"ids", "names"})
#: Links a ``link_blocks`` row holds (``schema.sql``).
LINK_BLOCK = 1024
#: ``link_blocks`` rows an INSERT statement writes.
BLOCKS_A_STATEMENT = 64
_BLOCK_SQL = ("INSERT INTO link_blocks (first, src, dst) SELECT ?3 + value * ?5,"
              " substr(?1, value * ?5 * 4 + 1, ?5 * 4), substr(?2, value * ?5 * 4 + 1, ?5 * 4)"
              " FROM json_each(?4)")


def _write_blocks(conn: sqlite3.Connection, parts: Sequence[np.ndarray],
                  remap: np.ndarray | None, indptr: np.ndarray) -> None:
    """The ``link_blocks`` rows of the links grouped by source page (``indptr``), whose
    destinations are ``parts`` (in that order) through ``remap`` (None: as they are).

    LINK_CHUNK links at a time are built into one of two reused pairs of buffers by a
    second thread (remapped destinations, sources) while SQLite inserts the previous
    chunk, :data:`BLOCKS_A_STATEMENT` rows a statement: both run without the GIL
    (compiled loops, SQLite), on two cores, and no memory is first touched per chunk."""
    total = int(indptr[-1])
    step = max(LINK_BLOCK, LINK_CHUNK - LINK_CHUNK % LINK_BLOCK)
    buffers = [(np.empty(min(step, total), "<i4"), np.empty(min(step, total), "<i4"))
               for _ in range(2)]
    bounds = np.cumsum([0] + [p.size for p in parts])

    def build(lo: int, slot: int) -> tuple[Any, Any]:
        hi = min(total, lo + step)
        src, dst = (b[:hi - lo] for b in buffers[slot])
        sources_into(src, indptr, lo)
        k = int(np.searchsorted(bounds, lo, side="right")) - 1
        pos = lo
        while pos < hi:  # the destinations, from the parts the range spans
            take = min(hi, int(bounds[k + 1])) - pos
            start = pos - int(bounds[k])
            remap_into(dst[pos - lo:pos - lo + take], parts[k][start:start + take], remap)
            pos += take
            k += 1
        return src, dst

    starts = list(range(0, total, step))
    # Each statement binds BLOCKS_A_STATEMENT blocks: SQLite copies a bound value, and
    # a copy of 32 MB is fresh memory each time (30M links: 55k page faults, 0.2 s of
    # system time, against 4k for 256 KB values).
    per = BLOCKS_A_STATEMENT * LINK_BLOCK
    keys = _json_ints(np.arange(BLOCKS_A_STATEMENT))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-blocks") as pool:
        ahead = pool.submit(build, 0, 0) if starts else None
        for i, lo in enumerate(starts):
            assert ahead is not None
            src, dst = ahead.result()
            if i + 1 < len(starts):
                ahead = pool.submit(build, starts[i + 1], (i + 1) % 2)
            try:
                for at in range(0, src.size, per):
                    size = min(per, src.size - at)
                    blocks = -(-size // LINK_BLOCK)
                    conn.execute(_BLOCK_SQL, (src[at:at + size].data, dst[at:at + size].data,
                                              lo + at, keys if blocks == BLOCKS_A_STATEMENT
                                              else _json_ints(np.arange(blocks)), LINK_BLOCK))
            except BaseException:
                ahead.cancel()
                raise


def _write_links(conn: sqlite3.Connection, dst: np.ndarray, indptr: np.ndarray,
                 counts: np.ndarray, stop: threading.Event) -> None:
    """The ``links`` rows: each page's slice of one little-endian int32 blob per chunk,
    addressed by a JSON array of ``byte start << 32 | bytes`` (0: no links).  Stops
    between chunks once ``stop`` is set (the other writer failed or was interrupted)."""
    link_sql = ("INSERT INTO links (src, dst) SELECT key + ?3,"
                " substr(?2, (value >> 32) + 1, value & 4294967295)"
                " FROM json_each(?1) WHERE value != 0")
    dst_le = dst.astype("<i4", copy=False)
    for lo, hi in _chunks(indptr):
        if stop.is_set():
            return
        base = int(indptr[lo])
        start = (indptr[lo:hi] - base) * 4
        size = counts[lo:hi].astype(np.int64) * 4
        packed = np.where(size > 0, (start << 32) | size, 0)
        # A view: the sqlite3 module binds any buffer (SQLite makes its one copy).
        blob = dst_le[base:int(indptr[hi])].data
        conn.execute(link_sql, (_json_ints(packed), blob, lo))


def _links_database(db: Path, graph: Graph, indptr: np.ndarray, counts: np.ndarray,
                    stop: threading.Event) -> sqlite3.Connection:
    """A private temporary database holding the ``links`` rows (written by a second
    thread, which also remaps the destinations).  ``""`` is SQLite's anonymous
    database: its pages stay in the cache and spill to a file SQLite unlinks as soon
    as it opens it, so a killed import leaves nothing of it."""
    dst = graph.grouped_dst()
    graph.dst = [dst]  # the parsed parts are no longer needed: free them
    conn = sqlite3.connect("", isolation_level=None, check_same_thread=False)
    try:
        _bulk_schema(conn)
        conn.execute("BEGIN")
        _write_links(conn, dst, indptr, counts, stop)
        conn.execute("COMMIT")
    except BaseException as exc:
        conn.close()
        if isinstance(exc, sqlite3.Error):
            raise map_error(exc, db, "writing") from exc
        raise
    return conn


class Written(NamedTuple):
    """What :func:`write_graph` wrote."""

    pages: int
    pages_with_links: int
    hosts: int


def write_graph(temp: Path, db: Path, graph: Graph, seed_ids: np.ndarray,
                edges: Path, vertices: str | Path | None, all_pages: bool,
                say: Callable[[str], None]) -> Written:
    """Write the graph into ``temp`` (a new file); every node a page (outcome
    ``fetched``) if ``all_pages``, else the nodes with out-links.

    Two SQLite connections work at once, on the machine's two cores (the ``sqlite3``
    module releases the GIL while a statement runs, and each table is one or a few
    statements): this thread writes ``urls``, ``hosts`` and ``meta`` into ``temp``,
    a second one the ``links`` rows into a private temporary database.  The links
    are then copied into ``temp`` with ``INSERT INTO ... SELECT *`` (SQLite's
    transfer optimisation: records copied as they are, in key order, about half the
    cost of inserting them).  A graph of :data:`BLOCKED_KINDS` goes to
    :func:`_write_blocked` instead.
    """
    n = graph.n
    counts = graph.counts
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    fetched = (counts > 0).view(np.uint8)
    with_links = int(np.count_nonzero(fetched))
    if all_pages:
        fetched = np.ones(n, np.uint8)
    pages = n if all_pages else with_links
    if graph.kind in BLOCKED_KINDS:
        hosts = _write_blocked(temp, db, graph, indptr, fetched, seed_ids, edges, vertices, say)
        say(f"wrote {graph.m:,} links of {pages:,} pages")
        return Written(pages, with_links, hosts)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-links") as pool:
        stop = threading.Event()
        links = pool.submit(_links_database, db, graph, indptr, counts, stop)
        try:
            hosts = _write_nodes(temp, db, graph, fetched, seed_ids, edges, vertices)
            say(f"wrote {n:,} nodes")
            aux = links.result()
        except BaseException:
            stop.set()  # and wait for the statement under way (at most one chunk)
            if not links.cancel() and links.exception() is None:
                links.result().close()
            raise
    try:
        aux.execute("ATTACH DATABASE ? AS dest", (str(temp),))
        aux.execute("PRAGMA dest.journal_mode = OFF")
        aux.execute("PRAGMA dest.synchronous = OFF")
        # The copy appends: a small cache is enough, and keeps a second copy of the
        # links out of memory (the pages go to the file as they fill).
        aux.execute(f"PRAGMA dest.cache_size = {XFER_CACHE_KB}")
        aux.execute("BEGIN")
        aux.execute("INSERT INTO dest.links SELECT * FROM main.links")
        aux.execute("COMMIT")
        aux.execute("DETACH DATABASE dest")
        # The file's readers and writers use WAL (schema.sql): set it, as a crawl would.
        with closing(sqlite3.connect(sqlite_uri(temp, "rw"), uri=True,
                                     isolation_level=None)) as conn:
            conn.execute("PRAGMA journal_mode = WAL")
    except sqlite3.Error as exc:
        raise map_error(exc, db, "writing") from exc
    finally:
        aux.close()
    say(f"wrote {graph.m:,} links of {pages:,} pages")
    return Written(pages, with_links, hosts)


def _write_blocked(temp: Path, db: Path, graph: Graph, indptr: np.ndarray,
                   fetched: np.ndarray, seed_ids: np.ndarray, edges: Path,
                   vertices: str | Path | None, say: Callable[[str], None]) -> int:
    """Write a graph of :data:`BLOCKED_KINDS` into ``temp``: its nodes (``id_ranges``
    rows, or ``urls`` rows for names), then its ``link_blocks``.

    The blocks are a few hundred rows a million links, so they are written straight
    into ``temp`` after the nodes: writing them into a second database beside the
    nodes and copying them in cost more (30M links at load 7: 5.9 CPU-s and 21 s
    wall for the whole import, against 4.3 and 13).  A file grouped by source page
    already (as published files are) is remapped part by part as the blocks are
    built; another is grouped first.  Returns the host count.
    """
    hosts = _write_nodes(temp, db, graph, fetched, seed_ids, edges, vertices, blocked=True)
    say(f"wrote {graph.n:,} nodes")
    if graph.order is None:  # grouped already: the parts through the remap
        parts, remap = graph.dst, graph.remap
    else:
        parts, remap = [graph.grouped_dst()], None
        graph.dst = parts  # the parsed parts are no longer needed: free them
    try:
        with closing(sqlite3.connect(sqlite_uri(temp, "rw"), uri=True,
                                     isolation_level=None)) as conn:
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("PRAGMA synchronous = OFF")
            conn.execute(f"PRAGMA cache_size = {XFER_CACHE_KB}")
            conn.execute("BEGIN")
            _write_blocks(conn, parts, remap, indptr)
            conn.execute("COMMIT")
            # The file's readers and writers use WAL (schema.sql), as a crawl would.
            conn.execute("PRAGMA journal_mode = WAL")
    except sqlite3.Error as exc:
        raise map_error(exc, db, "writing") from exc
    return hosts


def _write_nodes(temp: Path, db: Path, graph: Graph, fetched: np.ndarray,
                 seed_ids: np.ndarray, edges: Path, vertices: str | Path | None,
                 *, blocked: bool = False) -> int:
    """Create ``temp`` with its ``urls``, ``hosts`` and ``meta`` rows; the host count.

    ``fetched`` flags the pages (one byte a node); a graph of integer ids has no
    ``urls`` rows, and ``meta`` ``pages`` says which nodes the reader takes for pages
    (``schema.sql``)."""
    n = graph.n
    host_names: dict[str, int] = {}
    urls: list[str] | None = None
    if graph.kind == "ids":
        host_names[NO_HOST] = 0
        url_sql, host_sql = "CAST(value AS TEXT)", "0"
    elif graph.kind == "names":
        host_names[NO_HOST] = 0
        urls = graph.names
        url_sql, host_sql = "value", "0"
    else:
        urls, host_of = urls_and_hosts(graph.names or [], graph.kind)
        host_ids = [host_names.setdefault(h, len(host_names)) for h in host_of]
        url_sql, host_sql = "value->>0", "value->>1"
    # Flags (a blob, one byte a node; substr() of a BLOB is O(1)): 1 = has out-links.
    node_sql = ("INSERT INTO urls (id, url, host_id, depth, discovered_seq, outcome)"
                f" SELECT key + ?3, {url_sql}, {host_sql}, -1, 0,"
                " CASE WHEN substr(?2, key + 1, 1) = x'01' THEN 'fetched' END FROM json_each(?1)")
    conn = _create(temp, blocked)
    try:
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO hosts (id, name) VALUES (?, ?)",
                         [(i, h) for h, i in host_names.items()])
        if graph.ids is not None:  # no urls rows: their names are the ids
            IdRanges.from_ids(graph.ids).write(conn)
        else:
            for lo in range(0, n, NODE_CHUNK):
                hi = min(n, lo + NODE_CHUNK)
                if graph.kind == "names":
                    assert urls is not None
                    text = json.dumps(urls[lo:hi])
                else:
                    assert urls is not None
                    text = json.dumps(list(zip(urls[lo:hi], host_ids[lo:hi], strict=True)))
                conn.execute(node_sql, (text, fetched[lo:hi].tobytes(), lo))
            conn.execute("UPDATE urls SET discovered_seq = -1 WHERE id IN"
                         " (SELECT value FROM json_each(?))", (json.dumps(seed_ids.tolist()),))
        seed_urls = [urls[i] if urls is not None else graph.name(i) for i in seed_ids.tolist()]
        meta = {"source": "edges", "edges_file": str(edges),
                "vertices_file": "" if vertices is None else str(vertices),
                "names": graph.kind, "imported_edges": str(graph.m),
                "seeds": json.dumps(seed_urls),
                "pages": "all" if bool(fetched.all()) else "sources"}
        conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                         list(meta.items()))
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise map_error(exc, db, "writing") from exc
    finally:
        conn.close()
    return len(host_names)
