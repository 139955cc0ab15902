"""Offline analysis of a captured web graph: the measurements of the classic papers.

Functions take a scipy CSR adjacency (or a :class:`~analysis.graph.CapturedGraph`) and
return numpy arrays indexed by node; URLs are attached at the edge (CLI, reports).

Note: the package re-exports functions under their module's name (``pagerank``,
``hits``, ``bowtie``), so ``analysis.pagerank`` is the function; import the module with
``importlib.import_module("analysis.pagerank")`` or ``from analysis import pagerank``.
"""

from __future__ import annotations

from analysis.bowtie import BowTie, Region, bowtie
from analysis.compare import CompareSettings, Comparison, compare_crawl, compare_orders
from analysis.components import Components, components, reachable
from analysis.cores import BipartiteCores, CoreConfig, bipartite_cores
from analysis.degrees import (
    DegreeLaws,
    PowerLawFit,
    degree_distribution,
    degree_laws,
    degrees,
    fit_power_law,
)
from analysis.graph import CapturedGraph
from analysis.hits import HitsResult, hits
from analysis.pagerank import PageRankResult, pagerank, transition_transpose
from analysis.quality import QualityReport, QualitySettings, crawl_quality
from analysis.revisit_eval import (
    RevisitEvaluation,
    SimClock,
    estimated_revisit_freshness,
    evaluate_revisit,
)
from analysis.sampling import BiasReport, PageSample, SamplerConfig, bias_report, sample_pages
from analysis.smallworld import SmallWorld, clustering, path_lengths, smallworld_along_order

# Public names, one per line; add yours in a block of your own.
__all__ = [
    "BiasReport",
    "BipartiteCores",
    "BowTie",
    "CapturedGraph",
    "CompareSettings",
    "Comparison",
    "Components",
    "CoreConfig",
    "DegreeLaws",
    "HitsResult",
    "PageRankResult",
    "PageSample",
    "PowerLawFit",
    "QualityReport",
    "QualitySettings",
    "Region",
    "RevisitEvaluation",
    "SamplerConfig",
    "SimClock",
    "SmallWorld",
    "bias_report",
    "bipartite_cores",
    "bowtie",
    "clustering",
    "compare_crawl",
    "compare_orders",
    "components",
    "crawl_quality",
    "degree_distribution",
    "degree_laws",
    "degrees",
    "estimated_revisit_freshness",
    "evaluate_revisit",
    "fit_power_law",
    "hits",
    "pagerank",
    "path_lengths",
    "reachable",
    "sample_pages",
    "smallworld_along_order",
    "transition_transpose",
]
