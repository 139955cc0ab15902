"""Oracle orderings of Baeza-Yates et al.: the final PageRank, or a previous crawl's.

* ``omniscient``: the frontier ordered by the PageRank of the *final* graph, which no
  real crawler knows: a ceiling for orderings that, like it, can only take URLs they
  have discovered (virtual crawls only);
* ``historical``: the frontier ordered by the PageRank a *previous* crawl of the same
  web measured (``history=DB``), URLs matched by their normalised text; a URL the
  previous crawl did not know gets a prior (below).

References
----------
.. [1] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country:
   better strategies than breadth-first for web page ordering", WWW 2005.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from webcrawl.analysis.ordering.strategies.base import (
    Strategy,
    StrategyContext,
    StrategyOption,
)
from webcrawl.analysis.ordering.strategies.registry import register_strategy
from webcrawl.storage.errors import ConfigError

__all__ = ["HistoricalPageRank", "Omniscient", "history_scores"]

#: Damping factor of the previous crawl's PageRank.
HISTORY_ALPHA = 0.85


@register_strategy
class Omniscient(Strategy):
    """Priority = the URL's PageRank in the final graph (mean 1), known in advance.

    The crawl still discovers URLs by fetching pages, so the oracle orders the
    frontier, not the web: its capture lies below the ``ideal`` curve (the top pages
    taken in PageRank order whether discovered or not), and is the ceiling of what an
    importance estimate could give.  It needs :attr:`StrategyContext.final_scores`,
    which only a virtual crawl has.
    """

    name = "omniscient"
    needs: ClassVar[frozenset[str]] = frozenset({"final_scores"})

    def __init__(self, *, seed: int = 0, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(seed=seed, options=options)
        self._scores: np.ndarray | None = None

    def bind(self, context: StrategyContext) -> None:
        if context.final_scores is None:
            raise ConfigError("the omniscient ordering needs the final graph's PageRank: "
                              "it runs in virtual crawls only (webcrawl compare --virtual)")
        scores = np.asarray(context.final_scores, dtype=np.float64)
        total = scores.sum()
        self._scores = scores * (scores.size / total) if total > 0 else scores
        self.bound = True

    def discovered(self, url_id: int, depth: int) -> float:
        if self._scores is None:
            raise ConfigError("the omniscient ordering was not given the final PageRank")
        return float(self._scores[url_id]) if url_id < self._scores.size else 0.0


@register_strategy
class HistoricalPageRank(Strategy):
    """Priority = the URL's PageRank (mean 1) in a previous crawl (``history=DB``).

    The previous crawl's graph of fetched pages is loaded once and its PageRank
    computed (``alpha`` 0.85); each discovered URL is looked up by its normalised text
    (both crawls store normalised URLs).  A URL the previous crawl did not fetch gets
    ``prior`` (default ``1 - alpha`` = 0.15: the mean-1 PageRank of a page nobody
    links to, the lowest a known page can have), so known important pages go first and
    new ones follow in discovery order.  Needs each id's URL
    (:attr:`StrategyContext.url_of`).
    """

    name = "historical"
    OPTIONS: ClassVar[Mapping[str, StrategyOption]] = {
        "history": StrategyOption(str, "", "crawl database of the previous crawl"),
        "prior": StrategyOption(float, 1.0 - HISTORY_ALPHA,
                                "priority of a URL the previous crawl did not fetch"),
    }
    needs: ClassVar[frozenset[str]] = frozenset({"url"})

    def __init__(self, *, seed: int = 0, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(seed=seed, options=options)
        self._scores = history_scores(self.options["history"])
        self._url_of: Any = None

    @classmethod
    def from_scores(cls, scores: Mapping[str, float], *,
                    prior: float = 1.0 - HISTORY_ALPHA) -> HistoricalPageRank:
        """The ordering with the previous crawl's PageRank (mean 1, by URL) given
        directly: a simulated web's earlier snapshot, which has no database."""
        self = cls.__new__(cls)
        self.seed, self.bound = 0, False
        self.options = {"history": "", "prior": float(prior)}
        self._scores, self._url_of = dict(scores), None
        return self

    @classmethod
    def parse_options(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """The options; a missing or absent ``history`` database is a ConfigError."""
        options = super().parse_options(given)
        if not options["history"]:
            raise ConfigError("the historical ordering needs a previous crawl: "
                              "--history DB (or --strategy-opt history=DB)")
        from pathlib import Path

        if not Path(options["history"]).is_file():
            raise ConfigError(f"no previous crawl database at {options['history']}")
        return options

    def bind(self, context: StrategyContext) -> None:
        if context.url_of is None:
            raise ConfigError("the historical ordering needs the URLs of the crawl")
        self._url_of = context.url_of
        self.bound = True

    def discovered(self, url_id: int, depth: int) -> float:
        if self._url_of is None:
            raise ConfigError("the historical ordering was not given the crawl's URLs")
        return float(self._scores.get(self._url_of(url_id), self.options["prior"]))


def history_scores(db: str) -> dict[str, float]:
    """PageRank (mean 1) of every fetched page of the crawl database ``db``, by URL.

    Raises
    ------
    ConfigError
        ``db`` does not exist; StoreError if it is not a crawl database.
    """
    from pathlib import Path

    from webcrawl.analysis.graph.loader import load_graph
    from webcrawl.analysis.graph.pagerank_alg import pagerank

    path = Path(db)
    if not path.is_file():
        raise ConfigError(f"no previous crawl database at {db}")
    graph = load_graph(path, graph="pages")
    if graph.n == 0:
        return {}
    scores = np.asarray(pagerank(graph.adjacency, HISTORY_ALPHA, normalize="mean").scores)
    return dict(zip(graph.urls, scores.tolist(), strict=True))
