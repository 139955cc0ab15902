"""The crawl database: one SQLite file per crawl (see ``schema.sql``), and the one exception
tree of :mod:`webcrawl.storage.errors`.

Read a crawl::

    from webcrawl.storage import CrawlReader

    with CrawlReader("crawl.db") as reader:
        urls = reader.urls()          # ids, URLs, hosts, depths as numpy arrays
        links = reader.links_csr()    # the link graph, compressed rows

The public API is the table below; each name loads its module on first use, so
``import webcrawl.storage.errors`` (done by the CLI dispatcher) stays cheap.  The writer
(:mod:`webcrawl.storage.store`) belongs to the crawler; every module is importable by its name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webcrawl.storage._facade import lazy_attributes
from webcrawl.storage._version import __version__ as __version__

if TYPE_CHECKING:  # `X as X`: explicit re-exports for type checkers
    from webcrawl.storage.edgelist import EdgeImport as EdgeImport
    from webcrawl.storage.edgelist import import_edges as import_edges
    from webcrawl.storage.errors import AnalysisError as AnalysisError
    from webcrawl.storage.errors import ConfigError as ConfigError
    from webcrawl.storage.errors import CrawlError as CrawlError
    from webcrawl.storage.errors import EmptyGraphError as EmptyGraphError
    from webcrawl.storage.errors import FetchError as FetchError
    from webcrawl.storage.errors import FetchTimeoutError as FetchTimeoutError
    from webcrawl.storage.errors import FixtureError as FixtureError
    from webcrawl.storage.errors import HTTPStatusError as HTTPStatusError
    from webcrawl.storage.errors import InputFormatError as InputFormatError
    from webcrawl.storage.errors import NetworkError as NetworkError
    from webcrawl.storage.errors import (
        PowerIterationFailedConvergence as PowerIterationFailedConvergence,
    )
    from webcrawl.storage.errors import SchemaVersionError as SchemaVersionError
    from webcrawl.storage.errors import ScopeError as ScopeError
    from webcrawl.storage.errors import StoreBusyError as StoreBusyError
    from webcrawl.storage.errors import StoreCorruptError as StoreCorruptError
    from webcrawl.storage.errors import StoreError as StoreError
    from webcrawl.storage.errors import StoreFullError as StoreFullError
    from webcrawl.storage.errors import StoreLockedError as StoreLockedError
    from webcrawl.storage.errors import StoreReadOnlyError as StoreReadOnlyError
    from webcrawl.storage.errors import TooLargeError as TooLargeError
    from webcrawl.storage.errors import WebcrawlError as WebcrawlError
    from webcrawl.storage.export import export_edges as export_edges
    from webcrawl.storage.export import export_fetches as export_fetches
    from webcrawl.storage.export import export_pages as export_pages
    from webcrawl.storage.reader import CrawlReader as CrawlReader
    from webcrawl.storage.records import FetchKind as FetchKind
    from webcrawl.storage.records import Outcome as Outcome

#: The public API: name -> the module that defines it (imported on first use).
_LAZY = {
    # read, import and export crawl databases
    "CrawlReader": "webcrawl.storage.reader",  # a crawl database as numpy arrays
    "FetchKind": "webcrawl.storage.records",  # page, robots, sitemap (the fetches table)
    "Outcome": "webcrawl.storage.records",  # what a fetch came to (the fetches table)
    "import_edges": "webcrawl.storage.edgelist",  # a published edge list -> a database
    "EdgeImport": "webcrawl.storage.edgelist",  # what import_edges() returns
    "export_pages": "webcrawl.storage.export",  # TSV, CSV, JSON lines or Parquet
    "export_edges": "webcrawl.storage.export",
    "export_fetches": "webcrawl.storage.export",
    # the one exception tree, in the order webcrawl.storage.errors draws it
    "WebcrawlError": "webcrawl.storage.errors",
    "ConfigError": "webcrawl.storage.errors",
    "InputFormatError": "webcrawl.storage.errors",
    "StoreError": "webcrawl.storage.errors",
    "SchemaVersionError": "webcrawl.storage.errors",
    "StoreCorruptError": "webcrawl.storage.errors",
    "StoreFullError": "webcrawl.storage.errors",
    "StoreLockedError": "webcrawl.storage.errors",
    "StoreBusyError": "webcrawl.storage.errors",
    "StoreReadOnlyError": "webcrawl.storage.errors",
    "CrawlError": "webcrawl.storage.errors",
    "ScopeError": "webcrawl.storage.errors",
    "FetchError": "webcrawl.storage.errors",
    "NetworkError": "webcrawl.storage.errors",
    "FetchTimeoutError": "webcrawl.storage.errors",
    "TooLargeError": "webcrawl.storage.errors",
    "HTTPStatusError": "webcrawl.storage.errors",
    "AnalysisError": "webcrawl.storage.errors",
    "EmptyGraphError": "webcrawl.storage.errors",
    "PowerIterationFailedConvergence": "webcrawl.storage.errors",
    "FixtureError": "webcrawl.storage.errors",
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
