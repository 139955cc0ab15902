"""Lazy package facades (PEP 562), shared by the ``__init__`` of every package of ours.

A facade names its public API once, in a table ``name -> module that defines it``; a name's
module is imported the first time the name is read and the value kept in the package, so
importing a package or one of its light modules (``webcrawl.crawler.urls``,
``webcrawl.storage.errors``) loads no heavy library (aiohttp, numpy, scipy, matplotlib).
Type checkers cannot run the table: each facade also imports its names under
``TYPE_CHECKING`` (``from m import X as X``, an explicit re-export), which
``tests/test_architecture.py`` checks against the table.

It lives in ``storage``, the bottom layer, because every package may import from there.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, table: Mapping[str, str],
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of the facade ``package``.

    Examples
    --------
    >>> import webcrawl.storage
    >>> "CrawlReader" in dir(webcrawl.storage)
    True
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return __getattr__, __dir__
