"""Bring your own data: WARC files into a crawl database.

(Edge lists need no crawler code and live in :mod:`webcrawl.storage.edgelist`.)
"""

from __future__ import annotations

from webcrawl.crawler.ingest.warc import WarcImport, import_warc

__all__ = ["WarcImport", "import_warc"]
