"""The captured web graph and its structure: loading, sites (mirror detection), PageRank,
HITS, bow-tie, components, degree laws, small-world measures and bipartite cores; the graph
handed to networkx or pandas (``to_networkx``, ``to_pandas``).

A three-page cycle: every page has the same PageRank, and all of it is one strongly connected
core.

>>> import scipy.sparse as sp
>>> from webcrawl.analysis.graph import bowtie, pagerank
>>> adjacency = sp.csr_array(([1.0, 1.0, 1.0], ([0, 1, 2], [1, 2, 0])), shape=(3, 3))
>>> [round(float(s), 3) for s in pagerank(adjacency).scores]
[0.333, 0.333, 0.333]
>>> bowtie(adjacency).fractions["SCC"]
1.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webcrawl.storage._facade import lazy_attributes

if TYPE_CHECKING:  # `X as X`: explicit re-exports for type checkers
    from webcrawl.analysis.graph.bowtie_alg import BowTie as BowTie
    from webcrawl.analysis.graph.bowtie_alg import Region as Region
    from webcrawl.analysis.graph.bowtie_alg import bowtie as bowtie
    from webcrawl.analysis.graph.captured import GRAPH_KINDS as GRAPH_KINDS
    from webcrawl.analysis.graph.captured import CapturedGraph as CapturedGraph
    from webcrawl.analysis.graph.captured import GraphKind as GraphKind
    from webcrawl.analysis.graph.connectivity import Components as Components
    from webcrawl.analysis.graph.connectivity import components as components
    from webcrawl.analysis.graph.connectivity import reachable as reachable
    from webcrawl.analysis.graph.cores import BipartiteCores as BipartiteCores
    from webcrawl.analysis.graph.cores import Core as Core
    from webcrawl.analysis.graph.cores import CoreConfig as CoreConfig
    from webcrawl.analysis.graph.cores import bipartite_cores as bipartite_cores
    from webcrawl.analysis.graph.degree_dist import DegreeLaws as DegreeLaws
    from webcrawl.analysis.graph.degree_dist import PowerLawFit as PowerLawFit
    from webcrawl.analysis.graph.degree_dist import degree_distribution as degree_distribution
    from webcrawl.analysis.graph.degree_dist import degree_laws as degree_laws
    from webcrawl.analysis.graph.degree_dist import degrees as degrees
    from webcrawl.analysis.graph.degree_dist import fit_power_law as fit_power_law
    from webcrawl.analysis.graph.handoff import GraphFrames as GraphFrames
    from webcrawl.analysis.graph.handoff import to_networkx as to_networkx
    from webcrawl.analysis.graph.handoff import to_pandas as to_pandas
    from webcrawl.analysis.graph.hits_alg import HitsResult as HitsResult
    from webcrawl.analysis.graph.hits_alg import hits as hits
    from webcrawl.analysis.graph.loader import load_graph as load_graph
    from webcrawl.analysis.graph.pagerank_alg import PageRankResult as PageRankResult
    from webcrawl.analysis.graph.pagerank_alg import pagerank as pagerank
    from webcrawl.analysis.graph.sites import Mirror as Mirror
    from webcrawl.analysis.graph.sites import SiteMap as SiteMap
    from webcrawl.analysis.graph.sites import detect_sites as detect_sites
    from webcrawl.analysis.graph.smallworld_alg import Clustering as Clustering
    from webcrawl.analysis.graph.smallworld_alg import PathLengths as PathLengths
    from webcrawl.analysis.graph.smallworld_alg import SmallWorld as SmallWorld
    from webcrawl.analysis.graph.smallworld_alg import SmallWorldSeries as SmallWorldSeries
    from webcrawl.analysis.graph.smallworld_alg import clustering as clustering
    from webcrawl.analysis.graph.smallworld_alg import path_lengths as path_lengths
    from webcrawl.analysis.graph.smallworld_alg import smallworld as smallworld
    from webcrawl.analysis.graph.smallworld_alg import (
        smallworld_along_order as smallworld_along_order,
    )

#: The public API: name -> the module that defines it (imported on first use, so that
#: ``load_graph`` alone, as ``webcrawl export edges`` uses it, loads neither scipy's csgraph
#: and special functions nor the algorithms: 0.3 CPU-s of every such process, 2026-12-06)
_LAZY = {
    "BowTie": "webcrawl.analysis.graph.bowtie_alg",
    "Region": "webcrawl.analysis.graph.bowtie_alg",
    "bowtie": "webcrawl.analysis.graph.bowtie_alg",
    "GRAPH_KINDS": "webcrawl.analysis.graph.captured",
    "CapturedGraph": "webcrawl.analysis.graph.captured",
    "GraphKind": "webcrawl.analysis.graph.captured",
    "Components": "webcrawl.analysis.graph.connectivity",
    "components": "webcrawl.analysis.graph.connectivity",
    "reachable": "webcrawl.analysis.graph.connectivity",
    "BipartiteCores": "webcrawl.analysis.graph.cores",
    "Core": "webcrawl.analysis.graph.cores",
    "CoreConfig": "webcrawl.analysis.graph.cores",
    "bipartite_cores": "webcrawl.analysis.graph.cores",
    "DegreeLaws": "webcrawl.analysis.graph.degree_dist",
    "PowerLawFit": "webcrawl.analysis.graph.degree_dist",
    "degree_distribution": "webcrawl.analysis.graph.degree_dist",
    "degree_laws": "webcrawl.analysis.graph.degree_dist",
    "degrees": "webcrawl.analysis.graph.degree_dist",
    "fit_power_law": "webcrawl.analysis.graph.degree_dist",
    "GraphFrames": "webcrawl.analysis.graph.handoff",
    "to_networkx": "webcrawl.analysis.graph.handoff",
    "to_pandas": "webcrawl.analysis.graph.handoff",
    "HitsResult": "webcrawl.analysis.graph.hits_alg",
    "hits": "webcrawl.analysis.graph.hits_alg",
    "load_graph": "webcrawl.analysis.graph.loader",
    "PageRankResult": "webcrawl.analysis.graph.pagerank_alg",
    "pagerank": "webcrawl.analysis.graph.pagerank_alg",
    "Mirror": "webcrawl.analysis.graph.sites",
    "SiteMap": "webcrawl.analysis.graph.sites",
    "detect_sites": "webcrawl.analysis.graph.sites",
    "Clustering": "webcrawl.analysis.graph.smallworld_alg",
    "PathLengths": "webcrawl.analysis.graph.smallworld_alg",
    "SmallWorld": "webcrawl.analysis.graph.smallworld_alg",
    "SmallWorldSeries": "webcrawl.analysis.graph.smallworld_alg",
    "clustering": "webcrawl.analysis.graph.smallworld_alg",
    "path_lengths": "webcrawl.analysis.graph.smallworld_alg",
    "smallworld": "webcrawl.analysis.graph.smallworld_alg",
    "smallworld_along_order": "webcrawl.analysis.graph.smallworld_alg",
}

__all__ = [
    "GRAPH_KINDS",
    "BipartiteCores",
    "BowTie",
    "CapturedGraph",
    "Clustering",
    "Components",
    "Core",
    "CoreConfig",
    "DegreeLaws",
    "GraphFrames",
    "GraphKind",
    "HitsResult",
    "Mirror",
    "PageRankResult",
    "PathLengths",
    "PowerLawFit",
    "Region",
    "SiteMap",
    "SmallWorld",
    "SmallWorldSeries",
    "bipartite_cores",
    "bowtie",
    "clustering",
    "components",
    "degree_distribution",
    "degree_laws",
    "degrees",
    "detect_sites",
    "fit_power_law",
    "hits",
    "load_graph",
    "pagerank",
    "path_lengths",
    "reachable",
    "smallworld",
    "smallworld_along_order",
    "to_networkx",
    "to_pandas",
]
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
