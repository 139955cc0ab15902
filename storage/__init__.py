"""The crawl database: one SQLite file per crawl (see ``schema.sql``).

Public names: the writer :class:`CrawlStore` (with :class:`HostRow`,
:class:`UrlRow`, :class:`ResumeState`), the read-only :class:`CrawlReader`, the
records :class:`FetchRecord`, :class:`Outcome`, :class:`FetchKind`, and the error
tree of :mod:`storage.errors`.  The writer and reader are imported lazily so that
``import storage.errors`` (done by the CLI dispatcher) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from storage.errors import *  # noqa: F403
from storage.errors import __all__ as _errors_all
from storage.records import FetchKind, FetchRecord, Outcome

if TYPE_CHECKING:
    from storage.reader import CrawlReader, UrlTable
    from storage.store import CrawlStore, HostRow, ResumeState, UrlRow

_LAZY = {
    "CrawlStore": "storage.store",
    "HostRow": "storage.store",
    "ResumeState": "storage.store",
    "UrlRow": "storage.store",
    "CrawlReader": "storage.reader",
    "UrlTable": "storage.reader",
}

__all__ = [
    *_errors_all,
    "CrawlReader",
    "CrawlStore",
    "FetchKind",
    "FetchRecord",
    "HostRow",
    "Outcome",
    "ResumeState",
    "UrlRow",
    "UrlTable",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'storage' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
