"""The formats a crawl database exports to: the one list (the library's writers in
:mod:`webcrawl.storage.export` and the ``webcrawl export`` command both read it).

No heavy import here, so a command-line parser can offer these as choices without
loading numpy or pyarrow.
"""

from __future__ import annotations

__all__ = ["EDGE_FORMATS", "EXPORT_FORMATS", "FILE_FORMATS", "TABLE_FORMATS", "formats_of"]

#: Formats :func:`webcrawl.storage.export.export_edges` writes to a text stream.
EDGE_FORMATS = ("tsv", "edgelist", "graphml", "jsonl")
#: Formats of the table exports (pages, fetches, rates).
TABLE_FORMATS = ("tsv", "jsonl")
#: Edge formats written to a file only, not a stream (``parquet``:
#: :func:`webcrawl.storage.export.export_edges_parquet`).
FILE_FORMATS = ("parquet",)
#: Every format of every export, in the order a user is offered them.
EXPORT_FORMATS = ("tsv", "jsonl", "edgelist", "graphml", "parquet")


def formats_of(what: str) -> tuple[str, ...]:
    """The formats of one export: ``edges`` (streamed and file-only), else a table
    (``pages``, ``fetches``, ``rates``)."""
    return (*EDGE_FORMATS, *FILE_FORMATS) if what == "edges" else TABLE_FORMATS
