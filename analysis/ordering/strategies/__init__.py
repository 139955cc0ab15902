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
    PriorityUpdates,
    Strategy,
)
from webcrawl.analysis.ordering.strategies.bfs import (
    BreadthFirst,
)
from webcrawl.analysis.ordering.strategies.dfs import (
    DepthFirst,
)
from webcrawl.analysis.ordering.strategies.opic import (
    OnlinePageImportance,
)
from webcrawl.analysis.ordering.strategies.pagerank import (
    PageRankOrder,
    PageRankOrderSettings,
)
from webcrawl.analysis.ordering.strategies.random_order import (
    RandomOrder,
)
from webcrawl.analysis.ordering.strategies.registry import (
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
    "PriorityUpdates",
    "RandomOrder",
    "Strategy",
    "available_strategies",
    "get_strategy",
    "register_strategy",
]
