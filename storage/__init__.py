"""The crawl database: one SQLite file per crawl (see ``schema.sql``).

Public names: the writer :class:`CrawlStore`, the read-only :class:`CrawlReader` and its
typed tables, the records (:class:`FetchRecord`, :class:`Outcome`, :class:`FetchKind`),
exports, the shared array type aliases and the one exception tree of :mod:`storage.errors`.
The writer, reader, exports and aliases load on first use so that ``import storage.errors``
(done by the CLI dispatcher) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from storage._version import __version__
from storage.errors import (
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
from storage.records import (
    FetchKind,
    FetchRecord,
    Outcome,
)

if TYPE_CHECKING:
    from storage.arrays import (
        BoolArray,
        FloatArray,
        Int8Array,
        IntArray,
        ObjectArray,
    )
    from storage.checks import (
        check_fields,
    )
    from storage.edgelist import (
        EdgeImport,
        import_edges,
        read_edge_arrays,
    )
    from storage.export import (
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
    from storage.lock import (
        WriterLock,
        lock_path,
    )
    from storage.reader import (
        FETCH_KINDS,
        OUTCOMES,
        CrawlReader,
        FetchTable,
        LinkArrays,
        UrlTable,
    )
    from storage.store import (
        CrawlStore,
        HostRow,
        ResumeState,
        UrlRow,
    )

#: Public name -> the module that defines it, imported on first use.
_LAZY: dict[str, str] = {
    "BoolArray": "storage.arrays",
    "CrawlReader": "storage.reader",
    "CrawlStore": "storage.store",
    "EDGE_COLUMNS": "storage.export",
    "EDGE_FORMATS": "storage.export",
    "EdgeImport": "storage.edgelist",
    "FETCH_COLUMNS": "storage.export",
    "FETCH_KINDS": "storage.reader",
    "FetchTable": "storage.reader",
    "FloatArray": "storage.arrays",
    "HostRow": "storage.store",
    "Int8Array": "storage.arrays",
    "IntArray": "storage.arrays",
    "LinkArrays": "storage.reader",
    "OUTCOMES": "storage.reader",
    "ObjectArray": "storage.arrays",
    "PAGE_COLUMNS": "storage.export",
    "ResumeState": "storage.store",
    "TABLE_FORMATS": "storage.export",
    "UrlRow": "storage.store",
    "UrlTable": "storage.reader",
    "WriterLock": "storage.lock",
    "check_fields": "storage.checks",
    "export_edges": "storage.export",
    "export_fetches": "storage.export",
    "export_pages": "storage.export",
    "import_edges": "storage.edgelist",
    "lock_path": "storage.lock",
    "read_edge_arrays": "storage.edgelist",
    "write_rows": "storage.export",
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
