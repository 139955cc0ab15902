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

from webcrawl.analysis.ordering.along import (
    ALONG_MEASURES,
    AlongCrawl,
    measure_along,
)
from webcrawl.analysis.ordering.compare import (
    CompareSettings,
    Comparison,
    compare_crawl,
    compare_orders,
    virtual_comparison,
)
from webcrawl.analysis.ordering.quality import (
    QualityReport,
    QualitySettings,
    crawl_quality,
)
from webcrawl.analysis.ordering.randomweb import (
    RandomWebCrawl,
    random_web_crawl,
)
from webcrawl.analysis.ordering.reach import (
    Reach,
    reach_summary,
)
from webcrawl.analysis.ordering.strategies import (
    PriorityUpdates,
    Strategy,
    available_strategies,
    get_strategy,
    register_strategy,
)
from webcrawl.analysis.ordering.virtual import (
    VirtualCrawl,
    replay,
    virtual_crawl,
)

__all__ = [
    "ALONG_MEASURES",
    "AlongCrawl",
    "CompareSettings",
    "Comparison",
    "PriorityUpdates",
    "QualityReport",
    "QualitySettings",
    "RandomWebCrawl",
    "Reach",
    "Strategy",
    "VirtualCrawl",
    "available_strategies",
    "compare_crawl",
    "compare_orders",
    "crawl_quality",
    "get_strategy",
    "measure_along",
    "random_web_crawl",
    "reach_summary",
    "register_strategy",
    "replay",
    "virtual_comparison",
    "virtual_crawl",
]
