"""Virtual crawls: replay any crawl ordering over a captured graph, with no network.

The replay drives the very strategy classes the live crawler uses
(:mod:`analysis.ordering.strategies`), with the same call sequence and the same ordering rule as
the live frontier, so "crawl once, compare every ordering" works on real data.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering._fast_replay import fast_order, fast_replay
from webcrawl.analysis.ordering.hosts import learn_page, replay_hosts
from webcrawl.analysis.ordering.strategies import Strategy, StrategyContext, get_strategy
from webcrawl.storage.errors import ConfigError, EmptyGraphError

__all__ = ["VirtualCrawl", "prepare_replay", "replay", "virtual_crawl", "virtual_order"]

#: ``out_links(node) -> distinct out-link targets`` in the order a page lists them.
OutLinks = Callable[[int], np.ndarray]


@dataclass(frozen=True)
class VirtualCrawl:
    """The result of a virtual crawl.

    Attributes
    ----------
    strategy : str
        Name of the strategy replayed.
    order : ndarray of int64
        Node indices in fetch order.
    priorities : ndarray of float64
        Each fetched node's priority at the moment it was taken.
    depths : ndarray of int64
        Link depth of each fetched node (seeds 0).
    discovery : ndarray of int64
        Node indices in discovery order (seeds first); fetched and frontier nodes.
    recomputations : int
        Number of bulk recomputations (``snapshot``/``recompute``) performed.
    """

    strategy: str
    order: np.ndarray
    priorities: np.ndarray
    depths: np.ndarray
    discovery: np.ndarray
    recomputations: int

    @property
    def fetched(self) -> int:
        """Number of pages fetched."""
        return int(self.order.size)


class _Frontier:
    """Max-priority heap with lazy deletion; ties to the URL discovered first.

    Entries are ``(-priority, discovery_seq, node)``; an entry is stale when the node
    was taken or its priority changed since, and is skipped when popped.
    """

    __slots__ = ("_heap", "_priority", "_seq", "_taken")

    def __init__(self, n: int) -> None:
        self._heap: list[tuple[float, int, int]] = []
        self._priority = np.full(n, np.nan)
        self._seq = np.full(n, -1, dtype=np.int64)
        self._taken = np.zeros(n, dtype=bool)

    def exclude(self, nodes: np.ndarray) -> None:
        """Never hand out these nodes (marked as taken from the start)."""
        self._taken |= nodes

    def add(self, node: int, seq: int, priority: float) -> None:
        self._seq[node] = seq
        self._priority[node] = priority
        if not self._taken[node]:
            heapq.heappush(self._heap, (-priority, seq, node))

    def update(self, updates: Iterable[tuple[int, float]]) -> None:
        priority, seq, taken, heap = self._priority, self._seq, self._taken, self._heap
        for node, value in updates:
            # Updates for taken or unknown URLs are ignored, as in the live frontier.
            if taken[node] or seq[node] < 0 or priority[node] == value:
                continue
            priority[node] = value
            heapq.heappush(heap, (-value, int(seq[node]), node))

    def pop(self) -> tuple[int, float] | None:
        heap, priority, taken = self._heap, self._priority, self._taken
        while heap:
            neg, _, node = heapq.heappop(heap)
            if not taken[node] and priority[node] == -neg:
                taken[node] = True
                return node, -neg
        return None


def replay(
    strategy: Strategy,
    n: int,
    seeds: Sequence[int] | np.ndarray,
    out_links: OutLinks,
    *,
    max_pages: int | None = None,
    on_empty: Callable[[], int | None] | None = None,
    never_taken: np.ndarray | None = None,
) -> VirtualCrawl:
    """Drive ``strategy`` over nodes ``0..n-1`` whose out-links ``out_links`` reveals.

    This is the engine behind :func:`virtual_crawl` (and the random-web-crawls model,
    whose links are drawn at crawl time).  Call sequence, identical to the live
    frontier's: ``discovered(seed, 0)`` for each distinct seed in order; then, for
    each page taken, ``discovered(t, depth + 1)`` for each new target in link order,
    then ``fetched(page, targets)`` with every distinct target, then its updates are
    applied; then, if ``wants_recompute(fetches_since_last, 0.0)``,
    ``recompute(snapshot())`` runs synchronously and its updates are applied.  Time
    never triggers a recomputation, so results are deterministic.

    Parameters
    ----------
    strategy : Strategy
        A fresh strategy instance (it keeps state).
    n : int
        Number of nodes.
    seeds : sequence of int
        Start nodes.
    out_links : callable
        ``out_links(node)`` returns the node's distinct out-link targets (int array).
    max_pages : int, optional
        Stop after this many fetches (default: when the frontier is empty).
    on_empty : callable, optional
        Called when the frontier runs dry: returns an undiscovered node to add as a
        new seed (depth 0), or None to stop (an already known node stops too).  Default: stop.
    never_taken : ndarray of bool, optional
        Nodes announced to the strategy when discovered but never taken (they cost no
        budget): the nodes outside the fetchable set.

    Returns
    -------
    VirtualCrawl
    """
    frontier = _Frontier(n)
    if never_taken is not None:
        frontier.exclude(never_taken)
    depth = np.full(n, -1, dtype=np.int64)
    discovery: list[int] = []

    def add_seed(node: int) -> bool:
        if depth[node] >= 0:
            return False
        depth[node] = 0
        frontier.add(node, len(discovery), strategy.discovered(node, 0))
        discovery.append(node)
        return True

    for s in seeds:
        add_seed(int(s))
    limit = n if max_pages is None else min(max_pages, n)
    order = np.empty(limit, dtype=np.int64)
    priorities = np.empty(limit, dtype=np.float64)
    fetched = since = recomputations = 0
    while fetched < limit:
        taken = frontier.pop()
        if taken is None:
            reseed = on_empty() if on_empty is not None else None
            if reseed is None or not add_seed(reseed):
                break
            continue
        page, priority = taken
        order[fetched], priorities[fetched] = page, priority
        fetched += 1
        since = learn_page(strategy, frontier, page, out_links(page), depth, discovery, since)
        recomputations += since == 0
    order, priorities = order[:fetched], priorities[:fetched]
    return VirtualCrawl(
        strategy=strategy.name,
        order=order,
        priorities=priorities,
        depths=depth[order],
        discovery=np.asarray(discovery, dtype=np.int64),
        recomputations=recomputations,
    )


def virtual_crawl(
    graph: CapturedGraph,
    strategy: str | Strategy,
    *,
    seeds: Sequence[int] | np.ndarray | None = None,
    max_pages: int | None = None,
    seed: int = 0,
    hosts_politeness: bool = False,
    final_scores: np.ndarray | None = None,
) -> VirtualCrawl:
    """Replay a crawl ordering over a captured graph, with no network.

    The crawl starts from the seeds and knows only what it has discovered: a page's
    out-links (its row of the adjacency) become known when the page is (virtually)
    fetched.  It stays inside the recorded crawl's reach: only ``graph.fetchable``
    nodes are ever fetched (the URLs the recorded crawl got an HTTP answer for;
    redirects are fetchable and reveal their one recorded target).  Out-of-scope,
    robots-excluded, never-reached and unanswered URLs are announced to the strategy
    when discovered, as the live crawler does, but never taken and cost no budget.
    Over a graph without fetch outcomes (an imported edge list), every node with
    known out-links is fetchable.

    Parameters
    ----------
    graph : CapturedGraph
        The captured graph to replay over.
    strategy : str or Strategy
        A registered strategy name (``bfs``, ``dfs``, ``random``, ``backlink``,
        ``pagerank``, ``opic`` or a custom one) or a fresh strategy instance.
    seeds : sequence of int, optional
        Start nodes (default: the graph's seeds).
    max_pages : int, optional
        Stop after this many fetches (default: every reachable node).
    seed : int, default 0
        Random seed passed to the strategy when ``strategy`` is a name.
    hosts_politeness : bool, default False
        Reserved; a ConfigError if True.  Politeness in simulated time is
        :func:`webcrawl.analysis.ordering.timed.timed_crawl`; this replay is its case of one
        connection and no waits, where the live crawler's order is the strategy's own.
    final_scores : ndarray, optional
        PageRank of the final graph by node, for strategies that need it
        (``omniscient``).

    Returns
    -------
    VirtualCrawl
        ``order`` (node indices in fetch order), ``priorities`` (when taken),
        ``depths``, ``discovery`` and ``recomputations``.

    Raises
    ------
    EmptyGraphError
        If the graph has no nodes.
    ConfigError
        On an unknown strategy name, a seed out of range, no seeds, or a bad
        ``max_pages``.

    Examples
    --------
    >>> from webcrawl.analysis.graph.captured import CapturedGraph
    >>> g = CapturedGraph.from_edges([0, 0, 1, 2], [1, 2, 3, 4], n=5)
    >>> virtual_crawl(g, "bfs").order.tolist()
    [0, 1, 2, 3, 4]
    >>> virtual_crawl(g, "dfs").order.tolist()
    [0, 2, 4, 1, 3]

    Node 2 below was never answered (no outcome, no out-links): discovered, not taken.

    >>> g = CapturedGraph.from_edges([0, 0], [1, 2], n=3, crawled=[True, True, False])
    >>> virtual_crawl(g, "bfs").order.tolist()
    [0, 1]

    Notes
    -----
    *Same rules as the live frontier.*  Higher priority first, ties to the node
    discovered first; a page's new out-links are announced (``discovered``) in link
    order, then ``fetched`` receives all its distinct out-links; updates for taken
    nodes are ignored.  The captured graph keeps no document order, so a page's links
    come in node-index order; graphs loaded from a crawl number nodes in discovery
    order, so the real crawl's newly found links keep their relative order, which is
    what lets a virtual ``bfs`` reproduce a real single-host ``bfs`` crawl exactly
    (load the graph with ``graph="all", drop_self_loops=False`` so strategies see the
    same links as live; the recorded ``fetch_order`` is then the replay's order).

    *Same page set.*  Every fetchable node of a finished crawl was reached through
    fetchable nodes (pages and redirects), so without ``max_pages`` every ordering
    ends on the recorded crawl's fetchable set, and PageRank captured reaches 1.

    *Recomputation.*  Strategies that recompute in bulk (``pagerank``) do so
    synchronously after the fetch that makes ``wants_recompute(fetches, 0.0)`` true:
    the same fetch counts every time, so the order is deterministic.

    *Complexity.*  A binary heap with lazy deletion: O((n + u) log(n + u)) for u
    priority updates, plus the strategy's own work (``pagerank``: one warm-started
    power iteration per recomputation).  Memory O(n) beyond the graph.

    References
    ----------
    .. [1] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality
       pages", WWW 2001 (virtual crawls over a cached copy for repeatability).
    .. [2] J. Cho, H. Garcia-Molina and L. Page, "Efficient crawling through URL
       ordering", WWW 1998.
    """
    if hosts_politeness:
        raise ConfigError("hosts_politeness is not implemented in virtual crawls")
    crawl = _run(graph, strategy, seeds=seeds, max_pages=max_pages, seed=seed,
                 final_scores=final_scores, order_only=False)
    assert isinstance(crawl, VirtualCrawl)
    return crawl


def virtual_order(graph: CapturedGraph, strategy: str | Strategy, *,
                  max_pages: int | None = None, seed: int = 0,
                  final_scores: np.ndarray | None = None) -> np.ndarray:
    """The fetch order of :func:`virtual_crawl` with the same arguments (from the
    graph's own seeds), alone.

    What a comparison of orderings needs, in less memory: the compiled replays'
    order as they wrote it (int32 node indices on a graph below 2**31 links), without
    the priorities, depths and discovery sequence, nor int64 copies of them (up to 28
    bytes a node less at the peak).  Other replays give ``virtual_crawl(...).order``.

    Examples
    --------
    >>> from webcrawl.analysis.graph.captured import CapturedGraph
    >>> g = CapturedGraph.from_edges([0, 0, 1, 2], [1, 2, 3, 4], n=5)
    >>> virtual_order(g, "bfs").tolist()
    [0, 1, 2, 3, 4]
    """
    order = _run(graph, strategy, seeds=None, max_pages=max_pages, seed=seed,
                 final_scores=final_scores, order_only=True)
    assert isinstance(order, np.ndarray)
    return order


def _run(graph: CapturedGraph, strategy: str | Strategy, *,
         seeds: Sequence[int] | np.ndarray | None, max_pages: int | None, seed: int,
         final_scores: np.ndarray | None, order_only: bool) -> VirtualCrawl | np.ndarray:
    """:func:`virtual_crawl`, or with ``order_only`` its order alone
    (:func:`virtual_order`)."""
    instance, start = _bound_strategy(graph, strategy, seeds=seeds, max_pages=max_pages,
                                      seed=seed, final_scores=final_scores)
    adjacency = _canonical_adjacency(graph)
    if _fast_path(strategy, instance, max_pages):
        # bfs, random, backlink: the same replay, vectorised or compiled
        fast = (fast_order if order_only else fast_replay)(
            instance, adjacency.indptr, adjacency.indices,
            np.asarray(graph.fetchable, dtype=bool), start, seed)
        if isinstance(fast, np.ndarray):
            return fast
        if fast is not None:
            order, priorities, depths, discovery = fast
            return VirtualCrawl(strategy=instance.name, order=order, priorities=priorities,
                                depths=depths, discovery=discovery, recomputations=0)
    crawl = _generic_replay(graph, adjacency, instance, start, max_pages)
    return crawl.order if order_only else crawl


def _fast_path(strategy: str | Strategy, instance: Strategy, max_pages: int | None) -> bool:
    """Whether the vectorised or compiled replays may stand for the generic one: a
    strategy given by name (a fresh stock instance), no fetch budget, no site rule."""
    return isinstance(strategy, str) and max_pages is None and \
        instance.host_order == "best-url"


def _generic_replay(graph: CapturedGraph, adjacency: Any, instance: Strategy,
                    start: np.ndarray, max_pages: int | None) -> VirtualCrawl:
    """The replay of any strategy: :func:`replay`, or with a site-level rule the
    simulation with one connection and no waits."""
    out_links, skip = _out_links(graph, adjacency)
    if instance.host_order != "best-url":
        # A site-level rule needs the sites: the simulation with one connection, no waits.
        zero = np.zeros(graph.n)
        run = replay_hosts(instance, graph.n, start, out_links, graph.sites, zero, zero,
                           max_pages=max_pages, never_taken=skip)
        return VirtualCrawl(instance.name, run.order, run.priorities, run.depths,
                            run.discovery, run.recomputations)
    return replay(instance, graph.n, start, out_links, max_pages=max_pages, never_taken=skip)


def prepare_replay(
    graph: CapturedGraph,
    strategy: str | Strategy,
    *,
    seeds: Sequence[int] | np.ndarray | None = None,
    max_pages: int | None = None,
    seed: int = 0,
    final_scores: np.ndarray | None = None,
) -> tuple[Strategy, np.ndarray, OutLinks, np.ndarray]:
    """What a replay over ``graph`` needs: the bound strategy, the seeds, the out-links
    function and the nodes never taken (see :func:`virtual_crawl`, which checks the
    same arguments)."""
    instance, start = _bound_strategy(graph, strategy, seeds=seeds, max_pages=max_pages,
                                      seed=seed, final_scores=final_scores)
    out_links, skip = _out_links(graph, _canonical_adjacency(graph))
    return instance, start, out_links, skip


def _bound_strategy(graph: CapturedGraph, strategy: str | Strategy, *,
                    seeds: Sequence[int] | np.ndarray | None, max_pages: int | None,
                    seed: int, final_scores: np.ndarray | None) -> tuple[Strategy, np.ndarray]:
    """The arguments checked; the strategy instance bound to the graph, and the seeds."""
    n = graph.n
    if n == 0:
        raise EmptyGraphError("cannot crawl an empty graph")
    if max_pages is not None and max_pages < 0:
        raise ConfigError(f"max_pages must be >= 0, got {max_pages}")
    start = np.asarray(graph.seeds if seeds is None else seeds, dtype=np.int64)
    if start.size == 0:
        raise ConfigError("a virtual crawl needs at least one seed")
    if start.min() < 0 or start.max() >= n:
        raise ConfigError(f"seed out of range 0..{n - 1}: {start.tolist()}")
    instance = get_strategy(strategy)(seed=seed) if isinstance(strategy, str) else strategy
    if final_scores is not None and len(final_scores) != n:
        raise ConfigError(f"final_scores has {len(final_scores)} entries for {n} nodes")
    urls = graph.urls
    instance.bind(StrategyContext(url_of=urls.__getitem__, final_scores=final_scores))
    return instance, start


def _canonical_adjacency(graph: CapturedGraph) -> Any:
    """The graph's adjacency with distinct targets in node-index order (a copy only when
    it is not so already)."""
    adjacency = graph.adjacency
    if not adjacency.has_canonical_format:
        adjacency = adjacency.copy()
        adjacency.sum_duplicates()
    return adjacency


def _out_links(graph: CapturedGraph, adjacency: Any) -> tuple[OutLinks, np.ndarray]:
    """The replay's out-links function and the nodes never taken."""
    indptr, indices = adjacency.indptr, adjacency.indices.astype(np.int64)
    skip = ~np.asarray(graph.fetchable, dtype=bool)

    def out_links(node: int) -> np.ndarray:
        targets: np.ndarray = indices[indptr[node] : indptr[node + 1]]
        return targets

    return out_links, skip
