"""Fixtures of the graph tests: hand-made crawl databases."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def write_crawl() -> Callable[..., Path]:
    """``tests/crawler/crawldb.py``'s ``write_crawl`` (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "crawldb", Path(__file__).parents[2] / "crawler" / "crawldb.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    writer: Callable[..., Path] = module.write_crawl
    return writer
