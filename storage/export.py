"""TSV export of a crawl database (the library side of ``webcrawl export``).

Both writers stream: memory stays bounded however large the crawl.  Output is
tab-separated with a header row; a field that contains a tab, newline or double
quote is quoted the CSV way (``csv`` module, ``excel-tab`` dialect), so any URL
survives a round trip through ``csv.reader(f, dialect="excel-tab")``.
"""

from __future__ import annotations

import csv
import datetime as _dt
from pathlib import Path
from typing import Any, TextIO

from storage.reader import PAGE_COLUMNS, CrawlReader

__all__ = ["EDGE_COLUMNS", "PAGE_COLUMNS", "export_edges", "export_pages"]

#: Columns of ``export_edges``.
EDGE_COLUMNS = ("src", "dst", "nofollow")


def _writer(out: TextIO) -> Any:
    return csv.writer(out, dialect="excel-tab", lineterminator="\n")


def export_edges(db_path: str | Path, out: TextIO) -> int:
    """Write every link of every fetched page (``src``, ``dst``, ``nofollow``: 0/1).

    Links appear page by page (source URL id order), each page's links in document
    order, duplicates kept; redirects appear as their one link.  Returns the number
    of rows written (without the header).
    """
    writer = _writer(out)
    writer.writerow(EDGE_COLUMNS)
    rows = 0
    with CrawlReader(db_path) as reader, reader.snapshot():
        for src, dst, nofollow in reader.iter_edges():
            writer.writerow((src, dst, int(nofollow)))
            rows += 1
    return rows


def _iso(ts: float | None) -> str:
    if ts is None:
        return ""
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).isoformat(timespec="milliseconds")


def export_pages(db_path: str | Path, out: TextIO) -> int:
    """Write one row per discovered URL (:data:`PAGE_COLUMNS`), frontier included.

    Fetch fields (status, fetched_at, content_type, ...) come from the URL's final
    crawl fetch and are empty for URLs never fetched; ``fetched_at`` is ISO 8601 UTC;
    ``outcome`` is empty for URLs still in the frontier.  Returns the number of rows.
    """
    writer = _writer(out)
    writer.writerow(PAGE_COLUMNS)
    fetched_at = PAGE_COLUMNS.index("fetched_at")
    rows = 0
    with CrawlReader(db_path) as reader, reader.snapshot():
        for row in reader.iter_pages():
            values = ["" if v is None else v for v in row]
            values[fetched_at] = _iso(row[fetched_at])
            writer.writerow(values)
            rows += 1
    return rows
