"""Bring your own data: WARC files into a crawl database.

(Edge lists need no crawler code and live in :mod:`storage.edgelist`.)
"""

from __future__ import annotations

from crawler.ingest.warc import WarcImport, import_warc

__all__ = ["WarcImport", "import_warc"]
