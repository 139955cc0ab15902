"""Uniform page sampling by random walks, and the bias of a sample against the population.

``sample_pages(graph.adjacency, 1000, method="undirected")`` draws a sample (``METHODS`` lists
the walks of the papers); ``bias_report`` compares its degrees with the whole graph's.
"""

from __future__ import annotations

from webcrawl.analysis.sampling.bias import (
    BiasReport,
    DegreeBias,
    bias_report,
)
from webcrawl.analysis.sampling.sample import (
    PageSample,
)
from webcrawl.analysis.sampling.walk_length import (
    bias_by_walk_length,
)
from webcrawl.analysis.sampling.walks import (
    METHODS,
    SamplerConfig,
    sample_pages,
)

__all__ = [
    "METHODS",
    "BiasReport",
    "DegreeBias",
    "PageSample",
    "SamplerConfig",
    "bias_by_walk_length",
    "bias_report",
    "sample_pages",
]
