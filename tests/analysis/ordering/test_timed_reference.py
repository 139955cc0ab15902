"""The timed replay against an independent event-driven simulation, written here from
the definitions (plain Python and heapq), on random small graphs and settings.

The definitions (:mod:`webcrawl.analysis.ordering.timed`): at most ``C`` fetches in
flight and at most one per site; after a fetch of ``t`` seconds its site waits
``min(max_delay, max(min_delay, factor * t))``; whenever a connection is free the
crawler takes, among the sites that may be contacted now, the site holding the
earliest-discovered pending URL (breadth-first) or the site with the most pending URLs,
ties to the earliest-discovered URL (larger-sites-first), and that site's
earliest-discovered URL; a page's links are known when its fetch ends, and fetches
ending at the same moment are read in the order they were taken, before anything new
is taken at that moment.  Each simulation is also checked against the lower bound no
schedule can beat: the largest site's chain of fetches and waits.
"""

from __future__ import annotations

import heapq

import numpy as np
import pytest
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.timed import SimulatedPoliteness, timed_crawl


def reference_schedule(out: list[list[int]], sites: list[int], seeds: list[int],
                       durations: list[float], waits: list[float], connections: int,
                       rule: str) -> tuple[list[int], list[float], list[float]]:
    """(order, start times, end times) of a crawl by the definitions above."""
    rank: dict[int, int] = {}
    for s in seeds:
        rank.setdefault(s, len(rank))
    pending = set(rank)
    ready_at: dict[int, float] = {}
    busy: set[int] = set()
    flight: list[tuple[float, int, int]] = []  # (end, take index, page)
    order: list[int] = []
    start: list[float] = []
    end: list[float] = []
    now = 0.0
    while True:
        while flight and flight[0][0] <= now:
            ended, _, page = heapq.heappop(flight)
            busy.discard(sites[page])
            ready_at[sites[page]] = ended + waits[page]
            for target in out[page]:
                if target not in rank:
                    rank[target] = len(rank)
                    pending.add(target)
        while len(flight) < connections:
            by_site: dict[int, list[int]] = {}
            for url in pending:
                by_site.setdefault(sites[url], []).append(url)
            open_sites = {s: urls for s, urls in by_site.items()
                          if s not in busy and ready_at.get(s, 0.0) <= now}
            if not open_sites:
                break
            if rule == "bfs":
                site = min(open_sites, key=lambda s: min(rank[u] for u in open_sites[s]))
            else:
                site = min(open_sites, key=lambda s: (-len(open_sites[s]),
                                                      min(rank[u] for u in open_sites[s])))
            url = min(open_sites[site], key=rank.__getitem__)
            pending.discard(url)
            busy.add(site)
            heapq.heappush(flight, (now + durations[url], len(order), url))
            order.append(url)
            start.append(now)
            end.append(now + durations[url])
        if not flight and not pending:
            return order, start, end
        wakes = [ready_at[sites[u]] for u in pending
                 if sites[u] not in busy and ready_at.get(sites[u], 0.0) > now]
        now = min([*(f[0] for f in flight), *wakes])


def chain_bound(sites: np.ndarray, durations: np.ndarray, waits: np.ndarray,
                order: np.ndarray) -> float:
    """The longest site chain: its fetches one after another with a wait between two
    (the last fetch's wait is not needed), over the pages the crawl took."""
    best = 0.0
    for site in np.unique(sites[order]):
        mine = order[sites[order] == site]
        best = max(best, float(durations[mine].sum() + waits[mine].sum() - waits[mine].max()))
    return best


def _case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 40))
    m = int(rng.integers(n, 4 * n))
    src = np.concatenate([rng.integers(0, n, m), np.arange(n - 1)])
    dst = np.concatenate([rng.integers(0, n, m), rng.permutation(np.arange(1, n))])
    sites = rng.integers(0, int(rng.integers(1, 7)), n)
    graph = CapturedGraph.from_edges(src, dst, n, hosts=sites)
    # odd seeds: fetch times on a coarse grid, so many events are simultaneous
    durations = rng.integers(1, 4, n) * 0.5 if seed % 2 else rng.random(n) * 2.0
    polite = SimulatedPoliteness(int(rng.integers(1, 5)),
                                 min_delay=float(rng.choice([0.0, 0.5, 1.0])),
                                 delay_factor=float(rng.choice([0.0, 1.0, 3.0])),
                                 max_delay=float(rng.choice([1.5, 5.0, np.inf])))
    return graph, durations, polite


@pytest.mark.parametrize("rule", ["bfs", "larger-sites-first"])
@pytest.mark.parametrize("seed", range(24))
def test_timed_replay_matches_an_event_simulation_from_the_definitions(seed, rule):
    graph, durations, polite = _case(seed)
    crawl = timed_crawl(graph, rule, polite, durations)
    adj = graph.adjacency
    # a page's links: its distinct targets in node-index order
    out = [sorted(set(adj.indices[adj.indptr[v]:adj.indptr[v + 1]].tolist()))
           for v in range(graph.n)]
    assert graph.fetchable.all()
    waits = polite.waits(durations)
    order, start, end = reference_schedule(
        out, graph.sites.tolist(), graph.seeds.tolist(), durations.tolist(), waits.tolist(),
        polite.connections, rule)
    assert crawl.order.tolist() == order
    assert crawl.started.tolist() == pytest.approx(start, abs=1e-9)
    assert crawl.ended.tolist() == pytest.approx(end, abs=1e-9)
    assert crawl.duration >= chain_bound(graph.sites, durations, waits, crawl.order) - 1e-9


def test_the_chain_bound_is_reached_when_one_site_holds_every_page():
    # one site: the crawl is exactly the chain of fetches and (equal) waits
    graph = CapturedGraph.from_edges([0, 0, 1], [1, 2, 3], 4, hosts=[0, 0, 0, 0])
    durations = np.array([1.0, 2.0, 0.5, 1.0])
    polite = SimulatedPoliteness(3, min_delay=1.0)
    crawl = timed_crawl(graph, "bfs", polite, durations)
    waits = polite.waits(durations)
    assert crawl.duration == pytest.approx(7.5)
    assert chain_bound(graph.sites, durations, waits, crawl.order) == pytest.approx(7.5)
