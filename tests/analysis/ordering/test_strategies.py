"""Unit tests of each crawl ordering's priorities, on hand-made graphs.

``_drive`` is a tiny pure-Python reference frontier (a dict and ``max``), independent
of ``webcrawl.analysis.ordering.virtual``'s heap, so these tests pin the strategies' own semantics.
"""

from __future__ import annotations

from collections import Counter

import networkx as nx
import numpy as np
import pytest
from scipy import stats
from webcrawl.analysis.ordering.strategies import (
    BacklinkCount,
    DepthFirst,
    OnlinePageImportance,
    PageRankOrder,
    PageRankOrderSettings,
    RandomOrder,
    Strategy,
    available_strategies,
    get_strategy,
)
from webcrawl.storage.errors import ConfigError

# 0 -> 1, 2; 1 -> 3, 4; 2 -> 5, 6; 3 -> 7 : a binary tree of three levels and a tail.
TREE = {0: [1, 2], 1: [3, 4], 2: [5, 6], 3: [7]}


def _drive(strategy: Strategy, links: dict[int, list[int]], seeds: list[int]) -> list[int]:
    """Reference crawl: highest priority first, ties to the first discovered."""
    prio: dict[int, float] = {}
    seq: dict[int, int] = {}
    order: list[int] = []
    since = 0

    def discover(node: int, depth: int) -> None:
        seq[node] = len(seq)
        prio[node] = strategy.discovered(node, depth)

    def apply(updates: object) -> None:
        for node, value in updates:  # type: ignore[attr-defined]
            if node in prio:
                prio[node] = value

    depth = dict.fromkeys(seeds, 0)
    for s in seeds:
        discover(s, 0)
    while prio:
        page = max(prio, key=lambda u: (prio[u], -seq[u]))
        del prio[page]
        order.append(page)
        out = list(dict.fromkeys(links.get(page, [])))
        for t in out:
            if t not in seq:
                depth[t] = depth[page] + 1
                discover(t, depth[t])
        apply(strategy.fetched(page, out))
        since += 1
        if strategy.wants_recompute(since, 0.0):
            apply(strategy.recompute(strategy.snapshot()))
            since = 0
    return order


def test_builtins_registered() -> None:
    assert {"bfs", "dfs", "random", "backlink", "pagerank", "opic"} <= set(available_strategies())
    assert get_strategy("dfs") is DepthFirst


def test_unknown_strategy_lists_known_names() -> None:
    with pytest.raises(ConfigError, match=r"known: .*bfs"):
        get_strategy("nope")


def test_bfs_goes_level_by_level() -> None:
    order = _drive(get_strategy("bfs")(), TREE, [0])
    assert order == [0, 1, 2, 3, 4, 5, 6, 7]


def test_dfs_goes_deep_last_discovered_first() -> None:
    order = _drive(DepthFirst(), TREE, [0])
    # A stack pushing each page's links in document order pops the last one first.
    assert order == [0, 2, 6, 5, 1, 4, 3, 7]


def test_dfs_reaches_the_end_of_a_chain_before_a_sibling() -> None:
    links = {0: [1, 2], 2: [3], 3: [4], 4: [5]}
    order = _drive(DepthFirst(), links, [0])
    assert order.index(5) < order.index(1)


def test_dfs_priorities_are_discovery_counts() -> None:
    s = DepthFirst()
    assert [s.discovered(u, 0) for u in (7, 3, 9)] == [0.0, 1.0, 2.0]


def test_backlink_counts_distinct_fetched_in_links() -> None:
    s = BacklinkCount()
    for u in range(5):
        assert s.discovered(u, 1) == 0.0
    assert sorted(s.fetched(0, [1, 2, 3])) == [(1, 1.0), (2, 1.0), (3, 1.0)]
    # A duplicate link counts once; the fetched page 0 gets no update.
    assert sorted(s.fetched(1, [3, 3, 0, 4])) == [(3, 2.0), (4, 1.0)]
    assert s.inlinks(0) == 1 and s.inlinks(3) == 2


def test_backlink_picks_the_page_with_most_known_in_links() -> None:
    links = {0: [1, 2, 3], 1: [4, 9], 2: [9]}
    order = _drive(BacklinkCount(), links, [0])
    # After 0, 1 and 2: 9 has two known in-links, 3 and 4 one each (found earlier).
    assert order == [0, 1, 2, 9, 3, 4]


def test_opic_cash_arithmetic() -> None:
    s = OnlinePageImportance()
    s.discovered(0, 0)
    assert s.cash(0) == 1.0
    for u in (1, 2, 3):
        s.discovered(u, 1)
    updates = dict(s.fetched(0, [1, 2, 3]))
    assert s.history(0) == 1.0 and s.cash(0) == 0.0
    assert [s.cash(u) for u in (1, 2, 3)] == pytest.approx([1 / 3] * 3)
    assert updates.keys() == {1, 2, 3}
    s.discovered(4, 2)
    s.fetched(1, [2, 4])  # 1/3 split in two
    assert s.cash(2) == pytest.approx(1 / 3 + 1 / 6)
    assert s.cash(4) == pytest.approx(1 / 6)
    assert s.history(1) == pytest.approx(1 / 3)
    # Dangling page 4: its 1/6 goes to the virtual page, split over the frontier {2, 3}.
    assert s.fetched(4, []) == []
    assert s.cash(2) == pytest.approx(1 / 2 + 1 / 12)
    assert s.cash(3) == pytest.approx(1 / 3 + 1 / 12)
    # A share sent to a fetched page (0) goes to the virtual page too: 2 has 7/12,
    # half to 3, half (via the virtual page) to the only frontier page, 3.
    s.fetched(2, [3, 0])
    assert s.cash(3) == pytest.approx(1.0)
    assert s.distributed == pytest.approx(1 + 1 / 3 + 1 / 6 + 7 / 12)
    assert s.importance(0) == pytest.approx(1.0 / (s.distributed + 1.0))


def test_opic_priority_orders_like_cash_and_conserves_it() -> None:
    rng = np.random.default_rng(5)
    s = OnlinePageImportance()
    frontier: dict[int, float] = {0: s.discovered(0, 0)}
    known, fetched, next_id = {0}, set(), 1
    for _ in range(60):
        page = max(frontier, key=lambda u: (frontier[u], -u))
        del frontier[page]
        fetched.add(page)
        out = [int(x) for x in rng.integers(0, next_id + 3, rng.integers(0, 4))]
        out = list(dict.fromkeys(out))
        for t in out:
            if t not in known:
                known.add(t)
                next_id = max(next_id, t + 1)
                frontier[t] = s.discovered(t, 1)
        for u, v in s.fetched(page, out):
            frontier[u] = v
        if not frontier:
            break
        cash = {u: s.cash(u) for u in frontier}
        # Priority = cash minus a common offset: same order, same differences.
        diffs = {round(cash[u] - frontier[u], 9) for u in frontier}
        assert len(diffs) == 1
        assert sum(cash.values()) == pytest.approx(1.0)


def test_random_is_reproducible_and_seed_dependent() -> None:
    def draws(seed: int) -> list[float]:
        s = RandomOrder(seed=seed)
        return [s.discovered(u, 0) for u in range(5)]

    a, b, c = draws(3), draws(3), draws(4)
    assert a == b and a != c
    s = RandomOrder(seed=3)
    first = [s.discovered(u, 0) for u in range(5000)]
    assert first[:5] == a  # block draws continue the same stream
    assert len(set(first)) == 5000


def test_random_picks_uniformly_among_the_frontier() -> None:
    star = {0: [1, 2, 3, 4, 5]}
    firsts = Counter(_drive(RandomOrder(seed=s), star, [0])[1] for s in range(3000))
    assert set(firsts) == {1, 2, 3, 4, 5}
    counts = [firsts[k] for k in (1, 2, 3, 4, 5)]
    assert stats.chisquare(counts).pvalue > 1e-3


def test_pagerank_default_priorities_between_recomputations() -> None:
    settings = PageRankOrderSettings(every_fetches=1000)
    s = PageRankOrder(settings=settings)
    assert s.discovered(0, 0) == pytest.approx(0.15)
    s.discovered(1, 1)
    s.discovered(2, 1)
    updates = dict(s.fetched(0, [1, 2]))
    # One push of the seed's estimate along its two new links.
    assert updates == pytest.approx({1: 0.15 + 0.85 * 0.15 / 2, 2: 0.15 + 0.85 * 0.15 / 2})
    assert not s.wants_recompute(999, 1.0)
    assert s.wants_recompute(1000, 0.0)
    assert s.wants_recompute(1, settings.every_seconds)
    assert not s.wants_recompute(0, 1e9)


def test_pagerank_recompute_matches_networkx_on_the_known_graph() -> None:
    s = PageRankOrder(settings=PageRankOrderSettings(tol=1e-12))
    links = {10: [11, 12, 13], 11: [12, 14]}
    for u in (10, 11, 12, 13, 14):
        s.discovered(u, 0)
    s.fetched(10, links[10])
    s.fetched(11, links[11])
    updates = dict(s.recompute(s.snapshot()))
    g = nx.DiGraph([(a, b) for a, out in links.items() for b in out])
    expected = nx.pagerank(g, alpha=0.85, tol=1e-14)
    assert updates.keys() == {12, 13, 14}  # the unfetched ones
    for u, value in updates.items():
        assert value == pytest.approx(expected[u] * 5, rel=1e-6)
    # Absorbed at the next fetch: estimates continue from the PageRank.
    s.fetched(12, [])
    assert s.priority(13) == pytest.approx(expected[13] * 5, rel=1e-6)
    assert s.recomputations == 1


def test_pagerank_order_after_recomputation() -> None:
    # After 0 and 1 are fetched, 3 has in-links from both and outranks 2.
    links = {0: [1, 2, 3], 1: [3]}
    settings = PageRankOrderSettings(every_fetches=1, tol=1e-12)
    assert _drive(PageRankOrder(settings=settings), links, [0]) == [0, 1, 3, 2]


def test_pagerank_recomputed_every_fetch_takes_the_networkx_argmax() -> None:
    rng = np.random.default_rng(11)
    links = {
        u: sorted({int(v) for v in rng.integers(0, 40, rng.integers(0, 5))}) for u in range(40)
    }
    settings = PageRankOrderSettings(every_fetches=1, tol=1e-13)
    order = _drive(PageRankOrder(settings=settings), links, [0])
    # Oracle: before each take (after the first), the taken page has the highest
    # networkx PageRank of the known graph among the frontier (ties: discovered first).
    known = [0]
    for i, page in enumerate(order[:-1]):
        for t in links[page]:
            if t not in known:
                known.append(t)
        fetched = set(order[: i + 1])
        g = nx.DiGraph()
        g.add_nodes_from(known)
        g.add_edges_from((u, v) for u in fetched for v in links[u])
        pr = nx.pagerank(g, alpha=0.85, tol=1e-15, max_iter=1000)
        frontier = [u for u in known if u not in fetched]
        best = max(frontier, key=lambda u: (round(pr[u], 9), -known.index(u)))
        assert order[i + 1] == best


@pytest.mark.parametrize(
    "kwargs",
    [{"every_fetches": 0}, {"every_seconds": 0.0}, {"alpha": 1.0}, {"tol": 0.0}, {"max_iter": 0}],
    ids=["fetches", "seconds", "alpha", "tol", "max_iter"],
)
def test_pagerank_settings_validate(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        PageRankOrderSettings(**kwargs)  # type: ignore[arg-type]


def test_strategy_memory_is_flat_arrays() -> None:
    # 1M URL ids cost a few bytes each in every strategy (arrays, not dicts).
    n = 1_000_000
    s = BacklinkCount()
    s.discovered(n - 1, 1)
    assert s._inlinks.data.nbytes + s._fetched.data.nbytes < 16 * n
    p = PageRankOrder()
    for u in range(0, n, 1000):
        p.discovered(u, 1)
    assert p._local.data.nbytes < 8 * n


def test_pagerank_recomputes_on_growth_for_large_crawls() -> None:
    from webcrawl.analysis.ordering.strategies.pagerank import PageRankOrder, PageRankOrderSettings

    s = PageRankOrder(settings=PageRankOrderSettings(every_fetches=100, every_growth=0.1))
    s.discovered(0, 0)
    for page in range(5000):  # a chain: page i links to i + 1
        s.discovered(page + 1, page + 1)
        s.fetched(page, [page + 1])
    # 5000 fetched: max(100, 0.1 * 5000) = 500 fetches between recomputations.
    assert not s.wants_recompute(499, 0.0)
    assert s.wants_recompute(500, 0.0)
    small = PageRankOrder(settings=PageRankOrderSettings(every_fetches=100, every_growth=0.1))
    small.discovered(0, 0)
    small.discovered(1, 1)
    small.fetched(0, [1])
    assert small.wants_recompute(100, 0.0) and not small.wants_recompute(99, 0.0)


@pytest.mark.parametrize("name", ["bfs", "dfs", "random", "backlink", "opic", "pagerank",
                                  "batch-pagerank", "partial-pagerank",
                                  "larger-sites-first"])
@pytest.mark.parametrize("ids_in_order", [True, False], ids=["live", "virtual"])
def test_discovered_many_is_discovered_one_at_a_time(name: str, ids_in_order: bool) -> None:
    """Pages of new ids announced at once give the priorities and leave the state that
    announcing them one by one does (checked through later fetches' updates), whether
    ids come in order (a live crawl) or not (a virtual crawl's node indices)."""
    rng = np.random.default_rng(8)
    ids = np.arange(3000) if ids_in_order else rng.permutation(3000)
    pages = np.split(ids, np.sort(rng.choice(np.arange(1, 3000), 120, replace=False)))
    one, many = get_strategy(name)(seed=3), get_strategy(name)(seed=3)
    known: list[int] = []
    for depth, page in enumerate(pages):
        depth %= 3  # seeds (depth 0) too
        want = [one.discovered(int(u), depth) for u in page]
        assert many.discovered_many(page, depth).tolist() == want
        known += page.tolist()
        src = known[int(rng.integers(len(known)))]
        links = rng.choice(known, size=min(len(known), 5), replace=False).tolist()
        assert list(one.fetched(src, links)) == list(many.fetched(src, links))
