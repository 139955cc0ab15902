"""Crawl orderings (the front side of the frontier), shared by live and virtual crawls.

See :mod:`analysis.ordering.strategies.base` for the interface.  Importing this package
registers the built-in strategies.
"""

from __future__ import annotations

from analysis.ordering.strategies.backlink import (
    BacklinkCount,
)
from analysis.ordering.strategies.base import (
    PriorityUpdates,
    Strategy,
)
from analysis.ordering.strategies.bfs import (
    BreadthFirst,
)
from analysis.ordering.strategies.dfs import (
    DepthFirst,
)
from analysis.ordering.strategies.opic import (
    OnlinePageImportance,
)
from analysis.ordering.strategies.pagerank import (
    PageRankOrder,
    PageRankOrderSettings,
    PageRankSnapshot,
)
from analysis.ordering.strategies.random_order import (
    RandomOrder,
)
from analysis.ordering.strategies.registry import (
    available_strategies,
    get_strategy,
    register_strategy,
)

__all__ = [
    "BacklinkCount",
    "BreadthFirst",
    "DepthFirst",
    "OnlinePageImportance",
    "PageRankOrder",
    "PageRankOrderSettings",
    "PageRankSnapshot",
    "PriorityUpdates",
    "RandomOrder",
    "Strategy",
    "available_strategies",
    "get_strategy",
    "register_strategy",
]
