"""Uniform page sampling by random walks, and the bias of a sample against the population.
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
    directed_jump_sample,
    directed_sample,
    pagerank_sample,
    plain_walk_sample,
    regular_sample,
    sample_pages,
    undirected_sample,
)

__all__ = [
    "METHODS",
    "BiasReport",
    "DegreeBias",
    "PageSample",
    "SamplerConfig",
    "bias_by_walk_length",
    "bias_report",
    "directed_jump_sample",
    "directed_sample",
    "pagerank_sample",
    "plain_walk_sample",
    "regular_sample",
    "sample_pages",
    "undirected_sample",
]
