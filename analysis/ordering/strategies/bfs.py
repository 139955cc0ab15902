"""Breadth-first ordering: FIFO by discovery."""

from __future__ import annotations

import numpy as np
from webcrawl.analysis.ordering.strategies.base import Strategy
from webcrawl.analysis.ordering.strategies.registry import register_strategy

__all__ = ["BreadthFirst"]


@register_strategy
class BreadthFirst(Strategy):
    """Every URL has the same priority, so the tie rule (first discovered first) is FIFO."""

    name = "bfs"

    def discovered(self, url_id: int, depth: int) -> float:
        return 0.0

    def discovered_many(self, url_ids: np.ndarray, depth: int) -> np.ndarray:
        return np.zeros(len(url_ids))
