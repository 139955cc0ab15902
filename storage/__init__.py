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
    NetworkError,
    PowerIterationFailedConvergence,
    SchemaVersionError,
    ScopeError,
    StoreError,
    StoreFullError,
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
    from storage.export import (
        EDGE_COLUMNS,
        PAGE_COLUMNS,
        export_edges,
        export_pages,
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
    "UrlRow": "storage.store",
    "UrlTable": "storage.reader",
    "check_fields": "storage.checks",
    "export_edges": "storage.export",
    "export_pages": "storage.export",
}

__all__ = [
    "EDGE_COLUMNS",
    "FETCH_KINDS",
    "OUTCOMES",
    "PAGE_COLUMNS",
    "AnalysisError",
    "BoolArray",
    "ConfigError",
    "CrawlError",
    "CrawlReader",
    "CrawlStore",
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
    "StoreReadOnlyError",
    "TooLargeError",
    "UrlRow",
    "UrlTable",
    "WebcrawlError",
    "__version__",
    "check_fields",
    "export_edges",
    "export_pages",
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
