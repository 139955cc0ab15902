"""The crawl database: one SQLite file per crawl (see ``schema.sql``).

Public names: the writer :class:`CrawlStore`, the read-only :class:`CrawlReader` and its
typed tables, the records (:class:`FetchRecord`, :class:`Outcome`, :class:`FetchKind`),
exports, the shared array type aliases and the one exception tree of :mod:`webcrawl.storage.errors`.
The writer, reader, exports and aliases load on first use so that ``import webcrawl.storage.errors``
(done by the CLI dispatcher) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from webcrawl.storage._version import __version__
from webcrawl.storage.errors import (
    AnalysisError,
    ConfigError,
    CrawlError,
    EmptyGraphError,
    FetchError,
    FetchTimeoutError,
    FixtureError,
    HTTPStatusError,
    InputFormatError,
    NetworkError,
    PowerIterationFailedConvergence,
    SchemaVersionError,
    ScopeError,
    StoreError,
    StoreFullError,
    StoreLockedError,
    StoreReadOnlyError,
    TooLargeError,
    WebcrawlError,
)
from webcrawl.storage.records import (
    FetchKind,
    FetchRecord,
    Outcome,
)

if TYPE_CHECKING:
    from webcrawl.storage.arrays import (
        BoolArray,
        FloatArray,
        Int8Array,
        IntArray,
        ObjectArray,
    )
    from webcrawl.storage.checks import (
        check_fields,
    )
    from webcrawl.storage.edgelist import (
        EdgeImport,
        import_edges,
        read_edge_arrays,
    )
    from webcrawl.storage.export import (
        EDGE_COLUMNS,
        EDGE_FORMATS,
        FETCH_COLUMNS,
        PAGE_COLUMNS,
        TABLE_FORMATS,
        export_edges,
        export_fetches,
        export_pages,
        write_rows,
    )
    from webcrawl.storage.lock import (
        WriterLock,
        lock_path,
        new_database,
    )
    from webcrawl.storage.reader import (
        FETCH_KINDS,
        OUTCOMES,
        CrawlReader,
        FetchTable,
        LinkArrays,
        UrlTable,
    )
    from webcrawl.storage.store import (
        CrawlStore,
        HostRow,
        ResumeState,
        UrlRow,
    )

#: Public name -> the module that defines it, imported on first use.
_LAZY: dict[str, str] = {
    "BoolArray": "webcrawl.storage.arrays",
    "CrawlReader": "webcrawl.storage.reader",
    "CrawlStore": "webcrawl.storage.store",
    "EDGE_COLUMNS": "webcrawl.storage.export",
    "EDGE_FORMATS": "webcrawl.storage.export",
    "EdgeImport": "webcrawl.storage.edgelist",
    "FETCH_COLUMNS": "webcrawl.storage.export",
    "FETCH_KINDS": "webcrawl.storage.reader",
    "FetchTable": "webcrawl.storage.reader",
    "FloatArray": "webcrawl.storage.arrays",
    "HostRow": "webcrawl.storage.store",
    "Int8Array": "webcrawl.storage.arrays",
    "IntArray": "webcrawl.storage.arrays",
    "LinkArrays": "webcrawl.storage.reader",
    "OUTCOMES": "webcrawl.storage.reader",
    "ObjectArray": "webcrawl.storage.arrays",
    "PAGE_COLUMNS": "webcrawl.storage.export",
    "ResumeState": "webcrawl.storage.store",
    "TABLE_FORMATS": "webcrawl.storage.export",
    "UrlRow": "webcrawl.storage.store",
    "UrlTable": "webcrawl.storage.reader",
    "WriterLock": "webcrawl.storage.lock",
    "check_fields": "webcrawl.storage.checks",
    "export_edges": "webcrawl.storage.export",
    "export_fetches": "webcrawl.storage.export",
    "export_pages": "webcrawl.storage.export",
    "import_edges": "webcrawl.storage.edgelist",
    "lock_path": "webcrawl.storage.lock",
    "new_database": "webcrawl.storage.lock",
    "read_edge_arrays": "webcrawl.storage.edgelist",
    "write_rows": "webcrawl.storage.export",
}

__all__ = [
    "EDGE_COLUMNS",
    "EDGE_FORMATS",
    "FETCH_COLUMNS",
    "FETCH_KINDS",
    "OUTCOMES",
    "PAGE_COLUMNS",
    "TABLE_FORMATS",
    "AnalysisError",
    "BoolArray",
    "ConfigError",
    "CrawlError",
    "CrawlReader",
    "CrawlStore",
    "EdgeImport",
    "EmptyGraphError",
    "FetchError",
    "FetchKind",
    "FetchRecord",
    "FetchTable",
    "FetchTimeoutError",
    "FixtureError",
    "FloatArray",
    "HTTPStatusError",
    "HostRow",
    "InputFormatError",
    "Int8Array",
    "IntArray",
    "LinkArrays",
    "NetworkError",
    "ObjectArray",
    "Outcome",
    "PowerIterationFailedConvergence",
    "ResumeState",
    "SchemaVersionError",
    "ScopeError",
    "StoreError",
    "StoreFullError",
    "StoreLockedError",
    "StoreReadOnlyError",
    "TooLargeError",
    "UrlRow",
    "UrlTable",
    "WebcrawlError",
    "WriterLock",
    "__version__",
    "check_fields",
    "export_edges",
    "export_fetches",
    "export_pages",
    "import_edges",
    "lock_path",
    "new_database",
    "read_edge_arrays",
    "write_rows",
]


def __getattr__(name: str) -> Any:
    # PEP 562: heavy modules load on first use, so importing one light module stays cheap.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
