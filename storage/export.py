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

``ids=True`` (``--ids``) writes integer node ids (``urls.id``) instead of URLs in the
edge rows, plus a nodes file ``id<TAB>url`` (WebGraph/graph-tool users).
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO
from xml.sax.saxutils import quoteattr

import numpy as np
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.reader import PAGE_COLUMNS, CrawlReader

__all__ = ["EDGE_COLUMNS", "EDGE_FORMATS", "FETCH_COLUMNS", "PAGE_COLUMNS", "TABLE_FORMATS",
           "export_edges", "export_fetches", "export_pages", "write_rows"]

#: Columns of ``export_edges``.
EDGE_COLUMNS = ("src", "dst", "nofollow")
#: Columns of ``export_fetches`` (one row per fetch attempt, in insertion order).
FETCH_COLUMNS = ("url", "url_id", "seq", "kind", "attempt", "started_at", "ended_at",
                 "outcome", "status", "content_type", "size", "digest", "etag",
                 "last_modified", "error", "strategy", "priority", "rank", "changed")
#: Formats of ``export_edges``.
EDGE_FORMATS = ("tsv", "edgelist", "graphml", "jsonl")
#: Formats of the table exports (pages, fetches, rates).
TABLE_FORMATS = ("tsv", "jsonl")
#: Links read per chunk by the id-based edge writers.
_EDGE_CHUNK = 1 << 20


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
                 nodes_out: TextIO | None = None) -> int:
    """Write every link of every fetched page.

    Links appear page by page (source URL id order), each page's links in document
    order, duplicates kept; redirects appear as their one link.  ``tsv``/``jsonl``
    rows are ``src``, ``dst``, ``nofollow`` (0/1; JSON: true/false); ``edgelist`` is
    ``src dst``; ``graphml`` see the module docstring.  With ``ids`` the endpoints are
    URL ids and ``nodes_out`` (required) receives ``id<TAB>url`` for every URL.
    Returns the number of links written.
    """
    if fmt not in EDGE_FORMATS:
        raise ConfigError(f"unknown edge format {fmt!r}; choose from {', '.join(EDGE_FORMATS)}")
    if ids and fmt == "graphml":
        raise ConfigError("--ids does not apply to graphml (its nodes carry ids and URLs)")
    if ids and nodes_out is None:
        raise ConfigError("--ids needs a nodes file (--nodes FILE)")
    with CrawlReader(db_path) as reader, reader.snapshot():
        if fmt == "graphml":
            return _graphml(reader, out)
        if ids:
            assert nodes_out is not None
            _nodes(reader, nodes_out)
            return _id_edges(reader, out, fmt)
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


def _nodes(reader: CrawlReader, out: TextIO) -> None:
    table = reader.urls()
    for i, url in zip(table.ids.tolist(), table.urls, strict=True):
        out.write(f"{i}\t{_token(url)}\n")


def _edge_chunks(reader: CrawlReader) -> Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(src ids, dst ids, nofollow flags) of every link, in chunks of the CSR arrays."""
    links = reader.links_csr()
    nofollow = reader.nofollow_csr()
    src = links.edge_src
    flags = np.zeros(src.size, dtype=bool)
    if nofollow.dst.size:
        width = np.int64(max(int(links.dst.max(initial=0)), int(nofollow.dst.max())) + 1)
        flags = np.isin(src * width + links.dst, nofollow.edge_src * width + nofollow.dst)
    for start in range(0, src.size, _EDGE_CHUNK):
        end = start + _EDGE_CHUNK
        yield src[start:end], links.dst[start:end], flags[start:end]


def _id_edges(reader: CrawlReader, out: TextIO, fmt: str) -> int:
    count = 0
    if fmt == "tsv":
        out.write("\t".join(EDGE_COLUMNS) + "\n")
    for src, dst, flags in _edge_chunks(reader):
        if fmt == "edgelist":
            lines = [f"{a} {b}\n" for a, b in zip(src.tolist(), dst.tolist(), strict=True)]
        elif fmt == "tsv":
            lines = [f"{a}\t{b}\t{int(f)}\n" for a, b, f in
                     zip(src.tolist(), dst.tolist(), flags.tolist(), strict=True)]
        else:
            lines = [f'{{"src": {a}, "dst": {b}, "nofollow": {"true" if f else "false"}}}\n'
                     for a, b, f in zip(src.tolist(), dst.tolist(), flags.tolist(), strict=True)]
        out.write("".join(lines))
        count += src.size
    return count


def _graphml(reader: CrawlReader, out: TextIO) -> int:
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n'
              '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
              '  <key id="url" for="node" attr.name="url" attr.type="string"/>\n'
              '  <key id="nofollow" for="edge" attr.name="nofollow" attr.type="boolean"/>\n'
              '  <graph id="crawl" edgedefault="directed">\n')
    table = reader.urls()
    for i, url in zip(table.ids.tolist(), table.urls, strict=True):
        out.write(f'    <node id="n{i}"><data key="url">{_xml_text(url)}</data></node>\n')
    count = 0
    for src, dst, flags in _edge_chunks(reader):
        out.write("".join(
            f'    <edge source="n{a}" target="n{b}"><data key="nofollow">'
            f'{"true" if f else "false"}</data></edge>\n'
            for a, b, f in zip(src.tolist(), dst.tolist(), flags.tolist(), strict=True)))
        count += src.size
    out.write("  </graph>\n</graphml>\n")
    return count


def _xml_text(text: str) -> str:
    return quoteattr(text)[1:-1]


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
