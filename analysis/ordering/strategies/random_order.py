"""Random ordering: uniform among the known, unfetched URLs, reproducible with a seed."""

from __future__ import annotations

import numpy as np
from webcrawl.analysis.ordering.strategies.base import Strategy
from webcrawl.analysis.ordering.strategies.registry import register_strategy

__all__ = ["RandomOrder"]

#: Uniform draws are taken from the generator in blocks of this size (speed only:
#: the sequence of priorities depends on the seed alone).
_BLOCK = 4096


@register_strategy
class RandomOrder(Strategy):
    """Every URL gets an independent uniform random priority when it is discovered.

    Taking the highest of i.i.d. uniform keys picks each URL of the frontier with the
    same probability (1 / frontier size) whenever it is asked, however the frontier
    was built, so this *is* uniform selection among the known unfetched URLs, with
    O(log n) heap work and no re-draws.  The draws come from
    ``numpy.random.default_rng(seed)`` in discovery order, so the same seed and the
    same discovery sequence (a resumed crawl replays it) give the same order.
    """

    name = "random"

    def __init__(self, *, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self._rng = np.random.default_rng(seed)
        self._block = np.empty(0)
        self._next = 0

    def discovered(self, url_id: int, depth: int) -> float:
        if self._next >= self._block.size:
            self._block = self._rng.random(_BLOCK)
            self._next = 0
        priority = float(self._block[self._next])
        self._next += 1
        return priority

    def discovered_many(self, url_ids: np.ndarray, depth: int) -> np.ndarray:
        out = np.empty(len(url_ids))
        done = 0
        while done < len(out):
            if self._next >= self._block.size:
                self._block = self._rng.random(_BLOCK)
                self._next = 0
            take = min(len(out) - done, self._block.size - self._next)
            out[done:done + take] = self._block[self._next:self._next + take]
            self._next += take
            done += take
        return out
