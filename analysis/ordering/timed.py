"""Virtual crawls in simulated time, under the politeness a live crawl obeys.

Baeza-Yates et al. judge an ordering by *when*, in time, it captures the important
pages, in a simulator that models a limited number of simultaneous connections, a
wait between two requests to one site and each page's transfer time [1]_.  This module
is that simulator for our strategies, with the live crawler's rules:

* at most ``connections`` requests in flight, and at most one per host;
* after a request that took ``t`` seconds its host waits
  ``min(max_delay, max(min_delay, delay_factor * t))`` (Mercator's rule, as
  :class:`webcrawl.crawler.politeness.PolitenessPolicy` computes it live);
* a page's fetch takes its recorded duration (:func:`recorded_durations`);
* whenever a connection is free, the frontier takes, among the hosts that may be
  contacted now, the host the strategy's :attr:`~Strategy.host_order` picks (the host
  holding the best-ranked URL, or for ``larger-sites-first`` the host with the most
  pending URLs), and its best URL -- the live frontier's rule
  (:class:`webcrawl.crawler.frontier.Frontier`).

A page's links become known when its fetch ends: the strategy is then told
(``discovered`` for new targets, ``fetched``), its updates applied, and a due
recomputation run at once, exactly as in :func:`webcrawl.analysis.ordering.virtual.replay`
(which is this simulation with one connection and no waits: both give the same order,
tested).  Simultaneous events are processed in a fixed order (ends by time, then by
when they were taken), so a simulation is deterministic.

References
----------
.. [1] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country:
   better strategies than breadth-first for web page ordering", WWW 2005.
.. [2] A. Heydon, M. Najork, "Mercator: a scalable, extensible web crawler", World
   Wide Web 2(4), 1999 (the wait proportional to the last fetch time).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.strategies import Strategy
from webcrawl.analysis.ordering.virtual import VirtualCrawl, prepare_replay
from webcrawl.storage.errors import ConfigError

__all__ = [
    "DEFAULT_FETCH_SECONDS",
    "SimulatedPoliteness",
    "TimedCrawl",
    "recorded_durations",
    "recorded_politeness",
    "replay_hosts",
    "timed_crawl",
]

#: Fetch time of every page of a graph without recorded durations (an imported edge
#: list), in seconds.
DEFAULT_FETCH_SECONDS = 0.5

OutLinks = Callable[[int], np.ndarray]
_EMPTY, _WAITING, _READY, _BUSY = 0, 1, 2, 3  # host states (_HostFrontier)


@dataclass(frozen=True, slots=True)
class SimulatedPoliteness:
    """The politeness of a simulated crawl (defaults: one connection, no waits).

    Attributes
    ----------
    connections : int
        Requests in flight at once over all hosts (always one per host).
    min_delay, delay_factor, max_delay : float
        A host waits ``min(max_delay, max(min_delay, delay_factor * t))`` after a
        request that took ``t`` seconds.
    """

    connections: int = 1
    min_delay: float = 0.0
    delay_factor: float = 0.0
    max_delay: float = float("inf")

    def __post_init__(self) -> None:
        if self.connections < 1:
            raise ConfigError(f"connections must be >= 1, got {self.connections}")
        for name in ("min_delay", "delay_factor", "max_delay"):
            value = getattr(self, name)
            if not value >= 0:
                raise ConfigError(f"{name} must be >= 0, got {value}")
        if self.min_delay > self.max_delay:
            raise ConfigError(f"min_delay ({self.min_delay}) exceeds max_delay "
                              f"({self.max_delay})")

    def waits(self, seconds: np.ndarray) -> np.ndarray:
        """The wait after each fetch duration in ``seconds`` (vectorised)."""
        return np.minimum(self.max_delay, np.maximum(self.min_delay,
                                                     self.delay_factor * seconds))

    def describe(self) -> str:
        return (f"{self.connections} connection{'s' if self.connections != 1 else ''}, "
                f"wait max({self.min_delay:g} s, {self.delay_factor:g} x fetch time)"
                + (f" up to {self.max_delay:g} s" if np.isfinite(self.max_delay) else ""))


@dataclass(frozen=True)
class TimedCrawl(VirtualCrawl):
    """A simulated crawl: a :class:`~webcrawl.analysis.ordering.virtual.VirtualCrawl`
    (``order`` is the order pages were taken, a live crawl's ``seq`` order) with its clock.

    Attributes
    ----------
    started, ended : ndarray of float64
        Simulated seconds at which each fetch of ``order`` started and ended.
    politeness : SimulatedPoliteness
    """

    started: np.ndarray
    ended: np.ndarray
    politeness: SimulatedPoliteness

    @property
    def duration(self) -> float:
        """Simulated seconds from the first request to the last page in hand."""
        return float(self.ended.max()) if self.ended.size else 0.0


class _HostFrontier:
    """Per-host heaps of ``(-priority, seq, node)`` under a heap of contactable hosts.

    Lazy deletion everywhere: a URL entry is stale when its node was taken or its
    priority changed, a host entry when the host's key changed; stale entries are
    skipped (or re-pushed with the current key) when they surface.  A host is idle
    (nothing pending), *due* (pending URLs, waiting for its ``ready_at``: the caller
    holds a wake event for it), contactable (in :attr:`ready`) or busy.
    """

    def __init__(self, n: int, hosts: np.ndarray, n_hosts: int, most_pending: bool) -> None:
        self.hosts = hosts
        self.priority = np.full(n, np.nan)
        self.seq = np.full(n, -1, dtype=np.int64)
        self.taken = np.zeros(n, dtype=bool)
        self.queues: list[list[tuple[float, int, int]]] = [[] for _ in range(n_hosts)]
        self.pending = np.zeros(n_hosts, dtype=np.int64)
        self.state = np.zeros(n_hosts, dtype=np.int8)
        self.ready_at = np.zeros(n_hosts, dtype=np.float64)
        self.ready: list[tuple[float, ...]] = []
        #: hosts that became due and need a wake event at their ready_at
        self.due: list[int] = []
        self.most_pending = most_pending

    def _head(self, host: int) -> tuple[float, int, int] | None:
        """The host's best live entry (stale ones above it are dropped)."""
        queue = self.queues[host]
        while queue and (self.taken[queue[0][2]]
                         or self.priority[queue[0][2]] != -queue[0][0]):
            heapq.heappop(queue)
        return queue[0] if queue else None

    def _key(self, host: int, head: tuple[float, int, int]) -> tuple[float, ...]:
        if self.most_pending:
            return (-float(self.pending[host]), head[0], head[1], host)
        return (head[0], head[1], host)

    def _enqueue(self, host: int, entry: tuple[float, int, int]) -> None:
        heapq.heappush(self.queues[host], entry)
        if self.state[host] == _READY:  # its key may have improved: one more entry
            head = self._head(host)
            if head is not None:
                heapq.heappush(self.ready, self._key(host, head))
        elif self.state[host] == _EMPTY:
            self.state[host] = _WAITING
            self.due.append(host)

    def add(self, node: int, seq: int, priority: float) -> None:
        self.seq[node] = seq
        self.priority[node] = priority
        if not self.taken[node]:
            host = int(self.hosts[node])
            self.pending[host] += 1
            self._enqueue(host, (-priority, seq, node))

    def update(self, updates: list[tuple[int, float]]) -> None:
        for node, value in updates:
            if self.taken[node] or self.seq[node] < 0 or self.priority[node] == value:
                continue  # taken or unknown URLs are ignored, as live
            self.priority[node] = value
            self._enqueue(int(self.hosts[node]), (-value, int(self.seq[node]), node))

    def contactable(self, host: int) -> None:
        """A due host's wait is over (its wake event fired)."""
        if self.state[host] != _WAITING:
            return
        head = self._head(host)
        if head is None:
            self.state[host] = _EMPTY
        else:
            self.state[host] = _READY
            heapq.heappush(self.ready, self._key(host, head))

    def take(self) -> tuple[int, float] | None:
        """The best URL of the contactable host the rule picks (its host becomes busy)."""
        while self.ready:
            entry = heapq.heappop(self.ready)
            host = int(entry[-1])
            head = self._head(host) if self.state[host] == _READY else None
            if head is None:
                if self.state[host] == _READY:
                    self.state[host] = _EMPTY
                continue
            if self._key(host, head) != entry:
                heapq.heappush(self.ready, self._key(host, head))
                continue
            heapq.heappop(self.queues[host])
            self.taken[head[2]] = True
            self.pending[host] -= 1
            self.state[host] = _BUSY
            return head[2], -head[0]
        return None

    def release(self, host: int, ready_at: float) -> None:
        """A busy host's fetch ended; it may be contacted again from ``ready_at``."""
        self.ready_at[host] = ready_at
        self.state[host] = _EMPTY
        if self._head(host) is not None:
            self.state[host] = _WAITING
            self.due.append(host)


def replay_hosts(
    strategy: Strategy,
    n: int,
    seeds: Sequence[int] | np.ndarray,
    out_links: OutLinks,
    hosts: np.ndarray,
    durations: np.ndarray,
    politeness: SimulatedPoliteness | None = None,
    *,
    max_pages: int | None = None,
    never_taken: np.ndarray | None = None,
) -> TimedCrawl:
    """Drive ``strategy`` over nodes ``0..n-1`` in simulated time (module docstring).

    Parameters
    ----------
    strategy : Strategy
        A fresh, bound strategy instance.
    n : int
        Number of nodes.
    seeds : sequence of int
        Start nodes (announced at depth 0, in order).
    out_links : callable
        ``out_links(node)``: the node's distinct out-link targets.
    hosts : ndarray of int
        Host index of each node (0..H-1).
    durations : ndarray of float
        Fetch time of each node, in seconds (>= 0).
    politeness : SimulatedPoliteness, optional
        Default: one connection, no waits.
    max_pages : int, optional
        Take at most this many pages (those in flight then still end).
    never_taken : ndarray of bool, optional
        Nodes announced to the strategy but never fetched.

    Returns
    -------
    TimedCrawl

    Notes
    -----
    Cost: O((n + u) log(n + u)) heap work for u priority updates, one event per fetch;
    memory O(n + hosts).
    """
    polite = politeness or SimulatedPoliteness()
    hosts = np.asarray(hosts, dtype=np.int64)
    dur = np.asarray(durations, dtype=np.float64)
    if hosts.size != n or dur.size != n:
        raise ConfigError("hosts and durations need one entry per node")
    if dur.size and not (np.isfinite(dur).all() and dur.min() >= 0):
        raise ConfigError("fetch durations must be finite and >= 0")
    waits = polite.waits(dur)
    n_hosts = int(hosts.max(initial=-1)) + 1
    frontier = _HostFrontier(n, hosts, n_hosts, strategy.host_order == "most-pending")
    if never_taken is not None:
        frontier.taken |= np.asarray(never_taken, dtype=bool)
    depth = np.full(n, -1, dtype=np.int64)
    discovery: list[int] = []
    for s in seeds:
        node = int(s)
        if depth[node] < 0:
            depth[node] = 0
            frontier.add(node, len(discovery), strategy.discovered(node, 0))
            discovery.append(node)

    limit = n if max_pages is None else min(max_pages, n)
    order = np.empty(limit, dtype=np.int64)
    priorities = np.empty(limit, dtype=np.float64)
    started = np.empty(limit, dtype=np.float64)
    ended = np.empty(limit, dtype=np.float64)
    taken = since = recomputations = in_flight = 0
    # Events (time, kind, tie, id): a fetch ends (kind 0, tie = take index, id = node),
    # then a host's wait ends (kind 1, tie = host, id = host).  Ends come first at equal
    # times: they release hosts and reveal links before anything is taken.
    events: list[tuple[float, int, int, int]] = []
    now = 0.0

    def schedule_due() -> None:
        for host in frontier.due:
            heapq.heappush(events, (float(frontier.ready_at[host]), 1, host, host))
        frontier.due.clear()

    schedule_due()
    while True:
        while events and events[0][0] <= now:
            _, kind, _, ident = heapq.heappop(events)
            if kind == 1:
                frontier.contactable(ident)
                continue
            page = ident
            in_flight -= 1
            frontier.release(int(hosts[page]), now + float(waits[page]))
            targets = out_links(page)
            child_depth = int(depth[page]) + 1
            for t in targets[depth[targets] < 0].tolist():
                depth[t] = child_depth
                frontier.add(t, len(discovery), strategy.discovered(t, child_depth))
                discovery.append(t)
            frontier.update(list(strategy.fetched(page, targets.tolist())))
            since += 1
            if strategy.wants_recompute(since, 0.0):
                frontier.update(list(strategy.recompute(strategy.snapshot())))
                since = 0
                recomputations += 1
            schedule_due()
        while taken < limit and in_flight < polite.connections:
            got = frontier.take()
            if got is None:
                break
            node, priority = got
            order[taken], priorities[taken] = node, priority
            started[taken], ended[taken] = now, now + dur[node]
            heapq.heappush(events, (now + float(dur[node]), 0, taken, node))
            taken += 1
            in_flight += 1
        if not events or (taken >= limit and in_flight == 0):
            break
        now = events[0][0]
    order = order[:taken]
    return TimedCrawl(
        strategy=strategy.name, order=order, priorities=priorities[:taken],
        depths=depth[order], discovery=np.asarray(discovery, dtype=np.int64),
        recomputations=recomputations, started=started[:taken], ended=ended[:taken],
        politeness=polite)


def timed_crawl(
    graph: CapturedGraph,
    strategy: str | Strategy,
    politeness: SimulatedPoliteness | None = None,
    durations: np.ndarray | None = None,
    *,
    seeds: Sequence[int] | np.ndarray | None = None,
    max_pages: int | None = None,
    seed: int = 0,
    final_scores: np.ndarray | None = None,
) -> TimedCrawl:
    """Replay a crawl ordering over a captured graph in simulated time.

    The page set and the rules of :func:`webcrawl.analysis.ordering.virtual.virtual_crawl`
    (only fetchable nodes are taken), in time under ``politeness``.

    Parameters
    ----------
    graph : CapturedGraph
    strategy : str or Strategy
        A strategy spec or a fresh instance.
    politeness : SimulatedPoliteness, optional
        Default: one connection, no waits.
    durations : ndarray, optional
        Fetch seconds per node (:func:`recorded_durations`); default
        :data:`DEFAULT_FETCH_SECONDS` for every node.
    seeds, max_pages, seed, final_scores
        As for :func:`~webcrawl.analysis.ordering.virtual.virtual_crawl`.

    Returns
    -------
    TimedCrawl

    Examples
    --------
    Node 1 shares the seed's host, node 2 has its own; fetches take 1 s, a host then
    waits 2 s: node 2 goes first, node 1 when its host's wait ends.

    >>> g = CapturedGraph.from_edges([0, 0], [1, 2], hosts=[0, 0, 1])
    >>> t = timed_crawl(g, "bfs", SimulatedPoliteness(2, min_delay=2.0), np.ones(3))
    >>> t.order.tolist(), t.started.tolist(), t.duration
    ([0, 2, 1], [0.0, 1.0, 3.0], 4.0)
    """
    instance, start, out_links, skip = prepare_replay(
        graph, strategy, seeds=seeds, max_pages=max_pages, seed=seed,
        final_scores=final_scores)
    dur = (np.full(graph.n, DEFAULT_FETCH_SECONDS) if durations is None
           else np.asarray(durations, dtype=np.float64))
    return replay_hosts(instance, graph.n, start, out_links, graph.hosts, dur, politeness,
                        max_pages=max_pages, never_taken=skip)


# ---------------------------------------------------------------- recorded timings


def recorded_durations(db_path: str | Path, graph: CapturedGraph, *,
                       default: float = DEFAULT_FETCH_SECONDS) -> np.ndarray:
    """Fetch time of each node of ``graph`` as the crawl in ``db_path`` measured it.

    A node's time is the duration (``ended_at - started_at``) of its final crawl
    fetch; a node without one (never fetched, or an imported graph) gets its host's
    median, else the median of every measured fetch, else ``default``.

    Parameters
    ----------
    db_path : path
        The crawl database ``graph`` was loaded from (or None-like: every node gets
        ``default``).
    graph : CapturedGraph
    default : float
        Seconds for every node when nothing was measured.

    Returns
    -------
    ndarray of float64, length ``graph.n``
    """
    from webcrawl.storage.reader import CrawlReader

    with CrawlReader(db_path) as reader:
        table = reader.fetches(kind="crawl")
    per_node = np.full(graph.n, np.nan)
    if table.url_id.size and graph.n:
        ids = np.asarray(graph.store_ids, dtype=np.int64)
        top = int(max(ids.max(initial=-1), table.url_id.max())) + 1
        node_of = np.full(top, -1, dtype=np.int64)
        node_of[ids[ids >= 0]] = np.flatnonzero(ids >= 0)
        nodes = node_of[table.url_id]
        keep = nodes >= 0
        # rows come in insertion order: the last row of a URL is its final attempt
        per_node[nodes[keep]] = (table.ended_at - table.started_at)[keep]
        per_node = np.where(per_node >= 0, per_node, np.nan)
    return _fill_by_host(per_node, np.asarray(graph.hosts, dtype=np.int64), default)


def _fill_by_host(values: np.ndarray, hosts: np.ndarray, default: float) -> np.ndarray:
    """NaNs replaced by their host's median, then the overall median, then ``default``."""
    out = values.copy()
    missing = np.isnan(out)
    if not missing.any():
        return out
    known = ~missing
    if known.any():
        order = np.lexsort((out[known], hosts[known]))
        k_hosts, k_vals = hosts[known][order], out[known][order]
        uniq, start, count = np.unique(k_hosts, return_index=True, return_counts=True)
        lo = start + (count - 1) // 2
        hi = start + count // 2
        medians = (k_vals[lo] + k_vals[hi]) / 2
        host_median = np.full(int(hosts.max(initial=-1)) + 1, np.nan)
        host_median[uniq] = medians
        out[missing] = host_median[hosts[missing]]
        still = np.isnan(out)
        out[still] = float(np.median(values[known]))
    else:
        out[:] = default
    return out


def recorded_politeness(db_path: str | Path | None) -> SimulatedPoliteness:
    """The politeness a recorded crawl ran with (its stored settings).

    Connections are the crawl's ``concurrency``, the waits its ``polite_min_delay``,
    ``polite_delay_factor`` and ``polite_max_delay``; a database without stored
    settings (an imported graph) gets the crawler's defaults.
    """
    from webcrawl.storage.reader import CrawlReader

    stored: dict[str, object] = {}
    if db_path is not None:
        with CrawlReader(db_path) as reader:
            raw = reader.meta().get("settings")
        stored = json.loads(raw) if raw else {}
    values = {**_CRAWLER_DEFAULTS, **{k: stored[k] for k in _CRAWLER_DEFAULTS if k in stored}}
    return SimulatedPoliteness(connections=int(values["concurrency"]),  # type: ignore[call-overload]
                               min_delay=float(values["polite_min_delay"]),  # type: ignore[arg-type]
                               delay_factor=float(values["polite_delay_factor"]),  # type: ignore[arg-type]
                               max_delay=float(values["polite_max_delay"]))  # type: ignore[arg-type]


#: The live crawler's defaults (``webcrawl.crawler.settings.CrawlSettings``), for
#: graphs without stored settings; a test checks they match.
_CRAWLER_DEFAULTS: dict[str, object] = {"concurrency": 64, "polite_min_delay": 1.0,
                                        "polite_delay_factor": 10.0, "polite_max_delay": 30.0}
