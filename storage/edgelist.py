"""Import a published web graph (an edge list) into a crawl database.

The formats researchers publish graphs in, all read by one vectorised path:

* **Edge lines** ``src dst`` separated by spaces or a tab (more columns are ignored,
  so weighted lists work), ``#`` comment lines (SNAP's header), blank lines, plain or
  gzip (by content, not by name).
* **Integer ids** with an optional **vertices file** of ``id name`` lines (space or
  tab; Common Crawl's ``id<TAB>reversed.host`` form, e.g. ``3<TAB>com.example.www``,
  is recognised and turned back into ``http://www.example.com/``), or a one-column
  file of names whose line number is the id (LAW/WebGraph ``.urls`` files).
* **Names directly**: ``http://a/ http://b/`` lines (any non-integer token).

Parsing is pyarrow's multi-threaded CSV reader into Arrow arrays; every step after it
(remapping ids, grouping links by source page, building the per-page int32 link
arrays of ``schema.sql``) is numpy over whole arrays.  The only Python loops are one
per *node* (a row of ``urls`` and of ``links``), never one per edge.

The database it writes is what every analysis reads (see ``schema.sql``): one row
per node in ``urls`` (ids dense from 0, in the order of the input ids, or first
appearance for names), each node's out-links in ``links`` in file order, duplicates
and self-loops kept (the loader drops or collapses them).  Nodes with out-links have
outcome ``fetched`` (their links are known, so a virtual crawl can fetch them); the
others stay discovered (outcome NULL).  There is no fetch order (``urls.seq`` NULL, no
``fetches`` rows): the graph was not crawled by us.  Depth is -1 (unknown).  Seeds
(``discovered_seq = -1``) are the names given, else the first source node of the file.
``meta`` records ``source = edges``, the file names and the counts.
"""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from storage._sqlite import SCHEMA_VERSION, check_db_path, map_error, schema_sql, sqlite_uri
from storage.errors import ConfigError, StoreError
from storage.lock import WriterLock

__all__ = ["EdgeImport", "import_edges", "read_edge_arrays"]

#: Bytes pyarrow hands each parsing thread at once.
BLOCK_SIZE = 16 << 20
#: Names that are hosts written reversed (``com.example.www``), Common Crawl style.
_REVERSED_HOST = re.compile(r"^[a-z0-9-]+(\.[a-z0-9_-]+)+$")
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_NO_HOST = ""


@dataclass(frozen=True, slots=True)
class EdgeImport:
    """What :func:`import_edges` wrote."""

    nodes: int
    edges: int
    pages_with_links: int
    hosts: int
    seconds: float
    names: str           # 'ids', 'urls', 'reversed-hosts' or 'names'

    @property
    def edges_per_second(self) -> float:
        return self.edges / self.seconds if self.seconds > 0 else float("inf")

    def as_dict(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "edges": self.edges,
                "pages_with_links": self.pages_with_links, "hosts": self.hosts,
                "seconds": round(self.seconds, 3), "names": self.names,
                "edges_per_second": round(self.edges_per_second)}


# ---------------------------------------------------------------------------- reading
def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _open_binary(path: Path) -> Any:
    return gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")


def _head(path: Path, size: int = 1 << 16) -> tuple[int, bytes]:
    """Leading comment/blank line count and the first data line (empty if none)."""
    with _open_binary(path) as f:
        head = f.read(size)
    skip = 0
    for line in head.split(b"\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith(b"#"):
            return skip, stripped
        skip += 1
    return skip, b""


def _arrow_source(path: Path) -> Any:
    import pyarrow as pa

    if _is_gzip(path):
        return pa.CompressedInputStream(pa.OSFile(str(path)), "gzip")
    return pa.memory_map(str(path))


def _read_table(path: Path, columns: int, types: dict[str, Any] | None) -> Any:
    """Read ``path`` with pyarrow; returns a table of its first ``columns`` columns.

    Fast path: one delimiter (tab if the first data line has one, else space) and the
    given column types.  On any parse error the file is read again after normalising
    runs of blanks and dropping comment lines anywhere (a regex over the bytes), which
    costs a copy of the file in memory but accepts every whitespace layout.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    skip, first = _head(path)
    if not first:
        return None
    delimiter = "\t" if b"\t" in first else " "
    names = [f"c{i}" for i in range(max(columns, len(re.split(rb"[ \t]+", first))))]
    read = pacsv.ReadOptions(column_names=names, skip_rows=skip, block_size=BLOCK_SIZE)
    parse = pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                               ignore_empty_lines=True)
    keep = names[:columns]
    convert = pacsv.ConvertOptions(include_columns=keep, column_types=types or {},
                                   strings_can_be_null=False, quoted_strings_can_be_null=False)
    try:
        return pacsv.read_csv(_arrow_source(path), read_options=read, parse_options=parse,
                              convert_options=convert)
    except pa.ArrowInvalid:
        pass
    with _open_binary(path) as f:
        data = f.read()
    data = re.sub(rb"[ \t\r\f\v]+", b" ", data)
    data = re.sub(rb"(?m)^ | $", b"", data)
    data = re.sub(rb"(?m)^(#[^\n]*)?\n", b"", data)
    width = max((len(line.split(b" ")) for line in data[:1 << 16].split(b"\n") if line),
                default=columns)
    names = [f"c{i}" for i in range(max(columns, width))]
    read = pacsv.ReadOptions(column_names=names, block_size=BLOCK_SIZE)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                               ignore_empty_lines=True)
    convert = pacsv.ConvertOptions(include_columns=names[:columns], column_types=types or {},
                                   strings_can_be_null=False)
    try:
        return pacsv.read_csv(pa.py_buffer(data), read_options=read, parse_options=parse,
                              convert_options=convert)
    except pa.ArrowInvalid as exc:
        raise ConfigError(f"{path}: cannot parse as {columns}-column lines: "
                          f"{str(exc).splitlines()[0]}") from exc


def read_edge_arrays(path: str | Path) -> tuple[Any, Any]:
    """The two columns of an edge file as Arrow arrays: int64 if every token is an
    integer, else strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

    path = _existing(path)
    table = None
    try:
        table = _read_table(path, 2, {"c0": pa.int64(), "c1": pa.int64()})
    except ConfigError:
        table = None
    if table is None:
        table = _read_table(path, 2, {"c0": pa.string(), "c1": pa.string()})
        if table is None:
            return pa.array([], pa.int64()), pa.array([], pa.int64())
        for dtype in (pa.int64(),):  # integer tokens after all (a comment broke the fast path)
            try:
                return (pc.cast(table["c0"], dtype).combine_chunks(),
                        pc.cast(table["c1"], dtype).combine_chunks())
            except pa.ArrowInvalid:
                pass
    return table["c0"].combine_chunks(), table["c1"].combine_chunks()


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no such file: {path}")
    return path


def _read_vertices(path: str | Path) -> tuple[np.ndarray, list[str]]:
    """Vertex ids (int64) and names from ``id name`` lines, or names by line number."""
    import pyarrow as pa

    path = _existing(path)
    _, first = _head(path)
    if not first:
        return np.zeros(0, np.int64), []
    if len(re.split(rb"[ \t]+", first)) == 1:
        table = _read_table(path, 1, {"c0": pa.string()})
        names = table["c0"].to_pylist()
        return np.arange(len(names), dtype=np.int64), names
    table = _read_table(path, 2, {"c0": pa.int64(), "c1": pa.string()})
    return table["c0"].to_numpy(), table["c1"].to_pylist()


# ---------------------------------------------------------------------------- naming
def _name_kind(names: Sequence[str]) -> str:
    sample = [n for n in names[:1000] if n]
    if sample and all(_URL.match(n) for n in sample):
        return "urls"
    if sample and all(_REVERSED_HOST.match(n) for n in sample):
        return "reversed-hosts"
    return "names"


def _urls_and_hosts(names: list[str], kind: str) -> tuple[list[str], list[str]]:
    """Stored URL and host name of each node."""
    if kind == "reversed-hosts":
        hosts = [".".join(reversed(n.split("."))) for n in names]
        return [f"http://{h}/" for h in hosts], hosts
    if kind == "urls":
        from urllib.parse import urlsplit

        hosts = []
        for n in names:
            try:
                hosts.append(urlsplit(n).netloc.rpartition("@")[2].lower())
            except ValueError:
                hosts.append(_NO_HOST)
        return names, hosts
    return names, [_NO_HOST] * len(names)


# ---------------------------------------------------------------------------- the graph
@dataclass(slots=True)
class _Graph:
    src: np.ndarray       # int64 dense node ids, file order
    dst: np.ndarray
    names: list[str]      # node id -> name as given (or the integer id as text)
    kind: str


def _dense_ints(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Remap integer ids to 0..n-1 in ascending id order; returns (src, dst, ids)."""
    if a.size == 0:
        return a, b, np.zeros(0, np.int64)
    low = int(min(a.min(), b.min()))
    high = int(max(a.max(), b.max()))
    if low >= 0 and high < 8 * (a.size + b.size) + 1024:
        present = np.zeros(high + 1, dtype=bool)
        present[a] = True
        present[b] = True
        ids = np.flatnonzero(present)
        if ids.size == high + 1:  # already dense: keep the ids
            return a, b, ids
        index = np.cumsum(present, dtype=np.int64) - 1
        return index[a], index[b], ids
    ids, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    return inverse[: a.size], inverse[a.size:], ids


def _build_graph(edges: Path, vertices: Path | None) -> _Graph:
    import pyarrow as pa
    import pyarrow.compute as pc

    a, b = read_edge_arrays(edges)
    integer = pa.types.is_integer(a.type)
    if vertices is not None:
        if not integer:
            raise ConfigError(f"{edges}: --vertices needs integer ids in the edge file")
        vid, vnames = _read_vertices(vertices)
        order = None if np.all(vid[1:] > vid[:-1]) else np.argsort(vid, kind="stable")
        if order is not None:
            vid = vid[order]
            vnames = [vnames[i] for i in order.tolist()]
            if np.any(vid[1:] == vid[:-1]):
                dup = int(vid[1:][vid[1:] == vid[:-1]][0])
                raise ConfigError(f"{vertices}: vertex id {dup} appears twice")
        src, dst = a.to_numpy(), b.to_numpy()
        if vid.size and vid[0] == 0 and vid[-1] == vid.size - 1:
            pos_src, pos_dst = src, dst  # dense 0..n-1: ids are positions
            bad = (src < 0) | (src >= vid.size) | (dst < 0) | (dst >= vid.size)
        else:
            pos_src = np.minimum(np.searchsorted(vid, src), max(vid.size - 1, 0))
            pos_dst = np.minimum(np.searchsorted(vid, dst), max(vid.size - 1, 0))
            bad = (vid[pos_src] != src) | (vid[pos_dst] != dst) if vid.size else \
                np.ones(src.size, bool)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ConfigError(f"{edges}: edge {int(src[k])} -> {int(dst[k])} names a vertex "
                              f"missing from {vertices}")
        return _Graph(pos_src.astype(np.int64), pos_dst.astype(np.int64), vnames,
                      _name_kind(vnames))
    if integer:
        src, dst, ids = _dense_ints(a.to_numpy(), b.to_numpy())
        return _Graph(src.astype(np.int64, copy=False), dst.astype(np.int64, copy=False),
                      [str(i) for i in ids.tolist()], "ids")
    both = pa.concat_arrays([a, b])
    encoded = pc.dictionary_encode(both)
    index = encoded.indices.to_numpy().astype(np.int64)
    names = encoded.dictionary.to_pylist()
    return _Graph(index[: len(a)], index[len(a):], names, _name_kind(names))


# ---------------------------------------------------------------------------- writing
def _create(db: Path) -> sqlite3.Connection:
    if db.exists() and db.stat().st_size > 0:
        raise StoreError(f"{db} already exists; import into a new database file")
    try:
        conn = sqlite3.connect(sqlite_uri(db, "rwc"), uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise map_error(exc, db, "creating") from exc
    # A fresh file that is deleted on failure: no journal needed while it fills.
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -262144")
    created = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    conn.executescript(f"BEGIN;\n{schema_sql()}\nCOMMIT;")
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)",
                     [("schema_version", str(SCHEMA_VERSION)), ("created_at", created)])
    return conn


def import_edges(
    edges: str | Path,
    db: str | Path,
    *,
    vertices: str | Path | None = None,
    seeds: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
) -> EdgeImport:
    """Import an edge list (and its vertices file) into a new crawl database.

    Parameters
    ----------
    edges : str or Path
        The edge file (see the module docstring for the formats).
    db : str or Path
        The crawl database to create (it must not exist).
    vertices : str or Path, optional
        ``id name`` lines naming the integer ids of ``edges``.
    seeds : sequence of str
        Names (as in the files; ids as text) of the seed nodes; default: the first
        source node of the edge file.
    progress : callable, optional
        Called with a short line after each phase.

    Returns
    -------
    EdgeImport

    Raises
    ------
    ConfigError
        A file is missing or unparsable, an edge names a vertex not in ``vertices``,
        a seed is not a node.
    StoreError
        ``db`` exists or cannot be written (nothing is left behind on failure).
    """
    t0 = time.perf_counter()
    db = Path(db)
    edges = _existing(edges)
    say = progress or (lambda _line: None)
    check_db_path(db)
    if db.exists() and db.stat().st_size > 0:
        raise StoreError(f"{db} already exists; import into a new database file")
    graph = _build_graph(edges, None if vertices is None else Path(vertices))
    say(f"parsed {graph.src.size:,} links between {len(graph.names):,} nodes "
        f"({time.perf_counter() - t0:.1f} s)")
    n = len(graph.names)
    if n >= np.iinfo(np.int32).max:
        raise ConfigError(f"{n} nodes: more than the int32 link arrays hold")
    seed_ids = _seed_ids(graph, seeds)
    with WriterLock(db):  # one writer per database: not beside a crawl or another import
        created = not db.exists()
        conn = _create(db)
        try:
            result = _write(conn, db, graph, seed_ids, edges, vertices, say)
            conn.execute("PRAGMA journal_mode = WAL")
        except BaseException:
            conn.close()
            if created:
                db.unlink(missing_ok=True)
            raise
        conn.close()
    seconds = time.perf_counter() - t0
    return EdgeImport(nodes=n, edges=int(graph.src.size), pages_with_links=result[0],
                      hosts=result[1], seconds=seconds, names=graph.kind)


def _seed_ids(graph: _Graph, seeds: Sequence[str]) -> np.ndarray:
    if not seeds:
        return graph.src[:1].copy()
    index = {name: i for i, name in enumerate(graph.names)}
    out = []
    for name in seeds:
        if name not in index:
            raise ConfigError(f"seed {name!r} is not a node of the graph")
        out.append(index[name])
    return np.array(sorted(set(out)), dtype=np.int64)


def _json_rows(*columns: np.ndarray) -> str:
    """A JSON array of integer rows ``[[a0, b0, ...], ...]``, built in Arrow (C++).

    Feeding SQLite one JSON text through ``json_each`` inserts rows at C speed; a
    Python tuple per row (``executemany``) costs about as much again as the insert.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if columns[0].size == 0:
        return "[]"
    text = [pc.cast(pa.array(c), pa.string()) for c in columns]
    rows = pc.binary_join_element_wise("[", pc.binary_join_element_wise(*text, ","), "]", "")
    offsets = pa.array([0, len(rows)], pa.int32())
    joined = pc.binary_join(pa.ListArray.from_arrays(offsets, rows), ",")[0].as_py()
    return f"[{joined}]"


def _write(conn: sqlite3.Connection, db: Path, graph: _Graph, seed_ids: np.ndarray,
           edges: Path, vertices: str | Path | None,
           say: Callable[[str], None]) -> tuple[int, int]:
    n = len(graph.names)
    src, dst = graph.src, graph.dst
    # Group links by source page, keeping file order within a page.
    order = None if src.size < 2 or bool(np.all(src[1:] >= src[:-1])) else \
        np.argsort(src, kind="stable")
    if order is not None:
        src, dst = src[order], dst[order]
    # Sorted sources: each page's links are one run (no second sort).
    starts = np.flatnonzero(np.r_[True, src[1:] != src[:-1]]) if src.size else \
        np.zeros(0, np.int64)
    pages = src[starts]
    counts = np.diff(np.r_[starts, src.size])
    urls, host_of = _urls_and_hosts(graph.names, graph.kind)
    host_names: dict[str, int] = {}
    if graph.kind in ("ids", "names"):
        host_names[_NO_HOST] = 0
        nodes_json = json.dumps(urls)
        node_sql = "SELECT key, value, 0 FROM json_each(?)"
    else:
        host_ids = [host_names.setdefault(h, len(host_names)) for h in host_of]
        nodes_json = json.dumps(list(zip(urls, host_ids, strict=True)))
        node_sql = "SELECT key, value->>0, value->>1 FROM json_each(?)"
    try:
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO hosts (id, name) VALUES (?, ?)",
                         [(i, h) for h, i in host_names.items()])
        conn.execute("INSERT INTO urls (id, url, host_id, depth, discovered_seq)"
                     f" SELECT * , -1, 0 FROM ({node_sql})", (nodes_json,))
        del nodes_json
        say(f"wrote {n:,} nodes")
        # substr() of a BLOB counts bytes (1-based): each page's slice of one int32 array.
        blob = dst.astype("<i4").tobytes()
        conn.execute("INSERT INTO links (src, dst) SELECT value->>0,"
                     " substr(?2, value->>1, value->>2) FROM json_each(?1)",
                     (_json_rows(pages, starts * 4 + 1, counts * 4), blob))
        del blob
        conn.execute("UPDATE urls SET outcome = 'fetched' WHERE id IN (SELECT src FROM links)")
        conn.execute("UPDATE urls SET discovered_seq = -1 WHERE id IN"
                     " (SELECT value FROM json_each(?))", (json.dumps(seed_ids.tolist()),))
        meta = {"source": "edges", "edges_file": str(edges),
                "vertices_file": "" if vertices is None else str(vertices),
                "names": graph.kind, "imported_edges": str(src.size),
                "seeds": json.dumps([urls[i] for i in seed_ids.tolist()])}
        conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                         list(meta.items()))
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise map_error(exc, db, "writing") from exc
    say(f"wrote {src.size:,} links of {pages.size:,} pages")
    return int(pages.size), len(host_names)
