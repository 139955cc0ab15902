"""Depth-first ordering: LIFO by discovery."""

from __future__ import annotations

import numpy as np
from webcrawl.analysis.ordering.strategies.base import Strategy
from webcrawl.analysis.ordering.strategies.registry import register_strategy

__all__ = ["DepthFirst"]


@register_strategy
class DepthFirst(Strategy):
    """The most recently discovered URL first.

    The priority is the URL's discovery count (0 for the first URL announced, 1 for
    the next, ...), so the latest discovery always ranks highest: a stack.  Among a
    page's new out-links (announced in document order) the last one is taken first,
    as with a stack that pushes them in document order.  Exact in float64 up to 2**53
    discoveries.
    """

    name = "dfs"

    def __init__(self, *, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self._count = 0

    def discovered(self, url_id: int, depth: int) -> float:
        priority = float(self._count)
        self._count += 1
        return priority

    def discovered_many(self, url_ids: np.ndarray, depth: int) -> np.ndarray:
        start = self._count
        self._count += len(url_ids)
        return np.arange(start, self._count, dtype=np.float64)
