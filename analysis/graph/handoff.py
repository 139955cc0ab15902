"""A crawl's graph handed to networkx and pandas, in one call each.

:func:`to_networkx` gives a ``networkx.DiGraph`` keyed by URL; :func:`to_pandas` gives
two DataFrames, one row per node and one per link (:class:`GraphFrames`).  Both take a
:class:`~webcrawl.analysis.graph.CapturedGraph` or the path of a crawl database, which
they load with :func:`~webcrawl.analysis.graph.load_graph` (the ``pages`` graph unless
``graph="all"``), and describe every node the same way:

``url``
    The normalised URL (the networkx node key).
``host``
    Its host key (``host[:port]``).
``crawled``
    True for a fetched page (its out-links are known), False for a URL only discovered.
``outcome``
    What the crawl recorded for it (``fetched``, ``redirect``, ``http_error``, ...;
    ``frontier``: nothing yet).
``fetch_rank``
    Its place in the crawl's fetch order (0 first; ``-1`` in networkx and ``<NA>`` in
    pandas for a URL never fetched).

A link is ``source -> target`` with ``weight``, the number of links between the two pages
(1 when the graph collapsed repeated links, the default).  The hand-off is a copy: the
graph's arrays are the fast path (every measurement of this package runs on them);
networkx holds a Python object per node and link, about a kilobyte per link, so hand it
graphs of up to a few million links.

networkx and pandas are optional: each is imported by the function that needs it, and a
missing one is a :class:`~webcrawl.storage.errors.ConfigError` that says what to install.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from webcrawl.analysis.graph.captured import CapturedGraph, GraphKind
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.reader import OUTCOMES

if TYPE_CHECKING:
    import networkx as nx
    import pandas as pd

__all__ = ["GraphFrames", "to_networkx", "to_pandas"]

#: The outcome names, by outcome code + 1 (code -1, no outcome yet, is ``frontier``).
_OUTCOME_NAMES = ("frontier", *(o.value for o in OUTCOMES))


class GraphFrames(NamedTuple):
    """The two tables of :func:`to_pandas`: ``nodes`` (one row per node, indexed by node
    number) and ``links`` (``source``, ``target`` node numbers and ``weight``)."""

    nodes: pd.DataFrame
    links: pd.DataFrame


def _graph_of(source: CapturedGraph | str | os.PathLike[str],
              graph: GraphKind | None) -> CapturedGraph:
    if isinstance(source, CapturedGraph):
        if graph is not None and graph != source.kind:
            raise ConfigError(f"this is the {source.kind!r} graph, not {graph!r}: load the "
                              f"other one with load_graph(db, graph={graph!r})")
        return source
    from webcrawl.analysis.graph.loader import load_graph

    return load_graph(os.fspath(source), graph=graph or "pages")


def _import(name: str, caller: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise ConfigError(f"{caller}() needs {name}, which is not installed: "
                          f"pip install {name}") from None


def _node_columns(g: CapturedGraph) -> dict[str, np.ndarray]:
    """The node attributes as arrays (module docstring), in node order."""
    rank = np.full(g.n, -1, dtype=np.int64)
    rank[np.asarray(g.fetch_order, dtype=np.int64)] = np.arange(len(g.fetch_order))
    outcome_codes = np.asarray(g.outcomes, dtype=np.int64) + 1
    return {"url": np.asarray(g.urls, dtype=object),
            "host": np.asarray(g.host_names, dtype=object)[np.asarray(g.hosts, np.int64)],
            "crawled": np.asarray(g.crawled, dtype=bool),
            "outcome": np.asarray(_OUTCOME_NAMES, dtype=object)[outcome_codes],
            "fetch_rank": rank}


def _links(g: CapturedGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``source``, ``target`` and ``weight`` of every stored link, by source node."""
    coo = g.adjacency.tocoo()
    return (np.asarray(coo.row, dtype=np.int64), np.asarray(coo.col, dtype=np.int64),
            np.asarray(coo.data, dtype=np.float64))


def to_networkx(source: CapturedGraph | str | os.PathLike[str], *,
                graph: GraphKind | None = None) -> nx.DiGraph:
    """The captured graph as a ``networkx.DiGraph`` whose nodes are URLs.

    Parameters
    ----------
    source : CapturedGraph, str or path
        A graph, or the crawl database to load it from.
    graph : {"pages", "all"}, optional
        Which graph to load from a database (default ``pages``: the fetched pages and the
        links among them; ``all``: every discovered URL); for a ``CapturedGraph``, only
        its own kind.

    Returns
    -------
    networkx.DiGraph
        One node per URL with the attributes ``host``, ``crawled``, ``outcome`` and
        ``fetch_rank`` (module docstring); one edge per stored link with its ``weight``.
        ``G.graph`` holds the graph's name and counts (:meth:`CapturedGraph.info`).

    Raises
    ------
    ConfigError
        networkx is not installed, or ``graph`` names another kind than a given graph's.

    See Also
    --------
    to_pandas : the same nodes and links as two DataFrames.

    Notes
    -----
    Node attributes come from the graph's arrays in one vectorised pass; building the
    networkx graph itself costs networkx's own per-node and per-link objects.

    Examples
    --------
    Three pages in a cycle; networkx's PageRank gives each a third, as
    :func:`~webcrawl.analysis.graph.pagerank` does:

    >>> from webcrawl.analysis.graph import CapturedGraph, to_networkx
    >>> g = CapturedGraph.from_edges([0, 1, 2], [1, 2, 0],
    ...                              urls=["http://a.test/", "http://a.test/b", "http://c.test/"])
    >>> G = to_networkx(g)
    >>> sorted(G.successors("http://a.test/b"))
    ['http://c.test/']
    >>> G.nodes["http://a.test/"]["fetch_rank"], G.nodes["http://a.test/"]["outcome"]
    (0, 'fetched')
    >>> import networkx as nx
    >>> [round(r, 3) for r in nx.pagerank(G).values()]
    [0.333, 0.333, 0.333]
    """
    nx_module = _import("networkx", "to_networkx")
    g = _graph_of(source, graph)
    columns = _node_columns(g)
    urls = columns.pop("url")
    result = nx_module.DiGraph(**g.info())
    names = list(columns)
    rows = zip(*(columns[name].tolist() for name in names), strict=True)
    result.add_nodes_from((url, dict(zip(names, row, strict=True)))
                          for url, row in zip(urls.tolist(), rows, strict=True))
    if result.number_of_nodes() != g.n:
        raise ConfigError("the graph names one URL for two nodes: use to_pandas(), whose "
                          "nodes are numbered")
    src, dst, weight = _links(g)
    result.add_weighted_edges_from(zip(urls[src].tolist(), urls[dst].tolist(),
                                       weight.tolist(), strict=True))
    return result


def to_pandas(source: CapturedGraph | str | os.PathLike[str], *,
              graph: GraphKind | None = None) -> GraphFrames:
    """The captured graph as two pandas DataFrames: its nodes and its links.

    Parameters
    ----------
    source : CapturedGraph, str or path
        A graph, or the crawl database to load it from.
    graph : {"pages", "all"}, optional
        Which graph to load from a database (default ``pages``); for a
        ``CapturedGraph``, only its own kind.

    Returns
    -------
    GraphFrames
        ``nodes``: one row per node, indexed by node number (``node``), with the columns
        ``url``, ``host`` and ``outcome`` (both categorical), ``crawled`` and
        ``fetch_rank`` (nullable integers, ``<NA>`` for a URL never fetched);
        ``links``: ``source`` and ``target`` (node numbers, so ``links.join(nodes,
        on="target")`` gives the target's columns) and ``weight``, sorted by source.
        ``nodes.attrs["graph"]`` holds the graph's name and counts.

    Raises
    ------
    ConfigError
        pandas is not installed, or ``graph`` names another kind than a given graph's.

    See Also
    --------
    to_networkx : the same graph for networkx.

    Examples
    --------
    >>> from webcrawl.analysis.graph import CapturedGraph, to_pandas
    >>> g = CapturedGraph.from_edges([0, 0, 1], [1, 2, 2], crawled=[True, True, False],
    ...                              fetch_order=[0, 1], urls=["http://a.test/", "http://a.test/b", "http://c.test/"])
    >>> nodes, links = to_pandas(g)
    >>> nodes[["url", "crawled", "fetch_rank"]]
                      url  crawled  fetch_rank
    node
    0      http://a.test/     True           0
    1     http://a.test/b     True           1
    2      http://c.test/    False        <NA>
    >>> links.join(nodes["url"], on="target").groupby("url").size().to_dict()
    {'http://a.test/b': 1, 'http://c.test/': 2}
    """
    pd_module = _import("pandas", "to_pandas")
    g = _graph_of(source, graph)
    columns = _node_columns(g)
    rank = columns["fetch_rank"]
    nodes = pd_module.DataFrame({
        "url": columns["url"],
        "host": pd_module.Categorical.from_codes(np.asarray(g.hosts, np.int64),
                                                 categories=list(g.host_names)),
        "crawled": columns["crawled"],
        "outcome": pd_module.Categorical.from_codes(np.asarray(g.outcomes, np.int64) + 1,
                                                    categories=list(_OUTCOME_NAMES)),
        "fetch_rank": pd_module.arrays.IntegerArray(rank, rank < 0),
    }, index=pd_module.RangeIndex(g.n, name="node"))
    nodes.attrs["graph"] = g.info()
    src, dst, weight = _links(g)
    links = pd_module.DataFrame({"source": src, "target": dst, "weight": weight})
    return GraphFrames(nodes, links)
