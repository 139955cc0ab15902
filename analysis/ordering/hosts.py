"""The per-host replay behind timed virtual crawls and site-level orderings.

A frontier of per-host queues, as the live crawler's
(:class:`webcrawl.crawler.frontier.Frontier`): whenever one of ``connections`` is free,
among the hosts that may be contacted now it takes the host the strategy's
:attr:`~webcrawl.analysis.ordering.strategies.Strategy.host_order` picks (the host
holding the best-ranked URL, or for ``larger-sites-first`` the host with the most
pending URLs), then that host's best URL; after a fetch of ``t`` seconds the host waits
its node's ``wait``.  A page's links become known when its fetch ends: the strategy is
then told (``discovered`` for new targets, ``fetched``), its updates applied and a due
recomputation run at once, as in :func:`webcrawl.analysis.ordering.virtual.replay` (which
this replay reproduces with one connection and no waits, tested).  Simultaneous events
are processed in a fixed order (ends by time, then by when they were taken), so a
replay is deterministic.  :mod:`webcrawl.analysis.ordering.timed` gives it its clock.

A "host" here is whatever key the caller gives each node: the virtual and timed crawls
pass ``graph.sites`` (a host, or mirrored hosts as one site, see
:mod:`webcrawl.analysis.graph.sites`), so a site served under two names is one queue
with one pending count and one politeness clock, whichever copy the recorded crawl
fetched first.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from webcrawl.analysis.ordering.strategies import Strategy
from webcrawl.storage.errors import ConfigError

__all__ = ["HostReplay", "learn_page", "replay_hosts"]

OutLinks = Callable[[int], np.ndarray]


class _Queue(Protocol):
    def add(self, node: int, seq: int, priority: float) -> None: ...
    def update(self, updates: Iterable[tuple[int, float]]) -> None: ...


def learn_page(strategy: Strategy, frontier: _Queue, page: int, targets: np.ndarray,
               depth: np.ndarray, discovery: list[int], since: int) -> int:
    """Tell ``strategy`` a fetched page's links, the live crawler's way; return the
    fetches since the last recomputation (0: one just ran).

    New targets are announced (``discovered``, depth + 1, in link order) and queued,
    then ``fetched`` gets every target and its updates are applied; then, if
    ``wants_recompute``, a recomputation runs at once and its updates are applied.
    """
    child_depth = int(depth[page]) + 1
    for t in targets[depth[targets] < 0].tolist():
        depth[t] = child_depth
        frontier.add(t, len(discovery), strategy.discovered(t, child_depth))
        discovery.append(t)
    frontier.update(strategy.fetched(page, targets.tolist()))
    since += 1
    if strategy.wants_recompute(since, 0.0):
        frontier.update(strategy.recompute(strategy.snapshot()))
        return 0
    return since
_EMPTY, _WAITING, _READY, _BUSY = 0, 1, 2, 3  # host states (_HostFrontier)


@dataclass(frozen=True)
class HostReplay:
    """What :func:`replay_hosts` returns: the fields of a
    :class:`~webcrawl.analysis.ordering.virtual.VirtualCrawl` (``order`` in the order pages
    were taken) and each fetch's simulated start and end (seconds)."""

    order: np.ndarray
    priorities: np.ndarray
    depths: np.ndarray
    discovery: np.ndarray
    recomputations: int
    started: np.ndarray
    ended: np.ndarray


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
        #: the latest key pushed to ``ready`` for each host (older ones are stale)
        self.offered: list[tuple[float, ...] | None] = [None] * n_hosts
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

    def _offer(self, host: int, head: tuple[float, int, int]) -> None:
        """Push the host's current key unless it is the one already in ``ready``."""
        key = self._key(host, head)
        if key != self.offered[host]:
            self.offered[host] = key
            heapq.heappush(self.ready, key)

    def _enqueue(self, host: int, entry: tuple[float, int, int]) -> None:
        heapq.heappush(self.queues[host], entry)
        if self.state[host] == _READY:  # its key may have changed
            head = self._head(host)
            if head is not None:
                self._offer(host, head)
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

    def update(self, updates: Iterable[tuple[int, float]]) -> None:
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
            self._offer(host, head)

    def take(self) -> tuple[int, float] | None:
        """The best URL of the contactable host the rule picks (its host becomes busy)."""
        while self.ready:
            entry = heapq.heappop(self.ready)
            host = int(entry[-1])
            if self.state[host] != _READY or entry != self.offered[host]:
                continue  # a newer entry of the host is in the heap, or none is due
            self.offered[host] = None
            head = self._head(host)
            if head is None:
                self.state[host] = _EMPTY
                continue
            if self._key(host, head) != entry:
                self._offer(host, head)
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
    waits: np.ndarray,
    connections: int = 1,
    *,
    max_pages: int | None = None,
    never_taken: np.ndarray | None = None,
) -> HostReplay:
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
        Host (or site: ``graph.sites``) index of each node (0..H-1): the politeness
        and pending-count key.
    durations : ndarray of float
        Fetch time of each node, in seconds (>= 0).
    waits : ndarray of float
        How long each node's host waits after its fetch, in seconds.
    connections : int
        Requests in flight at once (one per host).
    max_pages : int, optional
        Take at most this many pages (those in flight then still end).
    never_taken : ndarray of bool, optional
        Nodes announced to the strategy but never fetched.

    Returns
    -------
    HostReplay

    Notes
    -----
    Cost: O((n + u) log(n + u)) heap work for u priority updates, one event per fetch;
    memory O(n + hosts).
    """
    hosts = np.asarray(hosts, dtype=np.int64)
    dur = np.asarray(durations, dtype=np.float64)
    if hosts.size != n or dur.size != n or len(waits) != n:
        raise ConfigError("hosts, durations and waits need one entry per node")
    if dur.size and not (np.isfinite(dur).all() and dur.min() >= 0):
        raise ConfigError("fetch durations must be finite and >= 0")
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
            since = learn_page(strategy, frontier, page, out_links(page), depth, discovery,
                               since)
            recomputations += since == 0
            schedule_due()
        while taken < limit and in_flight < connections:
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
    return HostReplay(order=order, priorities=priorities[:taken], depths=depth[order],
                      discovery=np.asarray(discovery, dtype=np.int64),
                      recomputations=recomputations, started=started[:taken],
                      ended=ended[:taken])
