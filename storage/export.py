"""Export of a crawl database (the library side of ``webcrawl export``).

Every writer streams: memory stays bounded however large the crawl.  Formats:

``tsv``       tab-separated with a header row; a field that contains a tab, newline or
              double quote is quoted the CSV way (``csv`` module, ``excel-tab``
              dialect), so any URL survives ``csv.reader(f, dialect="excel-tab")``.
``jsonl``     one JSON object per line (JSON Lines), the TSV columns as keys, with
              numbers as numbers and empty fields as ``null``.
``edgelist``  (edges only) ``src dst`` per line, one space, no header, no nofollow
              column: what ``networkx.read_edgelist`` and igraph's ``Read_Ncol`` read.
              Whitespace inside a name (never in a normalised URL) is %-escaped.
``graphml``   (edges only) GraphML: nodes ``n<id>`` with a ``url`` attribute, edges
              with a boolean ``nofollow`` (``networkx.read_graphml``, igraph, Gephi).
``parquet``   (edges only, to a file: :func:`export_edges_parquet`) columns ``src``,
              ``dst`` (URLs, dictionary-encoded; or URL ids with ``ids``) and
              ``nofollow``; the graph's policies (which graph, duplicates, self-loops,
              redirects) in the file's key-value metadata under ``webcrawl``
              (:data:`PARQUET_METADATA_KEY`).  What DuckDB, Polars, pandas and Spark
              read fastest.

``ids=True`` (``--ids``) writes integer node ids (``urls.id``) instead of URLs in the
edge rows, plus a nodes file ``id<TAB>url`` (Parquet: columns ``id``, ``url``) listing
every node of the graph, isolated ones included (WebGraph/graph-tool users).

Which links: by default every stored link (``stored``: duplicates, self-loops and
redirects as recorded).  An analysis graph (the fetched pages, or every URL, as the
loader builds it) is passed in as :class:`EdgeArrays`
(``webcrawl.analysis.graph.graph_edges``); the TSV header and columns are what
``import edges`` reads back (it skips the header and ignores the third column).
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.formats import EDGE_FORMATS, TABLE_FORMATS
from webcrawl.storage.reader import PAGE_COLUMNS, CrawlReader

# New public names not yet in the package facade (webcrawl.storage), so not listed
# here until they are: EdgeArrays, PARQUET_METADATA_KEY, export_edges_parquet,
# stored_edges.
__all__ = ["EDGE_COLUMNS", "EDGE_FORMATS", "FETCH_COLUMNS", "PAGE_COLUMNS", "TABLE_FORMATS",
           "export_edges", "export_fetches", "export_pages", "write_rows"]

#: Columns of ``export_edges``.
EDGE_COLUMNS = ("src", "dst", "nofollow")
#: Columns of ``export_fetches`` (one row per fetch attempt, in insertion order).
FETCH_COLUMNS = ("url", "url_id", "seq", "kind", "attempt", "started_at", "ended_at",
                 "outcome", "status", "content_type", "size", "digest", "etag",
                 "last_modified", "error", "strategy", "priority", "rank", "changed")
#: Links read per chunk by the id-based edge writers.
_EDGE_CHUNK = 1 << 20
#: Key of the Parquet key-value metadata that holds :meth:`EdgeArrays.policy` (JSON).
PARQUET_METADATA_KEY = "webcrawl"
#: Links per Parquet row group.
_PARQUET_ROW_GROUP = 1 << 22


@dataclass(frozen=True, slots=True, eq=False)
class EdgeArrays:
    """Links of one graph as URL-id arrays, with what the graph is (for the metadata).

    ``src``, ``dst`` are URL ids (``urls.id``), ``nofollow`` flags each link,
    ``nodes`` are the URL ids of the graph's nodes (ascending; isolated nodes
    included); ``graph``, ``duplicates`` (repeated links), ``self_loops``, ``redirects``
    and ``duplicate_pages`` say which links these are (written to the Parquet metadata).
    """

    src: np.ndarray
    dst: np.ndarray
    nofollow: np.ndarray
    nodes: np.ndarray
    graph: str
    duplicates: str
    self_loops: str
    redirects: str
    #: pages whose body repeats an earlier page's (``urls.duplicate_of``): kept as
    #: nodes, or collapsed into that page (with their count)
    duplicate_pages: str = "kept"

    def policy(self) -> dict[str, Any]:
        """The graph and its link policies, as stored in the Parquet metadata."""
        return {"graph": self.graph, "duplicates": self.duplicates,
                "self_loops": self.self_loops, "redirects": self.redirects,
                "duplicate_pages": self.duplicate_pages,
                "nofollow": "kept, flagged in the nofollow column",
                "nodes": int(self.nodes.size), "links": int(self.src.size)}

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(src, dst, nofollow)`` in chunks of at most a million links."""
        for start in range(0, self.src.size, _EDGE_CHUNK):
            end = start + _EDGE_CHUNK
            yield self.src[start:end], self.dst[start:end], self.nofollow[start:end]


def stored_edges(reader: CrawlReader) -> EdgeArrays:
    """Every stored link (the ``links`` table) as :class:`EdgeArrays`, in page order."""
    links = reader.links_csr()
    nofollow = reader.nofollow_csr()
    src = links.edge_src
    flags = np.zeros(src.size, dtype=bool)
    if nofollow.dst.size:
        width = np.int64(max(int(links.dst.max(initial=0)), int(nofollow.dst.max())) + 1)
        flags = np.isin(src * width + links.dst, nofollow.edge_src * width + nofollow.dst)
    return EdgeArrays(src=src, dst=links.dst, nofollow=flags,
                      nodes=reader.urls(text=False).ids, graph="stored", duplicates="kept",
                      self_loops="kept", redirects="a redirect is a link to its target")


def _writer(out: TextIO) -> Any:
    return csv.writer(out, dialect="excel-tab", lineterminator="\n")


def write_rows(out: TextIO, columns: Sequence[str], rows: Iterable[Sequence[Any]],
               fmt: str = "tsv") -> int:
    """Write ``rows`` as TSV (header first) or JSON Lines; None is empty / null.

    Returns the number of rows written (without the header).
    """
    if fmt not in TABLE_FORMATS:
        raise ConfigError(f"unknown table format {fmt!r}; choose from {', '.join(TABLE_FORMATS)}")
    count = 0
    if fmt == "jsonl":
        dumps = json.JSONEncoder(allow_nan=False, default=_json_value).encode
        for row in rows:
            out.write(dumps(dict(zip(columns, map(_finite, row), strict=True))))
            out.write("\n")
            count += 1
        return count
    writer = _writer(out)
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
        count += 1
    return count


def _finite(value: Any) -> Any:
    """JSON has no nan/inf: nan is null, infinities the strings 'inf'/'-inf'."""
    if isinstance(value, float) and not np.isfinite(value):
        return None if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _json_value(value: Any) -> Any:
    if isinstance(value, np.generic):
        return _finite(value.item())
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def export_edges(db_path: str | Path, out: TextIO, fmt: str = "tsv", *, ids: bool = False,
                 nodes_out: TextIO | None = None, edges: EdgeArrays | None = None) -> int:
    """Write the links of a crawl: every stored link, or those of ``edges``.

    Stored links appear page by page (source URL id order), each page's links in
    document order, duplicates kept; redirects appear as their one link.  ``edges``
    (an analysis graph, see the module docstring) are written in their order.
    ``tsv``/``jsonl`` rows are ``src``, ``dst``, ``nofollow`` (0/1; JSON:
    true/false); ``edgelist`` is ``src dst``; ``graphml`` see the module docstring.
    With ``ids`` the endpoints are URL ids and ``nodes_out`` (required) receives
    ``id<TAB>url`` for every node.  Returns the number of links written.
    """
    if fmt not in EDGE_FORMATS:
        raise ConfigError(f"unknown edge format {fmt!r}; choose from {', '.join(EDGE_FORMATS)}")
    if ids and fmt == "graphml":
        raise ConfigError("--ids does not apply to graphml (its nodes carry ids and URLs)")
    if ids and nodes_out is None:
        raise ConfigError("--ids needs a nodes file (--nodes FILE)")
    with CrawlReader(db_path) as reader, reader.snapshot():
        if edges is not None or fmt == "graphml" or ids:
            return _array_edges(reader, edges or stored_edges(reader), out, fmt,
                                nodes_out if ids else None)
        if fmt == "edgelist":
            count = 0
            for src, dst, _ in reader.iter_edges():
                out.write(f"{_token(src)} {_token(dst)}\n")
                count += 1
            return count
        rows = ((src, dst, nf if fmt == "jsonl" else int(nf))
                for src, dst, nf in reader.iter_edges())
        return write_rows(out, EDGE_COLUMNS, rows, fmt)


def _token(name: str) -> str:
    """A name as one whitespace-free token (normalised URLs already are)."""
    if " " in name or "\t" in name or "\n" in name or "\r" in name:
        return (name.replace("%", "%25").replace(" ", "%20").replace("\t", "%09")
                .replace("\n", "%0A").replace("\r", "%0D"))
    return name


class _Names:
    """URL id -> URL, for the array writers (ids must be URL ids of the crawl)."""

    def __init__(self, reader: CrawlReader) -> None:
        table = reader.urls()
        self.ids, self.urls = table.ids, table.urls

    def __call__(self, ids: np.ndarray) -> list[str]:
        return [self.urls[i] for i in np.searchsorted(self.ids, ids).tolist()]


def _nodes(names: _Names, nodes: np.ndarray, out: TextIO) -> None:
    for i, url in zip(nodes.tolist(), names(nodes), strict=True):
        out.write(f"{i}\t{_token(url)}\n")


def _array_edges(reader: CrawlReader, edges: EdgeArrays, out: TextIO, fmt: str,
                 nodes_out: TextIO | None) -> int:
    """Write ``edges`` (URL ids, or URLs when ``nodes_out`` is None) in ``fmt``."""
    names = _Names(reader)
    if fmt == "graphml":
        return _graphml(names, edges, out)
    if nodes_out is not None:
        _nodes(names, edges.nodes, nodes_out)
    count = 0
    if fmt == "tsv":
        out.write("\t".join(EDGE_COLUMNS) + "\n")
    writer = _writer(out)
    for src, dst, flags in edges.chunks():
        a: list[Any] = src.tolist() if nodes_out is not None else names(src)
        b: list[Any] = dst.tolist() if nodes_out is not None else names(dst)
        if fmt == "edgelist":
            if nodes_out is None:
                a, b = [_token(x) for x in a], [_token(x) for x in b]
            out.write("".join(f"{x} {y}\n" for x, y in zip(a, b, strict=True)))
        elif fmt == "tsv":
            writer.writerows(zip(a, b, flags.astype(np.int8).tolist(), strict=True))
        else:
            dumps = json.dumps
            out.write("".join(
                f'{{"src": {dumps(x)}, "dst": {dumps(y)}, '
                f'"nofollow": {"true" if f else "false"}}}\n'
                for x, y, f in zip(a, b, flags.tolist(), strict=True)))
        count += src.size
    return count


def _graphml(names: _Names, edges: EdgeArrays, out: TextIO) -> int:
    # Imported here: xml.sax.saxutils loads urllib.request and http.client, which no
    # other export needs.
    from xml.sax.saxutils import quoteattr

    out.write('<?xml version="1.0" encoding="UTF-8"?>\n'
              '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
              '  <key id="url" for="node" attr.name="url" attr.type="string"/>\n'
              '  <key id="nofollow" for="edge" attr.name="nofollow" attr.type="boolean"/>\n'
              '  <graph id="crawl" edgedefault="directed">\n')
    for i, url in zip(edges.nodes.tolist(), names(edges.nodes), strict=True):
        out.write(f'    <node id="n{i}"><data key="url">{quoteattr(url)[1:-1]}</data></node>\n')
    count = 0
    for src, dst, flags in edges.chunks():
        out.write("".join(
            f'    <edge source="n{a}" target="n{b}"><data key="nofollow">'
            f'{"true" if f else "false"}</data></edge>\n'
            for a, b, f in zip(src.tolist(), dst.tolist(), flags.tolist(), strict=True)))
        count += src.size
    out.write("  </graph>\n</graphml>\n")
    return count


def export_edges_parquet(db_path: str | Path, path: str | Path, *, ids: bool = False,
                         nodes_path: str | Path | None = None,
                         edges: EdgeArrays | None = None) -> int:
    """Write the links of a crawl (every stored link, or ``edges``) as a Parquet file.

    Columns ``src``, ``dst`` (URLs, which Parquet dictionary-encodes in each row group;
    int32 URL ids with ``ids``)
    and ``nofollow`` (bool), in row groups of about four million links; the file's
    key-value metadata holds :meth:`EdgeArrays.policy` as JSON under
    :data:`PARQUET_METADATA_KEY`.  With ``ids``, ``nodes_path`` (required) receives
    the nodes as Parquet, columns ``id`` (int32) and ``url``.  Returns the number of
    links written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if ids and nodes_path is None:
        raise ConfigError("--ids needs a nodes file (--nodes FILE)")
    with CrawlReader(db_path) as reader, reader.snapshot():
        edges = edges or stored_edges(reader)
        table = reader.urls()
    urls = table.urls.arrow
    metadata = {PARQUET_METADATA_KEY: json.dumps(
        {**edges.policy(), "ids": "urls.id" if ids else "none: src and dst are URLs"})}
    if ids:
        assert nodes_path is not None
        pos = np.searchsorted(table.ids, edges.nodes)
        nodes = pa.table({"id": pa.array(edges.nodes.astype(np.int32)),
                          "url": urls.take(pa.array(pos))}).replace_schema_metadata(metadata)
        pq.write_table(nodes, str(nodes_path))

    def column(values: np.ndarray) -> Any:
        if ids:
            return pa.array(values.astype(np.int32))
        return urls.take(pa.array(np.searchsorted(table.ids, values)))

    kind = pa.int32() if ids else pa.large_string()
    schema = pa.schema([("src", kind), ("dst", kind), ("nofollow", pa.bool_())],
                       metadata=metadata)
    with pq.ParquetWriter(str(path), schema) as writer:
        for start in range(0, edges.src.size, _PARQUET_ROW_GROUP):
            end = start + _PARQUET_ROW_GROUP
            writer.write_table(pa.table(
                {"src": column(edges.src[start:end]), "dst": column(edges.dst[start:end]),
                 "nofollow": pa.array(edges.nofollow[start:end])}, schema=schema))
        if edges.src.size == 0:
            writer.write_table(schema.empty_table())
    return int(edges.src.size)


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).isoformat(timespec="milliseconds")


def export_pages(db_path: str | Path, out: TextIO, fmt: str = "tsv") -> int:
    """Write one row per discovered URL (:data:`PAGE_COLUMNS`), frontier included.

    Fetch fields (status, fetched_at, content_type, ...) come from the URL's final
    crawl fetch and are empty for URLs never fetched; ``fetched_at`` is ISO 8601 UTC;
    ``outcome`` is empty for URLs still in the frontier.  Returns the number of rows.
    """
    fetched_at = PAGE_COLUMNS.index("fetched_at")
    with CrawlReader(db_path) as reader, reader.snapshot():
        rows = ((*row[:fetched_at], _iso(row[fetched_at]), *row[fetched_at + 1:])
                for row in reader.iter_pages())
        return write_rows(out, PAGE_COLUMNS, rows, fmt)


def export_fetches(db_path: str | Path, out: TextIO, fmt: str = "tsv") -> int:
    """Write every fetch attempt (:data:`FETCH_COLUMNS`): crawl fetches, their retries
    and revisits, in the order they were recorded.  Times are ISO 8601 UTC; ``changed``
    is 1/0 for revisits that saw a change or not, empty when unknown.  Returns the
    number of rows."""
    with CrawlReader(db_path) as reader, reader.snapshot():
        rows = ((url, uid, seq, kind, attempt, _iso(start), _iso(end), *rest)
                for url, uid, seq, kind, attempt, start, end, *rest in reader.iter_fetches())
        return write_rows(out, FETCH_COLUMNS, rows, fmt)
