"""Crawl orderings (the front side of the frontier). See :mod:`crawler.strategies.base`.

Importing this package registers the built-in strategies.
"""

from __future__ import annotations

from crawler.strategies import bfs as _bfs  # noqa: F401  (registers built-ins)
from crawler.strategies.backlink import BacklinkCount
from crawler.strategies.base import PriorityUpdates, Strategy
from crawler.strategies.bfs import BreadthFirst
from crawler.strategies.dfs import DepthFirst
from crawler.strategies.opic import OnlinePageImportance
from crawler.strategies.pagerank import PageRankOrder, PageRankOrderSettings
from crawler.strategies.random_order import RandomOrder
from crawler.strategies.registry import available_strategies, get_strategy, register_strategy

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
