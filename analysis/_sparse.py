"""Input checking shared by the matrix algorithms (private)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from webcrawl.storage.errors import ConfigError, EmptyGraphError

__all__ = ["as_adjacency", "as_distribution", "as_links"]


def as_adjacency(adjacency: Any, *, allow_empty: bool = False) -> sp.csr_array:
    """Return ``adjacency`` as a square float64 CSR array with non-negative weights.

    Accepts any scipy sparse matrix or array, a dense array, or a
    :class:`webcrawl.analysis.graph.captured.CapturedGraph` (its ``adjacency`` is used).  Duplicate
    entries are summed (link counts).
    """
    adjacency = getattr(adjacency, "adjacency", adjacency)
    try:
        csr = sp.csr_array(adjacency, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"adjacency must be a square sparse matrix: {exc}") from exc
    if csr.ndim != 2 or csr.shape[0] != csr.shape[1]:
        raise ConfigError(f"adjacency must be square, got shape {csr.shape}")
    if csr.shape[0] == 0 and not allow_empty:
        raise EmptyGraphError("the graph has no nodes")
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()
    if csr.nnz and (csr.data.min() < 0 or not np.isfinite(csr.data).all()):
        raise ConfigError("adjacency weights must be finite and non-negative")
    return csr


def as_distribution(values: Any, n: int, name: str) -> np.ndarray:
    """Return ``values`` as a float64 probability vector of length ``n``."""
    vec = np.array(values, dtype=np.float64).ravel()
    if vec.shape != (n,):
        raise ConfigError(f"{name} must have length {n}, got {vec.size}")
    if not np.isfinite(vec).all() or (vec < 0).any():
        raise ConfigError(f"{name} must be finite and non-negative")
    total = vec.sum()
    if total <= 0:
        raise ConfigError(f"{name} must have a positive sum")
    return np.asarray(vec / total, dtype=np.float64)


def as_links(adjacency: Any) -> sp.csr_array:
    """:func:`as_adjacency` without explicit zeros: a zero weight is not a link."""
    adj = as_adjacency(adjacency)
    if adj.nnz and not adj.data.all():
        adj = adj.copy()
        adj.eliminate_zeros()
    return adj
