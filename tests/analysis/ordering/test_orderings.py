"""The orderings of Baeza-Yates et al.: specs, batch and partial PageRank, larger-sites-first,
the omniscient and historical oracles, and the ideal ceiling."""

from __future__ import annotations

import numpy as np
import pytest
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.pagerank_alg import pagerank
from webcrawl.analysis.ordering.compare import (
    IDEAL,
    CompareSettings,
    virtual_comparison,
)
from webcrawl.analysis.ordering.quality import (
    QualitySettings,
    final_pagerank,
    ideal_order,
    pagerank_capture,
)
from webcrawl.analysis.ordering.strategies import (
    BatchPageRank,
    PageRankOrder,
    StrategyContext,
    get_strategy,
    parse_spec,
    strategy_spec,
)
from webcrawl.analysis.ordering.strategies.oracles import HistoricalPageRank
from webcrawl.analysis.ordering.virtual import virtual_crawl
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb
from webcrawl.storage.errors import ConfigError

CEILINGS = ["bfs", "larger-sites-first", "opic", "batch-pagerank?every=50",
            "partial-pagerank?every=50", "pagerank", "backlink", "omniscient"]

# -- specs -----------------------------------------------------------------------------


def test_spec_is_canonical_and_names_the_configured_class(tmp_path):
    assert strategy_spec("batch-pagerank", {"every": "0500"}) == "batch-pagerank?every=500"
    assert strategy_spec("batch-pagerank", {"every": "1000"}) == "batch-pagerank"  # default
    assert strategy_spec("pagerank?alpha=0.9", {"every": "30"}) == "pagerank?alpha=0.9&every=30"
    cls = get_strategy("batch-pagerank?every=0500")
    assert cls is get_strategy("batch-pagerank?every=500")  # one class per canonical spec
    assert issubclass(cls, BatchPageRank) and cls.name == "batch-pagerank?every=500"
    instance = cls(seed=3)
    assert instance.name == "batch-pagerank?every=500" and instance.seed == 3
    assert instance.settings.every_fetches == 500 and not instance.settings.push
    assert get_strategy("batch-pagerank") is BatchPageRank
    assert parse_spec("historical?history=/a%20b.db") == ("historical", {"history": "/a b.db"})
    odd = tmp_path / "a&b?=%.db"
    odd.touch()
    assert parse_spec(strategy_spec("historical", {"history": str(odd)}))[1] == {
        "history": str(odd)}


@pytest.mark.parametrize(("spec", "match"), [
    ("batch-pagerank?evry=5", "has no option 'evry'"),
    ("batch-pagerank?every=five", "int expected"),
    ("batch-pagerank?every", "KEY=VALUE"),
    ("bfs?every=5", "its options: none"),
    ("nope?every=5", "unknown strategy"),
    ("batch-pagerank?every=0", "every_fetches must be >= 1"),
], ids=["unknown-option", "bad-type", "no-value", "no-options", "unknown-name", "bad-value"])
def test_bad_specs_are_one_line_errors(spec, match):
    with pytest.raises(ConfigError, match=match):
        get_strategy(spec)(seed=0)


# -- batch and partial PageRank ------------------------------------------------------------


def _chain_with_leaves(n: int) -> CapturedGraph:
    """0 -> 1 -> ... -> n-1, and every page also links to 0."""
    src = [*range(n - 1), *range(1, n)]
    dst = [*range(1, n), *[0] * (n - 1)]
    return CapturedGraph.from_edges(src, dst, n)


@pytest.mark.parametrize("every", [1, 3, 7])
def test_batch_pagerank_recomputes_every_k_fetches_exactly(every):
    graph = _chain_with_leaves(30)
    crawl = virtual_crawl(graph, f"batch-pagerank?every={every}")
    assert crawl.fetched == 30
    assert crawl.recomputations == 30 // every


def test_batch_pagerank_leaves_new_urls_at_the_teleport_share_partial_pushes():
    # 0 links to 1, 2, 3; 1 links to 3: before any recomputation batch-pagerank sees
    # every new URL at 1 - alpha (ties: discovery order), partial-pagerank pushes.
    graph = CapturedGraph.from_edges([0, 0, 0, 1], [1, 2, 3, 3], 4)
    batch = virtual_crawl(graph, "batch-pagerank?every=100")
    assert batch.order.tolist() == [0, 1, 2, 3]
    assert batch.priorities.tolist() == pytest.approx([0.15] * 4)
    partial = virtual_crawl(graph, "partial-pagerank?every=100")
    assert partial.order.tolist() == [0, 1, 3, 2]  # 3 got pushes from 0 and 1
    assert partial.recomputations == 0


def test_partial_pagerank_recomputes_the_known_graphs_pagerank():
    # After a recomputation the frontier holds the known graph's PageRank (frontier
    # URLs dangling), checked against an independent PageRank of that graph.
    graph = CapturedGraph.from_edges([0, 0, 0, 1, 2], [1, 2, 3, 4, 4], 5)
    s = get_strategy("partial-pagerank?every=1")(seed=0)
    s.bind(StrategyContext())
    for node in range(4):
        s.discovered(node, 0 if node == 0 else 1)
    list(s.fetched(0, [1, 2, 3]))
    updates = dict(s.recompute(s.snapshot()))
    known = CapturedGraph.from_edges([0, 0, 0], [1, 2, 3], 4).adjacency
    truth = pagerank(known, 0.85, tol=1e-12, normalize="mean").scores
    assert [updates[i] for i in (1, 2, 3)] == pytest.approx(truth[1:].tolist(), abs=1e-4)
    assert virtual_crawl(graph, "partial-pagerank?every=1").fetched == 5


def test_pagerank_first_recompute_comes_early():
    # The default schedule recomputes within the first pages of a small crawl.
    s = PageRankOrder()
    assert s.wants_recompute(s.settings.every_fetches, 0.0)
    assert s.settings.every_fetches <= 50


# -- larger-sites-first --------------------------------------------------------------------


def test_larger_sites_first_takes_the_host_with_most_pending_urls():
    # Seed 0 (host 0) links to 1 (host 1) and to 2, 3, 4 (host 2); 1 links to 5, 6, 7, 8
    # (host 1).  After 0, host 2 has 3 pending, host 1 one: 2, then 3 (2 against 1);
    # then 1 pending each: the tie goes to the host holding the URL discovered first
    # (1).  Host 1 then holds 5..8 (4 against 1): 5, 6, 7; at 1 against 1 again, 4
    # (discovered before 8), then 8.
    hosts = [0, 1, 2, 2, 2, 1, 1, 1, 1]
    graph = CapturedGraph.from_edges([0, 0, 0, 0, 1, 1, 1, 1], [1, 2, 3, 4, 5, 6, 7, 8],
                                     9, hosts=hosts)
    assert virtual_crawl(graph, "bfs").order.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert virtual_crawl(graph, "larger-sites-first").order.tolist() == [
        0, 2, 3, 1, 5, 6, 7, 4, 8]


def test_larger_sites_first_counts_only_fetchable_urls_and_breaks_ties_by_discovery():
    # Host 1 holds 1 and 2, host 2 holds 3 and 4, but 4 was never answered (not
    # fetchable): host 1 has more pending pages.  Equal counts: first discovered first.
    hosts = [0, 1, 1, 2, 2]
    fetchable = [True, True, True, True, False]
    graph = CapturedGraph.from_edges([0, 0, 0, 0], [3, 4, 1, 2], 5, hosts=hosts,
                                     fetchable=fetchable)
    assert virtual_crawl(graph, "larger-sites-first").order.tolist() == [0, 1, 2, 3]
    tie = CapturedGraph.from_edges([0, 0], [2, 1], 3, hosts=[0, 1, 2])
    assert virtual_crawl(tie, "larger-sites-first").order.tolist() == [0, 1, 2]


# -- oracles and the ideal ceiling ---------------------------------------------------------


def _star_of_chains() -> CapturedGraph:
    """Seed 0 links to ten chains; only the last chain leads to a page every page links to."""
    src, dst = [], []
    node = 1
    heads = []
    for _chain in range(10):
        heads.append(node)
        src.append(0)
        dst.append(node)
        for _ in range(4):
            src.append(node)
            dst.append(node + 1)
            node += 1
        node += 1
    hub = node
    src.append(node - 1)
    dst.append(hub)
    for page in range(hub):
        src.append(page)
        dst.append(hub)
    src.append(hub)
    dst.append(0)
    # the hub is only reachable at the end of the last chain for a crawler: every page
    # links to it, so it is discovered at once, but only the omniscient ordering knows
    # it holds most of the PageRank.
    return CapturedGraph.from_edges(src, dst, hub + 1)


def _captures(graph: CapturedGraph, specs: list[str]) -> dict[str, np.ndarray]:
    scores = final_pagerank(graph)
    out = {name: pagerank_capture(virtual_crawl(graph, name, final_scores=scores).order,
                                  scores) for name in specs}
    out[IDEAL] = pagerank_capture(ideal_order(scores), scores)
    return out


def _zipf_fixture() -> CapturedGraph:
    web = FixtureWeb.build(FixtureConfig(model="zipf", pages=3000, hosts=20, seed=0))
    return CapturedGraph.from_edges(web.src, web.dst, web.pages, hosts=web.host_of, seeds=[0])


@pytest.mark.parametrize("make", [_star_of_chains, _zipf_fixture], ids=["hand-made", "fixture"])
def test_every_ordering_lies_at_or_below_ideal_and_omniscient_beats_bfs(make):
    graph = make()
    captures = _captures(graph, CEILINGS)
    ideal = captures[IDEAL]
    for name in CEILINGS:
        curve = captures[name]
        assert np.all(curve <= ideal[: curve.size] + 1e-12), name
    k = max(1, round(0.1 * graph.n))
    assert captures["omniscient"][k] > captures["bfs"][k]


def test_ideal_curve_is_the_top_k_sum():
    scores = np.array([0.1, 0.4, 0.2, 0.3])
    capture = pagerank_capture(ideal_order(scores), scores)
    for k in range(5):
        assert capture[k] == pytest.approx(np.sort(scores)[::-1][:k].sum())


def test_omniscient_needs_the_final_pagerank():
    graph = _star_of_chains()
    with pytest.raises(ConfigError, match="virtual crawls only"):
        virtual_crawl(graph, "omniscient")


def test_comparison_adds_ideal_and_checks_it_bounds_every_curve():
    graph = _zipf_fixture()
    comparison = virtual_comparison(graph, ["bfs", "omniscient", "larger-sites-first"],
                                    settings=CompareSettings(
                                        quality=QualitySettings(checkpoints=0)))
    reports = comparison.reports
    assert list(reports) == ["recorded", IDEAL, "bfs", "omniscient", "larger-sites-first"]
    ideal = reports[IDEAL].capture
    for name, report in reports.items():
        assert np.all(report.capture <= ideal[: report.capture.size] + 1e-12), name
    assert (reports["omniscient"].summary["captured_at_10pct"]
            > reports["bfs"].summary["captured_at_10pct"])


def test_historical_ranks_by_the_previous_crawls_pagerank(monkeypatch, tmp_path):
    # The previous crawl knew pages a, b, c with PageRank c > b > a; d is new.
    previous = {"http://s.test/a": 0.5, "http://s.test/b": 1.0, "http://s.test/c": 2.0}
    monkeypatch.setattr("webcrawl.analysis.ordering.strategies.oracles.history_scores",
                        lambda db: previous)
    urls = ["http://s.test/", "http://s.test/a", "http://s.test/b", "http://s.test/c",
            "http://s.test/d"]
    graph = CapturedGraph.from_edges([0, 0, 0, 0], [1, 2, 3, 4], 5, urls=urls)
    (tmp_path / "prev.db").touch()  # history_scores is replaced: any file will do
    crawl = virtual_crawl(graph, get_strategy(f"historical?history={tmp_path}/prev.db")(seed=0))
    assert crawl.order.tolist() == [0, 3, 2, 1, 4]
    assert crawl.priorities[-1] == pytest.approx(HistoricalPageRank.OPTIONS["prior"].default)


def test_historical_needs_a_previous_crawl(tmp_path):
    with pytest.raises(ConfigError, match="needs a previous crawl"):
        get_strategy("historical")(seed=0)
    with pytest.raises(ConfigError, match="no previous crawl database"):
        get_strategy(strategy_spec("historical", {"history": str(tmp_path / "x.db")}))(seed=0)
