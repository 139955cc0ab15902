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
* **A header row** first (``src dst``, ``source target`` or ``from to``, any case:
  :data:`HEADERS`) is skipped, and fields may then be quoted CSV-style: the TSV of
  ``webcrawl export edges`` (with ``--ids``, its nodes file is a vertices file)
  imports back as it was.

Parsing of plain integer lines is a compiled byte parser (:mod:`webcrawl.storage._edgeparse`,
with numba: ``webcrawl[fast]``) straight into int32 arrays; every other file (gzip,
names, ids past int32, quoted fields) and every file without numba goes to pyarrow's
multi-threaded CSV reader into Arrow arrays, int32 when every id fits (int64
otherwise; 8 bytes a link instead of 16 while importing); every step after
it (remapping ids, grouping links by source page, building the per-page int32 link
arrays of ``schema.sql``) is numpy or Arrow compute over whole arrays, taken part by
part as the parser hands them over (no copy of a whole column but the remapped
destinations: on a virtual machine, first-touched memory costs about as much CPU as
the arithmetic), and SQLite receives the rows as JSON integer arrays built by Arrow
(``json_each``) plus one int32 blob sliced by ``substr``: no Python object per edge,
and none per node for integer ids.

A graph whose nodes are integer ids or plain names (nothing can crawl it: no URLs)
keeps its links in ``link_blocks`` (``schema.sql``): 1,024 links a row as two int32
arrays (sources, destinations), built a chunk at a time by a second thread while
SQLite inserts the previous chunk (:func:`_write_blocks`).  Its nodes are a row per
run of consecutive ids in ``id_ranges`` for integer ids (no ``urls`` rows: the reader
implies them), else ``urls`` rows without an index on ``url``.  A graph of URLs or
reversed hosts, which a crawl may resume, has the crawl's layout, a ``links`` row a
page: its two tables with a row per node are written at once, on two cores, ``urls``
by the calling thread, ``links`` by a second one into a private temporary database,
then copied in by SQLite's transfer optimisation (see :func:`_write`).  The database
is written with no journal into a temporary file beside the target (64 KB pages:
fewer page splits in the bulk insert) and renamed into place when complete, so a
failed or killed import never leaves a partial database.

The database it writes is what every analysis reads (see ``schema.sql``): one node
per distinct name (ids dense from 0, in the order of the input ids, or first appearance
for names; a ``urls`` row each, or implied by ``id_ranges``), each node's out-links
in ``link_blocks`` or ``links`` in file order, duplicates and self-loops kept (the
loader drops or collapses them). Nodes with out-links have outcome ``fetched`` (their
links are known, so a virtual crawl can fetch them); the others stay discovered
(outcome NULL). There is no fetch order (``urls.seq`` NULL, no ``fetches`` rows): the
graph was not crawled by us. Depth is -1 (unknown). Seeds (``discovered_seq = -1``)
are the names given, else the first source node of the file. ``meta`` records
``source = edges``, the file names and the counts.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np
from webcrawl.storage._edgeparse import count_ids, parse_int_edges, remap_into, sources_into
from webcrawl.storage._idranges import IdRanges
from webcrawl.storage._sqlite import (
    SCHEMA_VERSION,
    map_error,
    schema_sql,
    sqlite_uri,
)
from webcrawl.storage.errors import ConfigError, InputFormatError
from webcrawl.storage.lock import new_database

__all__ = ["EdgeImport", "import_edges", "read_edge_arrays"]

#: Bytes pyarrow hands each parsing thread at once.
BLOCK_SIZE = 16 << 20
#: Names that are hosts written reversed (``com.example.www``), Common Crawl style.
_REVERSED_HOST = re.compile(r"^[a-z0-9-]+(\.[a-z0-9_-]+)+$")
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_NO_HOST = ""
_P = ParamSpec("_P")
_T = TypeVar("_T")


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


def _gzip_checked(read: Callable[Concatenate[Path, _P], _T]) -> Callable[Concatenate[Path, _P], _T]:
    """Make damaged gzip data (cut short, garbage) of ``read(path, ...)``'s file an
    :class:`InputFormatError` naming it: ``gzip`` raises EOFError, zlib.error or
    BadGzipFile, pyarrow an OSError without errno (a real I/O error has one)."""
    @functools.wraps(read)
    def checked(path: Path, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return read(path, *args, **kwargs)
        except (EOFError, zlib.error, OSError) as exc:
            if isinstance(exc, OSError) and (exc.errno is not None or not _is_gzip(path)):
                raise
            cut = isinstance(exc, EOFError) or "runcated" in str(exc)
            raise InputFormatError(f"{path}: {'truncated' if cut else 'damaged'} gzip data "
                                   f"({exc})") from exc
    return checked


#: First lines taken for a header row and skipped: the first two fields of
#: ``webcrawl export edges`` TSV (``src dst nofollow``) and of common edge tables.
HEADERS = frozenset({(b"src", b"dst"), (b"source", b"target"), (b"from", b"to")})


def _is_header(line: bytes) -> bool:
    return tuple(t.lower() for t in re.split(rb"[ \t]+", line)[:2]) in HEADERS


@_gzip_checked
def _head(path: Path, size: int = 1 << 16) -> tuple[int, bytes, bool]:
    """Leading comment/blank/header line count, the first data line (empty if none),
    and whether a header row was among them (then fields may be quoted CSV-style, as
    ``webcrawl export edges`` quotes a URL holding a tab or a double quote)."""
    with _open_binary(path) as f:
        head = f.read(size)
    skip = 0
    header = False
    for line in head.split(b"\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith(b"#"):
            if header or not _is_header(stripped):
                return skip, stripped, header
            header = True
        skip += 1
    return skip, b"", header


def _arrow_source(path: Path) -> Any:
    import pyarrow as pa

    # Read, not memory-mapped: the parser's blocks are recycled buffers, where a map
    # faults in every page of the file (on a virtual machine the faults cost more than
    # the copy) and counts the whole file in the resident set (777 MB for 50M links).
    stream = pa.OSFile(str(path))
    return pa.CompressedInputStream(stream, "gzip") if _is_gzip(path) else stream


@_gzip_checked
def _read_table(path: Path, columns: int, candidates: Sequence[dict[str, Any]]) -> Any:
    """Read ``path`` with pyarrow; returns a table of its first ``columns`` columns.

    ``candidates`` are column-type maps tried in turn (narrowest first: int32 before
    int64).  Fast path: one delimiter (tab if the first data line has one, else space),
    each candidate on the file as it is.  If every candidate fails, the file is read
    again after normalising runs of blanks and dropping comment lines anywhere (a regex
    over the bytes), which costs a copy of the file in memory but accepts every
    whitespace layout.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    skip, first, header = _head(path)
    if not first:
        return None
    delimiter = "\t" if b"\t" in first else " "
    names = [f"c{i}" for i in range(max(columns, len(re.split(rb"[ \t]+", first))))]
    read = pacsv.ReadOptions(column_names=names, skip_rows=skip, block_size=BLOCK_SIZE)
    parse = pacsv.ParseOptions(delimiter=delimiter, quote_char='"' if header else False,
                               double_quote=header, ignore_empty_lines=True)
    for types in candidates:
        convert = pacsv.ConvertOptions(include_columns=names[:columns], column_types=types,
                                       strings_can_be_null=False,
                                       quoted_strings_can_be_null=False)
        try:
            return pacsv.read_csv(_arrow_source(path), read_options=read, parse_options=parse,
                                  convert_options=convert)
        except pa.ArrowInvalid:
            continue
    with _open_binary(path) as f:
        data = f.read()
    data = re.sub(rb"[ \t\r\f\v]+", b" ", data)
    data = re.sub(rb"(?m)^ | $", b"", data)
    data = re.sub(rb"(?m)^(#[^\n]*)?\n", b"", data)
    if header:  # the first line left is the header row
        data = data.partition(b"\n")[2]
    width = max((len(line.split(b" ")) for line in data[:1 << 16].split(b"\n") if line),
                default=columns)
    names = [f"c{i}" for i in range(max(columns, width))]
    read = pacsv.ReadOptions(column_names=names, block_size=BLOCK_SIZE)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                               ignore_empty_lines=True)
    error = ""
    for types in candidates:
        convert = pacsv.ConvertOptions(include_columns=names[:columns], column_types=types,
                                       strings_can_be_null=False)
        try:
            return pacsv.read_csv(pa.py_buffer(data), read_options=read, parse_options=parse,
                                  convert_options=convert)
        except pa.ArrowInvalid as exc:
            error = str(exc).splitlines()[0]
    raise ConfigError(f"{path}: cannot parse as {columns}-column lines: {error}")


def _integer_token(token: bytes) -> bool:
    return token.lstrip(b"+-").isdigit()


def _read_edge_table(path: Path) -> Any:
    """The first two columns of an edge file as an Arrow table (``c0``, ``c1``, in the
    parser's chunks): int32 if every token is an integer that fits (int64 if one does
    not), else strings."""
    import pyarrow as pa

    _, first, _ = _head(path)
    if not first:
        return pa.table({"c0": pa.array([], pa.int32()), "c1": pa.array([], pa.int32())})
    tokens = re.split(rb"[ \t]+", first)
    if len(tokens) >= 2 and all(_integer_token(t) for t in tokens[:2]):
        try:
            return _read_table(path, 2, [{"c0": t, "c1": t} for t in (pa.int32(), pa.int64())])
        except ConfigError:
            pass
    return _read_table(path, 2, [{"c0": pa.string(), "c1": pa.string()}])


def _parse_ids(path: Path) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    """The two id columns (int32 parts) by the compiled byte parser, when the file is
    plain text of integer lines it accepts (else None: read it with pyarrow)."""
    if _is_gzip(path):
        return None
    skip, first, header = _head(path)
    tokens = re.split(rb"[ \t]+", first)
    if len(tokens) < 2 or not all(_integer_token(t) for t in tokens[:2]):
        return None
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    start = 0
    for _ in range(skip):  # the leading comment, blank and header lines
        start = head.index(b"\n", start) + 1
    return parse_int_edges(path, start, len(tokens), header)


def read_edge_arrays(path: str | Path) -> tuple[Any, Any]:
    """The two columns of an edge file as Arrow arrays: int32 if every token is an
    integer that fits (int64 if one does not), else strings."""
    table = _read_edge_table(_existing(path))
    # One column at a time, the table's copy of it dropped at once: the peak is one
    # column's chunks plus the two contiguous arrays (12 bytes a link for int32).
    a = table["c0"].combine_chunks()
    table = table.drop_columns(["c0"])
    b = table["c1"].combine_chunks()
    return a, b


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no such file: {path}")
    return path


def _read_vertices(path: str | Path) -> tuple[np.ndarray, list[str]]:
    """Vertex ids (int64) and names from ``id name`` lines, or names by line number."""
    import pyarrow as pa

    path = _existing(path)
    _, first, _ = _head(path)
    if not first:
        return np.zeros(0, np.int64), []
    if len(re.split(rb"[ \t]+", first)) == 1:
        table = _read_table(path, 1, [{"c0": pa.string()}])
        names = table["c0"].to_pylist()
        return np.arange(len(names), dtype=np.int64), names
    table = _read_table(path, 2, [{"c0": pa.int64(), "c1": pa.string()}])
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
_INT32_MAX = int(np.iinfo(np.int32).max)


@dataclass(slots=True)
class _Graph:
    dst: list[np.ndarray]            # destination column, in parts as parsed
    counts: np.ndarray               # int64 out-links of each node
    first: int                       # the file's first source node (-1: no links)
    kind: str                        # 'ids', 'urls', 'reversed-hosts' or 'names'
    ids: np.ndarray | None = None    # kind 'ids': node -> its integer id in the file
    names: list[str] | None = None   # other kinds: node -> name as given
    remap: np.ndarray | None = None  # id -> node (int32) for ``dst``; None: ids are nodes
    order: np.ndarray | None = None  # links by source page, if the file is not so sorted

    @property
    def n(self) -> int:
        return int(self.counts.size)

    @property
    def m(self) -> int:
        return sum(p.size for p in self.dst)

    def name(self, node: int) -> str:
        if self.ids is not None:
            return str(int(self.ids[node]))
        assert self.names is not None
        return self.names[node]

    def grouped_dst(self) -> np.ndarray:
        """Destination nodes (int32) grouped by source page, file order within a page
        (computed when the links are written, by the thread that writes them)."""
        if self.remap is not None:
            out = np.empty(self.m, np.int32)
            pos = 0
            for p in self.dst:
                out[pos:pos + p.size] = _gather(self.remap, p)
                pos += p.size
        elif len(self.dst) == 1:
            out = self.dst[0].astype(np.int32, copy=False)
        else:
            out = np.concatenate(self.dst).astype(np.int32, copy=False)
        return out if self.order is None else _gather(out, self.order)


def _check_size(n: int) -> None:
    if n >= _INT32_MAX:
        raise ConfigError(f"{n} nodes: more than the int32 link arrays hold")


def _is_sorted(parts: Sequence[np.ndarray]) -> bool:
    """Whether the concatenation of ``parts`` is non-decreasing (checked part by part:
    no array of the whole size)."""
    last = None
    for p in parts:
        if p.size == 0:
            continue
        if (last is not None and p[0] < last) or not bool(np.all(p[1:] >= p[:-1])):
            return False
        last = p[-1]
    return True


def _group(src: Sequence[np.ndarray], space: int,
           ids: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray]:
    """The permutation that groups links by source page, file order kept within a page
    (None if the file is so sorted already, as published files are); and each node's
    out-link count.

    ``src`` is the source column (in parts, as parsed) in an id space of ``space``
    values whose order is the node order; ``ids`` maps nodes to that space (None: the
    identity).  For a sorted file the counts come part by part, with no array of the
    whole size.
    """
    counts = np.zeros(space, np.int64)
    order = None
    if _is_sorted(src):
        for p in src:
            if p.size:
                low = int(p[0])
                counts[low:int(p[-1]) + 1] += np.bincount(p - low)
    else:
        whole = np.concatenate(src) if len(src) != 1 else src[0]
        order = np.argsort(whole, kind="stable")
        for lo in range(0, whole.size, LINK_CHUNK):  # bincount's intp copy stays small
            counts += np.bincount(whole[lo:lo + LINK_CHUNK], minlength=space)
    return order, (counts if ids is None else counts[ids])


def _gather(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``table[index]`` through Arrow's take: a quarter of numpy's time for an int32
    index (numpy converts the index to intp first, 8 bytes a link), without the GIL."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out: np.ndarray = pc.take(pa.array(table), pa.array(index)).to_numpy()
    return out


def _int_graph(a: list[np.ndarray], b: list[np.ndarray]) -> _Graph:
    """Integer ids (the columns in parts) remapped to nodes 0..n-1 in ascending id order.

    Ids within a few times the link count of 0 (the usual numbering) are remapped
    through a table indexed by id, part by part: the parsed columns are the only
    arrays of the whole size besides the remapped destinations.  Other ids go through
    ``np.unique``.  The source parts are released (``a`` emptied) once the links are
    counted: 4 bytes a link less while the links are written.
    """
    m = sum(p.size for p in a)
    if m == 0:
        return _Graph([np.zeros(0, np.int32)], np.zeros(0, np.int64), -1, "ids",
                      ids=np.zeros(0, np.int64))
    low = min(int(p.min()) for p in (*a, *b) if p.size)
    high = max(int(p.max()) for p in (*a, *b) if p.size)
    first_id = int(next(p[0] for p in a if p.size))
    if low >= 0 and high < 16 * m + 1024:
        counted = count_ids(a, b, high)  # one compiled pass, or None
        if counted is not None:
            present, counts, ascending = counted
        else:
            present = np.zeros(high + 1, dtype=np.uint8)
            for p in (*a, *b):
                present[p] = 1
        ids = np.flatnonzero(present)
        _check_size(ids.size)
        dense = ids.size == high + 1  # ids are nodes already
        remap = None if dense else np.cumsum(present, dtype=np.int32) - 1
        del present
        if counted is None:
            order, counts = _group(a, high + 1, None if dense else ids)
        else:
            counts = counts if dense else counts[ids]
            order = None if ascending else np.argsort(np.concatenate(a), kind="stable")
        a.clear()
        return _Graph(list(b), counts, first_id if remap is None else int(remap[first_id]),
                      "ids", ids=ids, remap=remap, order=order)
    ids, inverse = np.unique(np.concatenate([*a, *b]), return_inverse=True)
    _check_size(ids.size)
    inverse = inverse.astype(np.int32)
    order, counts = _group([inverse[:m]], ids.size, None)
    return _Graph([inverse[m:]], counts, int(inverse[0]), "ids", ids=ids.astype(np.int64),
                  order=order)


def _named_graph(src: np.ndarray, dst: np.ndarray, names: list[str]) -> _Graph:
    """Dense node ids ``src``, ``dst`` (int32) and each node's name."""
    order, counts = _group([src], len(names), None)
    return _Graph([dst], counts, int(src[0]) if src.size else -1, _name_kind(names),
                  names=names, order=order)


def _build_graph(edges: Path, vertices: Path | None) -> _Graph:
    import pyarrow as pa
    import pyarrow.compute as pc

    if vertices is None:
        parsed = _parse_ids(edges)
        if parsed is not None:
            return _int_graph(*parsed)
    table = _read_edge_table(edges)
    integer = pa.types.is_integer(table.schema.field("c0").type)
    if vertices is not None:
        if not integer:
            raise ConfigError(f"{edges}: --vertices needs integer ids in the edge file")
        a, b = (table[c].combine_chunks() for c in ("c0", "c1"))
        vid, vnames = _read_vertices(vertices)
        order = None if np.all(vid[1:] > vid[:-1]) else np.argsort(vid, kind="stable")
        if order is not None:
            vid = vid[order]
            vnames = [vnames[i] for i in order.tolist()]
            if np.any(vid[1:] == vid[:-1]):
                dup = int(vid[1:][vid[1:] == vid[:-1]][0])
                raise ConfigError(f"{vertices}: vertex id {dup} appears twice")
        _check_size(vid.size)
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
        return _named_graph(pos_src.astype(np.int32, copy=False),
                            pos_dst.astype(np.int32, copy=False), vnames)
    if integer:
        a, b = ([c.to_numpy() for c in table[col].chunks] for col in ("c0", "c1"))
        del table  # the parts are views of its buffers: _int_graph frees the sources
        return _int_graph(a, b)
    a, b = (table[c].combine_chunks() for c in ("c0", "c1"))
    del table
    encoded = pc.dictionary_encode(pa.concat_arrays([a, b]))
    index = encoded.indices.to_numpy().astype(np.int32, copy=False)
    names = encoded.dictionary.to_pylist()
    _check_size(len(names))
    return _named_graph(index[: len(a)], index[len(a):], names)


# ---------------------------------------------------------------------------- writing
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


def import_edges(
    edges: str | Path,
    db: str | Path,
    *,
    vertices: str | Path | None = None,
    seeds: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
) -> EdgeImport:
    """Import an edge list (and its vertices file) into a new crawl database.

    The database is written to a temporary file beside ``db`` (``.NAME.importing``)
    and renamed to ``db`` when complete, so an import that fails or is killed never
    leaves a partial database at ``db``, nor its temporary file
    (:func:`webcrawl.storage.lock.new_database`).

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
        a seed is not a node, the graph has 2**31 - 1 nodes or more.
    StoreError
        ``db`` exists or cannot be written (nothing is left behind on failure).
    """
    t0 = time.perf_counter()
    db = Path(db)
    edges = _existing(edges)
    say = progress or (lambda _line: None)
    # One writer per database (not beside a crawl or another import), written whole.
    with new_database(db) as temp:
        graph = _build_graph(edges, None if vertices is None else Path(vertices))
        say(f"parsed {graph.m:,} links between {graph.n:,} nodes "
            f"({time.perf_counter() - t0:.1f} s)")
        seed_ids = _seed_ids(graph, seeds)
        result = _write(temp, db, graph, seed_ids, edges, vertices, say)
    seconds = time.perf_counter() - t0
    return EdgeImport(nodes=graph.n, edges=graph.m, pages_with_links=result[0],
                      hosts=result[1], seconds=seconds, names=graph.kind)


def _seed_ids(graph: _Graph, seeds: Sequence[str]) -> np.ndarray:
    if not seeds:
        return np.array([graph.first] if graph.first >= 0 else [], np.int64)
    out: set[int] = set()
    index = None if graph.ids is not None else \
        {name: i for i, name in enumerate(graph.names or [])}
    for name in seeds:
        node = -1
        if index is not None:
            node = index.get(name, -1)
        elif graph.ids is not None and re.fullmatch(r"-?[0-9]+", name) \
                and str(int(name)) == name:
            pos = int(np.searchsorted(graph.ids, int(name)))
            if pos < graph.ids.size and int(graph.ids[pos]) == int(name):
                node = pos
        if node < 0:
            raise ConfigError(f"seed {name!r} is not a node of the graph")
        out.add(node)
    return np.array(sorted(out), dtype=np.int64)


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


def _links_database(db: Path, graph: _Graph, indptr: np.ndarray, counts: np.ndarray,
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


def _write(temp: Path, db: Path, graph: _Graph, seed_ids: np.ndarray,
           edges: Path, vertices: str | Path | None,
           say: Callable[[str], None]) -> tuple[int, int]:
    """Write the graph into ``temp`` (a new file).

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
    pages = int(np.count_nonzero(fetched))
    if graph.kind in BLOCKED_KINDS:
        hosts = _write_blocked(temp, db, graph, indptr, fetched, seed_ids, edges, vertices, say)
        say(f"wrote {graph.m:,} links of {pages:,} pages")
        return pages, hosts
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
    return pages, hosts


def _write_blocked(temp: Path, db: Path, graph: _Graph, indptr: np.ndarray,
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


def _write_nodes(temp: Path, db: Path, graph: _Graph, fetched: np.ndarray,
                 seed_ids: np.ndarray, edges: Path, vertices: str | Path | None,
                 *, blocked: bool = False) -> int:
    """Create ``temp`` with its ``urls``, ``hosts`` and ``meta`` rows; the host count."""
    n = graph.n
    host_names: dict[str, int] = {}
    urls: list[str] | None = None
    if graph.kind == "ids":
        host_names[_NO_HOST] = 0
        url_sql, host_sql = "CAST(value AS TEXT)", "0"
    elif graph.kind == "names":
        host_names[_NO_HOST] = 0
        urls = graph.names
        url_sql, host_sql = "value", "0"
    else:
        urls, host_of = _urls_and_hosts(graph.names or [], graph.kind)
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
                "seeds": json.dumps(seed_urls)}
        conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                         list(meta.items()))
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise map_error(exc, db, "writing") from exc
    finally:
        conn.close()
    return len(host_names)
