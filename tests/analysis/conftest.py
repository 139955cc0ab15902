"""Random test graphs and hand-made crawl databases shared by the analysis tests."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp


def make_random_digraph(
    n: int,
    m: int,
    seed: int,
    *,
    dangling_fraction: float = 0.2,
    self_loops: bool = True,
    duplicates: bool = True,
) -> sp.csr_array:
    """A random directed multigraph: weights count duplicate links; some rows empty."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    dangling = rng.random(n) < dangling_fraction
    keep = ~dangling[src]
    if not self_loops:
        keep &= src != dst
    src, dst = src[keep], dst[keep]
    if duplicates:
        # Repeat a tenth of the links so some weights are 2 or more.
        extra = rng.integers(0, src.size, src.size // 10) if src.size else np.array([], int)
        src, dst = np.concatenate([src, src[extra]]), np.concatenate([dst, dst[extra]])
    adj = sp.csr_array((np.ones(src.size), (src, dst)), shape=(n, n))
    adj.sum_duplicates()
    return adj


@pytest.fixture
def random_digraph():
    """The random multigraph builder, as a fixture (tests/ is not a package)."""
    return make_random_digraph


@pytest.fixture(scope="session")
def write_crawl() -> Callable[..., Path]:
    """``tests/crawler/crawldb.py``'s ``write_crawl`` (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "crawldb", Path(__file__).parents[1] / "crawler" / "crawldb.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    writer: Callable[..., Path] = module.write_crawl
    return writer
