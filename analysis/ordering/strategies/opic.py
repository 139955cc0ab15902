"""OPIC ordering: Abiteboul et al.'s on-line page importance, priority = cash.

References
----------
.. [1] S. Abiteboul, M. Preda, G. Cobena, "Adaptive on-line page importance
   computation", WWW 2003.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from webcrawl.analysis.ordering.strategies._growable import GrowableArray
from webcrawl.analysis.ordering.strategies.base import PriorityUpdates, Strategy
from webcrawl.analysis.ordering.strategies.registry import register_strategy

__all__ = ["OnlinePageImportance"]

#: Cash each seed starts with.  Abiteboul et al. give every page 1/n; a crawl knows
#: only its seeds at the start, and a common scale does not change the order.
SEED_CASH = 1.0


@register_strategy
class OnlinePageImportance(Strategy):
    """Priority = the URL's current OPIC cash ([1]_).

    Cash flow, for each fetched page i with cash C[i] and distinct out-links
    (a one-pass crawl fetches every page once):

    - seeds start with :data:`SEED_CASH`, other URLs with 0;
    - ``H[i] += C[i]``, ``G += C[i]``, then each distinct child gets
      ``C[i] / outdeg(i)`` and ``C[i] = 0``;
    - the *virtual page* (linked to and from every page, which makes the process
      converge) receives what would otherwise leave circulation: all the cash of a
      dangling page (no out-links), and the share sent to a child that was already
      fetched (it will never be fetched again, so it could not pass the cash on);
    - the virtual page passes its cash on at once, split equally over every URL of
      the frontier (discovered, unfetched).  Total cash held by the frontier stays
      equal to the seeds' cash while the frontier is non-empty.

    The equal split adds the same amount to every frontier URL, so instead of
    touching them all (O(n) per fetch) it raises a common ``offset``; each URL stores
    ``own`` cash and the offset at its discovery (``base``), and its true cash is
    ``own + offset - base``.  The priority handed to the frontier is
    ``own - base`` = cash - offset: the order is exactly the cash order, with O(1)
    state and O(out-degree log n) heap work per fetch.  :meth:`cash` gives the true
    cash; :meth:`importance` the normalised estimate ``(H + C) / (G + total)``.
    """

    name = "opic"

    def __init__(self, *, seed: int = 0) -> None:
        super().__init__(seed=seed)
        # By URL id.  Unfetched: own cash and the offset at discovery (``base``).
        # Fetched: ``own`` holds the history H and ``base`` is NaN (the fetched mark),
        # so the state is 16 bytes a URL.
        self._own = GrowableArray(np.float64, 0.0)
        self._base = GrowableArray(np.float64, 0.0)
        self._offset = 0.0
        self._n_frontier = 0
        self._total_cash = 0.0
        #: G: total cash distributed so far (sum of every fetched page's cash).
        self.distributed = 0.0
        #: Cash held by the virtual page (non-zero only while the frontier is empty).
        self.virtual_cash = 0.0

    def discovered(self, url_id: int, depth: int) -> float:
        own = self._own.ensure(url_id)
        base = self._base.ensure(url_id)
        if depth == 0:
            own[url_id] = SEED_CASH
            self._total_cash += SEED_CASH
        base[url_id] = self._offset
        self._n_frontier += 1
        return float(own[url_id] - base[url_id])

    def discovered_many(self, url_ids: np.ndarray, depth: int) -> np.ndarray:
        if not len(url_ids):
            return np.empty(0)
        top = int(url_ids.max())
        own = self._own.ensure(top)
        base = self._base.ensure(top)
        if depth == 0:
            own[url_ids] = SEED_CASH
            for _ in range(len(url_ids)):  # the same float sum as one at a time
                self._total_cash += SEED_CASH
        base[url_ids] = self._offset
        self._n_frontier += len(url_ids)
        priorities: np.ndarray = own[url_ids] - base[url_ids]
        return priorities

    def fetched(self, url_id: int, out_links: Sequence[int]) -> PriorityUpdates:
        cash = self.cash(url_id)
        own, base = self._own.data, self._base.data
        own[url_id] = self.history(url_id) + cash
        base[url_id] = np.nan
        self.distributed += cash
        self._n_frontier -= 1
        targets = np.unique(np.asarray(out_links, dtype=np.int64))
        if targets.size == 0:
            self.virtual_cash += cash
            self._redistribute()
            return []
        share = cash / targets.size
        open_targets = targets[~np.isnan(base[targets])]
        own[open_targets] += share
        self.virtual_cash += share * (targets.size - open_targets.size)
        self._redistribute()
        priorities = own[open_targets] - base[open_targets]
        return list(zip(open_targets.tolist(), priorities.tolist(), strict=True))

    def _redistribute(self) -> None:
        """The virtual page splits its cash equally over the frontier (via the offset)."""
        if self._n_frontier > 0 and self.virtual_cash > 0.0:
            self._offset += self.virtual_cash / self._n_frontier
            self.virtual_cash = 0.0

    def cash(self, url_id: int) -> float:
        """Current cash C of ``url_id`` (0 once fetched)."""
        base = self._base.data[url_id]
        if np.isnan(base):
            return 0.0
        return float(self._own.data[url_id] + self._offset - base)

    def history(self, url_id: int) -> float:
        """Cash history H of ``url_id``: the cash it held when fetched."""
        if np.isnan(self._base.data[url_id]):
            return float(self._own.data[url_id])
        return 0.0

    def importance(self, url_id: int) -> float:
        """Abiteboul et al.'s estimate ``(H + C) / (G + total seed cash)``."""
        total = self.distributed + self._total_cash
        return (self.history(url_id) + self.cash(url_id)) / total if total else 0.0
