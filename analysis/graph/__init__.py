"""The captured web graph and its structure: loading, PageRank, HITS, bow-tie, components,
degree laws, small-world measures and bipartite cores.
"""

from __future__ import annotations

from webcrawl.analysis.graph.bowtie_alg import (
    BowTie,
    Region,
    bowtie,
)
from webcrawl.analysis.graph.captured import (
    ANSWERED,
    GRAPH_KINDS,
    CapturedGraph,
    GraphKind,
    check_graph_kind,
)
from webcrawl.analysis.graph.connectivity import (
    Components,
    components,
    reachable,
)
from webcrawl.analysis.graph.cores import (
    BipartiteCores,
    Core,
    CoreConfig,
    bipartite_cores,
    drop_same_host_links,
    eliminate,
    generation_filter,
)
from webcrawl.analysis.graph.degree_dist import (
    DegreeLaws,
    PowerLawFit,
    degree_distribution,
    degree_laws,
    degrees,
    fit_power_law,
)
from webcrawl.analysis.graph.hits_alg import (
    HitsResult,
    hits,
)
from webcrawl.analysis.graph.loader import (
    load_graph,
)
from webcrawl.analysis.graph.pagerank_alg import (
    PageRankResult,
    pagerank,
    transition_transpose,
)
from webcrawl.analysis.graph.smallworld_alg import (
    Clustering,
    PathLengths,
    SmallWorld,
    SmallWorldSeries,
    clustering,
    path_lengths,
    smallworld,
    smallworld_along_order,
    undirected_simple,
)

__all__ = [
    "ANSWERED",
    "GRAPH_KINDS",
    "BipartiteCores",
    "BowTie",
    "CapturedGraph",
    "Clustering",
    "Components",
    "Core",
    "CoreConfig",
    "DegreeLaws",
    "GraphKind",
    "HitsResult",
    "PageRankResult",
    "PathLengths",
    "PowerLawFit",
    "Region",
    "SmallWorld",
    "SmallWorldSeries",
    "bipartite_cores",
    "bowtie",
    "check_graph_kind",
    "clustering",
    "components",
    "degree_distribution",
    "degree_laws",
    "degrees",
    "drop_same_host_links",
    "eliminate",
    "fit_power_law",
    "generation_filter",
    "hits",
    "load_graph",
    "pagerank",
    "path_lengths",
    "reachable",
    "smallworld",
    "smallworld_along_order",
    "transition_transpose",
    "undirected_simple",
]
