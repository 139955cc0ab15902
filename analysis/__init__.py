"""Offline analysis of a captured web graph: the measurements of the classic papers.

The captured graph, PageRank and the bow-tie; per-page change rates of a revisited crawl::

    from webcrawl.analysis import bowtie, estimate_rates, load_graph, load_visit_log, pagerank

    graph = load_graph("crawl.db")
    scores = pagerank(graph.adjacency).scores
    print(bowtie(graph.adjacency).fractions)
    rates = estimate_rates(load_visit_log("crawl.db").history())

Functions take a scipy CSR adjacency (or a :class:`~webcrawl.analysis.graph.CapturedGraph`)
and return numpy arrays indexed by node; URLs are attached at the edge (CLI, reports).

The public API is the table below, the main call of each command; each name loads its topic
on first use.  Each topic is a subpackage whose ``__init__`` lists its own public API (result
types, the paper's individual estimators and figures): :mod:`webcrawl.analysis.graph`,
:mod:`webcrawl.analysis.ordering` (and its ``strategies``), :mod:`webcrawl.analysis.sampling`,
:mod:`webcrawl.analysis.change`, :mod:`webcrawl.analysis.report`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webcrawl.storage._facade import lazy_attributes
from webcrawl.storage._version import __version__ as __version__

if TYPE_CHECKING:  # `X as X`: explicit re-exports for type checkers
    from webcrawl.analysis.change import change_report as change_report
    from webcrawl.analysis.change import estimate_rates as estimate_rates
    from webcrawl.analysis.change import evaluate_revisit as evaluate_revisit
    from webcrawl.analysis.change import export_rates as export_rates
    from webcrawl.analysis.change import load_visit_log as load_visit_log
    from webcrawl.analysis.change import page_rates as page_rates
    from webcrawl.analysis.graph import CapturedGraph as CapturedGraph
    from webcrawl.analysis.graph import bipartite_cores as bipartite_cores
    from webcrawl.analysis.graph import bowtie as bowtie
    from webcrawl.analysis.graph import components as components
    from webcrawl.analysis.graph import degree_laws as degree_laws
    from webcrawl.analysis.graph import hits as hits
    from webcrawl.analysis.graph import load_graph as load_graph
    from webcrawl.analysis.graph import pagerank as pagerank
    from webcrawl.analysis.graph import smallworld as smallworld
    from webcrawl.analysis.graph import to_networkx as to_networkx
    from webcrawl.analysis.graph import to_pandas as to_pandas
    from webcrawl.analysis.ordering import CompareSettings as CompareSettings
    from webcrawl.analysis.ordering import QualitySettings as QualitySettings
    from webcrawl.analysis.ordering import Strategy as Strategy
    from webcrawl.analysis.ordering import available_strategies as available_strategies
    from webcrawl.analysis.ordering import compare_crawl as compare_crawl
    from webcrawl.analysis.ordering import crawl_quality as crawl_quality
    from webcrawl.analysis.ordering import random_web_crawl as random_web_crawl
    from webcrawl.analysis.ordering import register_strategy as register_strategy
    from webcrawl.analysis.ordering import virtual_crawl as virtual_crawl
    from webcrawl.analysis.report import ReportSettings as ReportSettings
    from webcrawl.analysis.report import build_report as build_report
    from webcrawl.analysis.sampling import SamplerConfig as SamplerConfig
    from webcrawl.analysis.sampling import bias_report as bias_report
    from webcrawl.analysis.sampling import sample_pages as sample_pages

#: The public API: name -> the topic subpackage that exports it (imported on first use).
_LAZY = {
    # graph: the captured graph and its structure (analyze pagerank, bowtie, cores, ...)
    "load_graph": "webcrawl.analysis.graph",
    "CapturedGraph": "webcrawl.analysis.graph",  # what load_graph() returns
    "pagerank": "webcrawl.analysis.graph",
    "hits": "webcrawl.analysis.graph",
    "bowtie": "webcrawl.analysis.graph",
    "components": "webcrawl.analysis.graph",
    "degree_laws": "webcrawl.analysis.graph",
    "smallworld": "webcrawl.analysis.graph",
    "bipartite_cores": "webcrawl.analysis.graph",
    "to_networkx": "webcrawl.analysis.graph",  # the graph handed to networkx...
    "to_pandas": "webcrawl.analysis.graph",  # ...or to pandas (nodes and links)
    # ordering: crawl orderings and their quality (analyze quality, compare, simulate)
    "Strategy": "webcrawl.analysis.ordering",  # write your own ordering...
    "register_strategy": "webcrawl.analysis.ordering",  # ...and make it --strategy NAME
    "available_strategies": "webcrawl.analysis.ordering",
    "virtual_crawl": "webcrawl.analysis.ordering",
    "crawl_quality": "webcrawl.analysis.ordering",
    "QualitySettings": "webcrawl.analysis.ordering",
    "compare_crawl": "webcrawl.analysis.ordering",
    "CompareSettings": "webcrawl.analysis.ordering",
    "random_web_crawl": "webcrawl.analysis.ordering",
    # sampling: uniform page samples by random walks (analyze sample)
    "sample_pages": "webcrawl.analysis.sampling",
    "SamplerConfig": "webcrawl.analysis.sampling",
    "bias_report": "webcrawl.analysis.sampling",
    # change: page change over time (analyze changes, export rates)
    "load_visit_log": "webcrawl.analysis.change",
    "estimate_rates": "webcrawl.analysis.change",
    "change_report": "webcrawl.analysis.change",
    "page_rates": "webcrawl.analysis.change",
    "export_rates": "webcrawl.analysis.change",
    "evaluate_revisit": "webcrawl.analysis.change",
    # report: the HTML report (report), the only user of matplotlib
    "build_report": "webcrawl.analysis.report",
    "ReportSettings": "webcrawl.analysis.report",
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
