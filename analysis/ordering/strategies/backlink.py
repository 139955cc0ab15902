"""Backlink-count ordering: the URL with most known in-links first."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from webcrawl.analysis.ordering.strategies._growable import GrowableArray
from webcrawl.analysis.ordering.strategies.base import PriorityUpdates, Strategy
from webcrawl.analysis.ordering.strategies.registry import register_strategy

__all__ = ["BacklinkCount"]


@register_strategy
class BacklinkCount(Strategy):
    """Priority = number of fetched pages known to link to the URL.

    Counted from fetched pages' *distinct* out-links (a page linking twice counts
    once; a self-link counts like any other link).  A new URL starts at 0 and gains 1
    per fetched page that links to it; ties go to the URL discovered first (the
    frontier's rule).  Each fetch returns one update per unfetched out-link target:
    O(out-degree log n) heap work.  State: one int32 count and one bool per URL id.
    """

    name = "backlink"

    def __init__(self, *, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self._inlinks = GrowableArray(np.int32, 0)
        self._fetched = GrowableArray(np.bool_, False)

    def discovered(self, url_id: int, depth: int) -> float:
        self._inlinks.ensure(url_id)
        self._fetched.ensure(url_id)
        return float(self._inlinks.data[url_id])

    def discovered_many(self, url_ids: np.ndarray, depth: int) -> np.ndarray:
        if not len(url_ids):
            return np.empty(0)
        top = int(url_ids.max())
        self._fetched.ensure(top)
        priorities: np.ndarray = self._inlinks.ensure(top)[url_ids].astype(np.float64)
        return priorities

    def fetched(self, url_id: int, out_links: Sequence[int]) -> PriorityUpdates:
        fetched = self._fetched.ensure(url_id)
        fetched[url_id] = True
        targets = np.unique(np.asarray(out_links, dtype=np.int64))
        if targets.size == 0:
            return []
        top = int(targets[-1])
        counts = self._inlinks.ensure(top)
        fetched = self._fetched.ensure(top)
        counts[targets] += 1
        open_targets = targets[~fetched[targets]]
        return list(
            zip(open_targets.tolist(), counts[open_targets].astype(float).tolist(), strict=True)
        )

    def inlinks(self, url_id: int) -> int:
        """Known in-link count of ``url_id`` (0 if never seen)."""
        data = self._inlinks.data
        return int(data[url_id]) if url_id < data.size else 0
