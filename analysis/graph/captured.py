"""The captured link graph: what every analysis function works on.

A :class:`CapturedGraph` is a scipy CSR adjacency over node indices ``0..n-1`` plus the
arrays that map nodes back to the crawl (URL, host, crawled or frontier, fetch order).
Analysis functions take the CSR (``graph.adjacency``) or the whole object and return
numpy arrays indexed by node; URLs are attached only at the edge (CLI, reports).

``load_graph`` (in :mod:`webcrawl.analysis.graph.loader`) builds one from a crawl database;
:meth:`CapturedGraph.from_edges` builds one from arrays, for tests and generated graphs.

Which graph
-----------
Every measurement runs on one of two named graphs (:data:`GRAPH_KINDS`), chosen with
``load_graph(..., graph=...)`` in the library and ``--graph`` on every command:

``pages`` (the default)
    The fetched pages (outcome ``fetched``: HTML pages whose out-links are known) and
    the links among them; a link to a URL that redirected counts as a link to the page
    its recorded redirects end at.  What a crawl *captured*.
``all``
    Every URL the crawl discovered (the pages, plus the frontier, off-site and
    robots-excluded URLs, errors, redirects, non-HTML files) and every stored link.

:meth:`CapturedGraph.describe` names the graph with its node and link counts; every
output (table title, JSON ``graph`` object, report section) carries it.

Fetchable nodes
---------------
``fetchable`` marks the nodes a virtual crawl may fetch: exactly those the recorded
crawl got an HTTP answer for (:data:`ANSWERED`: pages, non-HTML files, redirects,
HTTP errors, bodies over the size cap), plus, in a graph without fetch outcomes (an
imported edge list), every node with known out-links.  Out-of-scope,
robots-excluded, never-reached URLs and URLs that got no answer (network errors,
timeouts) can be discovered but never fetched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis.graph.sites import Mirror
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.reader import OUTCOMES, outcome_code
from webcrawl.storage.records import Outcome

__all__ = ["ANSWERED", "DUPLICATE_POLICIES", "GRAPH_KINDS", "CapturedGraph", "DuplicatePolicy",
           "GraphKind", "check_duplicates", "check_graph_kind"]

#: The named graphs every measurement runs on (see the module docstring).
GraphKind = Literal["pages", "all"]
GRAPH_KINDS: tuple[GraphKind, ...] = ("pages", "all")

#: What a graph does with duplicate pages (a body repeating an earlier page's, see
#: ``urls.duplicate_of`` in ``storage/schema.sql``): ``collapse`` them into the first
#: page with that body (the default); ``near``, also collapse every near copy (a text
#: resembling a group leader's, ``urls.near_of``) into its leader; or ``keep`` every
#: copy as its own node.
DuplicatePolicy = Literal["collapse", "near", "keep"]
DUPLICATE_POLICIES: tuple[DuplicatePolicy, ...] = ("collapse", "near", "keep")

#: Outcomes that mean the recorded crawl got an HTTP answer for the URL: the URLs a
#: virtual crawl over the database may fetch.
ANSWERED: frozenset[Outcome] = frozenset({
    Outcome.FETCHED, Outcome.NOT_HTML, Outcome.REDIRECT, Outcome.NOT_MODIFIED,
    Outcome.HTTP_ERROR, Outcome.TOO_LARGE})

_FETCHED_CODE = outcome_code(Outcome.FETCHED)


def check_graph_kind(kind: str) -> GraphKind:
    """Return ``kind`` if it names a graph (:data:`GRAPH_KINDS`), else a ConfigError."""
    if kind not in GRAPH_KINDS:
        raise ConfigError(f"unknown graph {kind!r}: choose 'pages' (fetched pages and the "
                          "links among them) or 'all' (also every discovered URL)")
    return kind


def check_duplicates(policy: str) -> DuplicatePolicy:
    """Return ``policy`` if it is one of :data:`DUPLICATE_POLICIES`, else a ConfigError."""
    if policy not in DUPLICATE_POLICIES:
        raise ConfigError(f"unknown duplicates policy {policy!r}: choose 'collapse' (a page "
                          "whose body repeats an earlier page's is that page), 'near' (so "
                          "is a near copy of a page's text) or 'keep'")
    return policy


@dataclass(frozen=True, eq=False)
class CapturedGraph:
    """A directed link graph with its crawl metadata.

    Attributes
    ----------
    adjacency : scipy.sparse.csr_array, shape (n, n), float64
        ``adjacency[i, j]`` is the number of links from node i to node j (1 after
        collapsing duplicates).
    urls : sequence of str, length n
        The normalised URL of each node.
    hosts : ndarray of int32, length n
        Host index of each node, into ``host_names``.
    host_names : sequence of str
        Host key (``host[:port]``) of each host index.
    crawled : ndarray of bool, length n
        True for pages that were fetched (their out-links are known); False for the
        frontier (discovered, never fetched).
    fetch_order : ndarray of int64
        Node indices of the crawled pages in crawl sequence order (first fetch first).
    fetch_times : ndarray of float64
        Fetch time (seconds since the epoch) of each entry of ``fetch_order``.
    seeds : ndarray of int64
        Node indices of the crawl's seed URLs.
    store_ids : ndarray of int64
        The crawl database's URL id of each node (``-1`` for generated graphs); a
        node that stands for several copies of one document is known by its canonical
        copy (:mod:`webcrawl.analysis.graph.sites`), so the ids need not be sorted.
    kind : {"pages", "all"}
        Which graph this is (module docstring); generated graphs are ``pages``.
    outcomes : ndarray of int8
        Each node's outcome code into :data:`webcrawl.storage.reader.OUTCOMES` (``-1``: none).
    fetchable : ndarray of bool
        Nodes a virtual crawl may fetch (module docstring).
    truncated_pages : int
        Pages of the graph whose links the crawler cut at its per-page cap
        (``links_max_per_page``): their out-links are incomplete, and every output
        that describes the graph says so.
    duplicates_collapsed : int
        Pages whose body repeats an earlier page's, merged into that page's node
        (``load_graph(..., duplicates="collapse")``); every output that describes the
        graph names the count.
    near_duplicates_collapsed : int
        Near copies (a text resembling a group leader's) merged into their leader's
        node (``load_graph(..., duplicates="near")``); named like the duplicates.
    sites : ndarray of int32, length n
        Site index of each node, into ``site_names``: the host's site, where mirrored
        hosts are one site (:mod:`webcrawl.analysis.graph.sites`).  Every host-based
        measure (same-site links, diverse cores, host sizes, politeness) uses it.
        Default: ``hosts``.
    site_names : sequence of str
        Name of each site (its primary host).  Default: ``host_names``.
    mirrors : tuple of Mirror
        The sites served under more than one host name (empty: none detected, or
        ``sites="hosts"``); every output that describes the graph names them.
    """

    adjacency: sp.csr_array
    urls: Sequence[str]
    hosts: np.ndarray
    host_names: Sequence[str]
    crawled: np.ndarray
    fetch_order: np.ndarray
    fetch_times: np.ndarray
    seeds: np.ndarray
    store_ids: np.ndarray
    kind: GraphKind = "pages"
    outcomes: np.ndarray | None = None
    fetchable: np.ndarray = field(default_factory=lambda: np.empty(0, bool))
    truncated_pages: int = 0
    duplicates_collapsed: int = 0
    near_duplicates_collapsed: int = 0
    sites: np.ndarray = field(default_factory=lambda: np.empty(0, np.int32))
    site_names: Sequence[str] = ()
    mirrors: tuple[Mirror, ...] = ()
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        check_graph_kind(self.kind)
        n = self.n
        crawled = np.asarray(self.crawled, dtype=bool)
        if self.outcomes is None:
            codes = np.where(crawled, _FETCHED_CODE, -1).astype(np.int8)
            object.__setattr__(self, "outcomes", codes)
        if self.fetchable.size != n:
            # Without recorded outcomes: pages, and every node with known out-links.
            has_links = np.diff(self.adjacency.indptr) > 0
            object.__setattr__(self, "fetchable", crawled | has_links)
        if self.sites.size != n:
            object.__setattr__(self, "sites", np.asarray(self.hosts, dtype=np.int32))
            object.__setattr__(self, "site_names", list(self.host_names))

    @property
    def n(self) -> int:
        """Number of nodes."""
        return int(self.adjacency.shape[0])

    @property
    def m(self) -> int:
        """Number of stored links (non-zero entries of the adjacency)."""
        return int(self.adjacency.nnz)

    def index_of(self, url: str) -> int:
        """Node index of a (normalised) URL; raises KeyError if absent."""
        if not self._index:
            self._index.update((u, i) for i, u in enumerate(self.urls))
        return self._index[url]

    @property
    def pages(self) -> int:
        """Number of fetched pages among the nodes."""
        return int(np.count_nonzero(self.crawled))

    def describe(self) -> str:
        """The graph's name with its node and link counts, for titles and reports."""
        cut, dup = self.truncated_pages, self.duplicates_collapsed
        note = (f"; {cut:,} page{'s' if cut != 1 else ''} with links cut at the per-page "
                "cap" if cut else "")
        dups = f", {dup:,} duplicate{'s' if dup != 1 else ''} collapsed" if dup else ""
        near = self.near_duplicates_collapsed
        if near:
            dups += f", {near:,} near cop{'ies' if near != 1 else 'y'} collapsed"
        mirrors = ""
        if len(self.mirrors) == 1:
            mirrors = f"; one site under {len(self.mirrors[0].hosts)} host names: " + \
                " = ".join(self.mirrors[0].hosts)
        elif self.mirrors:
            mirrors = f"; {len(self.mirrors):,} sites under more than one host name"
        if self.kind == "pages":
            return (f"graph of fetched pages: {self.n:,} pages{dups}, {self.m:,} "
                    f"links{note}{mirrors}")
        return (f"graph of all discovered URLs: {self.n:,} URLs ({self.pages:,} fetched "
                f"pages{dups}), {self.m:,} links{note}{mirrors}")

    def info(self) -> dict[str, Any]:
        """The graph's name and counts as a JSON-ready dict (``graph`` in every output)."""
        return {"kind": self.kind, "nodes": self.n, "links": self.m, "pages": self.pages,
                "truncated_pages": self.truncated_pages,
                "duplicates_collapsed": self.duplicates_collapsed,
                "near_duplicates_collapsed": self.near_duplicates_collapsed,
                "sites": len(self.site_names),
                "mirrors": [m.info() for m in self.mirrors],
                "description": self.describe()}

    def outcome_counts(self, mask: np.ndarray | None = None) -> dict[str, int]:
        """Nodes per recorded outcome (``frontier``: none yet), optionally within ``mask``."""
        codes = np.asarray(self.outcomes) if mask is None else np.asarray(self.outcomes)[mask]
        counts = np.bincount(codes.astype(np.int64) + 1, minlength=len(OUTCOMES) + 1)
        names = ["frontier", *(o.value for o in OUTCOMES)]
        return {names[i]: int(c) for i, c in enumerate(counts.tolist()) if c}

    def positions_in(self, other: CapturedGraph) -> np.ndarray:
        """For each node of ``self``, its node index in ``other`` (``-1``: not a node there).

        Nodes are matched by crawl-database URL id, so both graphs must be loaded from
        the same database (the ``all`` and ``pages`` graphs of one crawl); a generated
        graph (no store ids) maps only onto itself.
        """
        if other is self:
            return np.arange(self.n, dtype=np.int64)
        mine, theirs = np.asarray(self.store_ids), np.asarray(other.store_ids)
        if (mine < 0).any() or (theirs < 0).any():
            raise ConfigError("graphs without crawl-database ids map only onto themselves")
        if theirs.size == 0:
            return np.full(mine.size, -1, dtype=np.int64)
        # A merged node is known by its canonical copy's id: ids need not be sorted.
        by_id = np.argsort(theirs, kind="stable")
        at = np.minimum(np.searchsorted(theirs[by_id], mine), theirs.size - 1)
        return np.where(theirs[by_id[at]] == mine, by_id[at], -1).astype(np.int64)

    @classmethod
    def from_edges(
        cls,
        src: Sequence[int] | np.ndarray,
        dst: Sequence[int] | np.ndarray,
        n: int | None = None,
        *,
        urls: Sequence[str] | None = None,
        hosts: Sequence[int] | np.ndarray | None = None,
        crawled: Sequence[bool] | np.ndarray | None = None,
        fetch_order: Sequence[int] | np.ndarray | None = None,
        seeds: Sequence[int] | np.ndarray | None = None,
        collapse_duplicates: bool = True,
        fetchable: Sequence[bool] | np.ndarray | None = None,
        sites: Sequence[int] | np.ndarray | None = None,
    ) -> CapturedGraph:
        """Build a graph from edge arrays (for tests and generated graphs).

        Defaults: URLs ``node:{i}``, every node on host 0, every node crawled, fetch
        order ``0..n-1``, seed 0; fetchable: the crawled nodes and every node with
        out-links (the rule for graphs without fetch outcomes).
        """
        src_a = np.asarray(src, dtype=np.int64)
        dst_a = np.asarray(dst, dtype=np.int64)
        if n is None:
            n = int(max(src_a.max(initial=-1), dst_a.max(initial=-1)) + 1)
        adj = sp.csr_array(
            (np.ones(src_a.size, dtype=np.float64), (src_a, dst_a)), shape=(n, n)
        )
        adj.sum_duplicates()
        if collapse_duplicates:
            adj.data[:] = 1.0
        host_arr = np.zeros(n, dtype=np.int32) if hosts is None else np.asarray(hosts, np.int32)
        n_hosts = int(host_arr.max(initial=-1)) + 1
        order = np.arange(n) if fetch_order is None else np.asarray(fetch_order, np.int64)
        return cls(
            adjacency=adj,
            urls=list(urls) if urls is not None else [f"node:{i}" for i in range(n)],
            hosts=host_arr,
            host_names=[f"host{h}" for h in range(max(n_hosts, 1))],
            crawled=np.ones(n, bool) if crawled is None else np.asarray(crawled, bool),
            fetch_order=order.astype(np.int64),
            fetch_times=np.arange(order.size, dtype=np.float64),
            seeds=np.asarray([0] if seeds is None else seeds, dtype=np.int64),
            store_ids=np.full(n, -1, dtype=np.int64),
            fetchable=(np.empty(0, bool) if fetchable is None
                       else np.asarray(fetchable, dtype=bool)),
            **({} if sites is None else _site_fields(np.asarray(sites, np.int32))),
        )


def _site_fields(sites: np.ndarray) -> dict[str, Any]:
    """``sites`` and ``site_names`` of a generated graph's given sites."""
    return {"sites": sites,
            "site_names": [f"site{s}" for s in range(int(sites.max(initial=0)) + 1)]}
