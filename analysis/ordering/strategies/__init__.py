"""Crawl orderings (the front side of the frontier), shared by live and virtual crawls.

See :mod:`webcrawl.analysis.ordering.strategies.base` for the interface and
:mod:`webcrawl.analysis.ordering.strategies.registry` for adding your own
(``@register_strategy``).  Importing this package registers the built-in strategies.
"""

from __future__ import annotations

from webcrawl.analysis.ordering.strategies.backlink import (
    BacklinkCount,
)
from webcrawl.analysis.ordering.strategies.base import (
    HostOrder,
    PriorityUpdates,
    Strategy,
    StrategyContext,
    StrategyOption,
)
from webcrawl.analysis.ordering.strategies.bfs import (
    BreadthFirst,
)
from webcrawl.analysis.ordering.strategies.dfs import (
    DepthFirst,
)
from webcrawl.analysis.ordering.strategies.larger_sites import (
    LargerSitesFirst,
)
from webcrawl.analysis.ordering.strategies.opic import (
    OnlinePageImportance,
)
from webcrawl.analysis.ordering.strategies.oracles import (
    HistoricalPageRank,
    Omniscient,
    history_scores,
)
from webcrawl.analysis.ordering.strategies.pagerank import (
    BatchPageRank,
    PageRankOrder,
    PageRankOrderSettings,
    PageRankSnapshot,
    PartialPageRank,
)
from webcrawl.analysis.ordering.strategies.random_order import (
    RandomOrder,
)
from webcrawl.analysis.ordering.strategies.registry import (
    available_strategies,
    get_strategy,
    parse_spec,
    register_strategy,
    strategy_spec,
)

__all__ = [
    "BacklinkCount",
    "BatchPageRank",
    "BreadthFirst",
    "DepthFirst",
    "HistoricalPageRank",
    "HostOrder",
    "LargerSitesFirst",
    "Omniscient",
    "OnlinePageImportance",
    "PageRankOrder",
    "PageRankOrderSettings",
    "PageRankSnapshot",
    "PartialPageRank",
    "PriorityUpdates",
    "RandomOrder",
    "Strategy",
    "StrategyContext",
    "StrategyOption",
    "available_strategies",
    "get_strategy",
    "history_scores",
    "parse_spec",
    "register_strategy",
    "strategy_spec",
]
