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

from webcrawl.analysis.graph.bowtie_alg import (
    BowTie,
    Region,
    bowtie,
)
from webcrawl.analysis.graph.captured import (
    GRAPH_KINDS,
    CapturedGraph,
    GraphKind,
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
)
from webcrawl.analysis.graph.degree_dist import (
    DegreeLaws,
    PowerLawFit,
    degree_distribution,
    degree_laws,
    degrees,
    fit_power_law,
)
from webcrawl.analysis.graph.handoff import (
    GraphFrames,
    to_networkx,
    to_pandas,
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
)
from webcrawl.analysis.graph.sites import (
    Mirror,
    SiteMap,
    detect_sites,
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
)

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
