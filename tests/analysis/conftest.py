"""Random test graphs shared by the analysis tests."""

from __future__ import annotations

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
