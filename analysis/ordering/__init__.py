"""Crawl orderings and their quality: the strategies (shared by live and virtual crawls),
virtual crawls over a captured graph, quality over crawl time, comparisons of orderings and
the random-web-crawls model.

Compare orderings on a crawled graph without fetching again::

    from webcrawl.analysis.graph import load_graph
    from webcrawl.analysis.ordering import virtual_comparison

    comparison = virtual_comparison(load_graph("crawl.db"), ["bfs", "backlink", "opic"])

The strategy classes are in :mod:`webcrawl.analysis.ordering.strategies`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webcrawl.storage._facade import lazy_attributes

if TYPE_CHECKING:  # `X as X`: explicit re-exports for type checkers
    from webcrawl.analysis.ordering.along import ALONG_MEASURES as ALONG_MEASURES
    from webcrawl.analysis.ordering.along import AlongCrawl as AlongCrawl
    from webcrawl.analysis.ordering.along import measure_along as measure_along
    from webcrawl.analysis.ordering.compare import CompareSettings as CompareSettings
    from webcrawl.analysis.ordering.compare import Comparison as Comparison
    from webcrawl.analysis.ordering.compare import compare_crawl as compare_crawl
    from webcrawl.analysis.ordering.compare import compare_orders as compare_orders
    from webcrawl.analysis.ordering.compare import virtual_comparison as virtual_comparison
    from webcrawl.analysis.ordering.quality import QualityReport as QualityReport
    from webcrawl.analysis.ordering.quality import QualitySettings as QualitySettings
    from webcrawl.analysis.ordering.quality import crawl_quality as crawl_quality
    from webcrawl.analysis.ordering.randomweb import RandomWebCrawl as RandomWebCrawl
    from webcrawl.analysis.ordering.randomweb import random_web_crawl as random_web_crawl
    from webcrawl.analysis.ordering.reach import Reach as Reach
    from webcrawl.analysis.ordering.reach import reach_summary as reach_summary
    from webcrawl.analysis.ordering.strategies import PriorityUpdates as PriorityUpdates
    from webcrawl.analysis.ordering.strategies import Strategy as Strategy
    from webcrawl.analysis.ordering.strategies import available_strategies as available_strategies
    from webcrawl.analysis.ordering.strategies import get_strategy as get_strategy
    from webcrawl.analysis.ordering.strategies import register_strategy as register_strategy
    from webcrawl.analysis.ordering.virtual import VirtualCrawl as VirtualCrawl
    from webcrawl.analysis.ordering.virtual import replay as replay
    from webcrawl.analysis.ordering.virtual import virtual_crawl as virtual_crawl

#: The public API: name -> the module that defines it (imported on first use, so a crawl,
#: which needs only the strategies, loads neither scipy nor the graph analysis: 0.4 s of
#: CPU at every crawl's start, 2026-12-06)
_LAZY = {
    "ALONG_MEASURES": "webcrawl.analysis.ordering.along",
    "AlongCrawl": "webcrawl.analysis.ordering.along",
    "measure_along": "webcrawl.analysis.ordering.along",
    "CompareSettings": "webcrawl.analysis.ordering.compare",
    "Comparison": "webcrawl.analysis.ordering.compare",
    "compare_crawl": "webcrawl.analysis.ordering.compare",
    "compare_orders": "webcrawl.analysis.ordering.compare",
    "virtual_comparison": "webcrawl.analysis.ordering.compare",
    "QualityReport": "webcrawl.analysis.ordering.quality",
    "QualitySettings": "webcrawl.analysis.ordering.quality",
    "crawl_quality": "webcrawl.analysis.ordering.quality",
    "RandomWebCrawl": "webcrawl.analysis.ordering.randomweb",
    "random_web_crawl": "webcrawl.analysis.ordering.randomweb",
    "Reach": "webcrawl.analysis.ordering.reach",
    "reach_summary": "webcrawl.analysis.ordering.reach",
    "PriorityUpdates": "webcrawl.analysis.ordering.strategies",
    "Strategy": "webcrawl.analysis.ordering.strategies",
    "available_strategies": "webcrawl.analysis.ordering.strategies",
    "get_strategy": "webcrawl.analysis.ordering.strategies",
    "register_strategy": "webcrawl.analysis.ordering.strategies",
    "VirtualCrawl": "webcrawl.analysis.ordering.virtual",
    "replay": "webcrawl.analysis.ordering.virtual",
    "virtual_crawl": "webcrawl.analysis.ordering.virtual",
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
