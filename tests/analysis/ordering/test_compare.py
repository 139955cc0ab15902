"""Comparing crawl orderings: the literature's findings on the fixture web, plots, JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
import webcrawl.analysis.graph.loader
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.compare import (
    IDEAL,
    RECORDED,
    CompareSettings,
    Comparison,
    compare_crawl,
    compare_orders,
    virtual_orders,
)
from webcrawl.analysis.ordering.quality import QualitySettings, final_pagerank, pagerank_capture
from webcrawl.analysis.report.comparison_files import write_comparison
from webcrawl.analysis.report.plots import METRIC_TITLES, png_bytes, quality_figures
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb
from webcrawl.storage.errors import ConfigError

STRATEGIES = ["bfs", "dfs", "random", "backlink", "pagerank", "opic"]


@pytest.fixture(scope="module")
def zipf_comparison():
    """Virtual crawls of every strategy over a 4000-page zipf fixture web (seed 0)."""
    web = FixtureWeb.build(FixtureConfig(model="zipf", pages=4000, hosts=20, seed=0))
    graph = CapturedGraph.from_edges(web.src, web.dst, web.pages, hosts=web.host_of,
                                     seeds=[0])
    orders = virtual_orders(graph, STRATEGIES, seed=0)
    return compare_orders(graph, orders, settings=QualitySettings(checkpoints=3))


def capture_area(report) -> float:
    """Mean PageRank fraction captured over the whole crawl (area under the curve)."""
    return float(report.capture[1:].mean())


def test_literature_ordering_on_zipf_fixture(zipf_comparison):
    # Najork and Wiener; Bennouas and de Montgolfier: breadth-first, backlink and
    # PageRank orderings capture PageRank much faster than random; depth-first is worst.
    r = zipf_comparison
    rnd = r["random"].summary
    for good in ("bfs", "backlink", "pagerank"):
        s = r[good].summary
        assert s["captured_at_10pct"] > 1.5 * rnd["captured_at_10pct"], good
        assert s["top100_found_by_10pct"] > 1.5 * rnd["top100_found_by_10pct"], good
        assert capture_area(r[good]) > capture_area(r["random"]) + 0.05, good
    for other in set(STRATEGIES) - {"dfs"}:
        assert r["dfs"].summary["captured_at_10pct"] < r[other].summary["captured_at_10pct"]
        assert capture_area(r["dfs"]) < capture_area(r[other]), other


def test_breadth_first_fetches_its_best_pages_first(zipf_comparison):
    # Najork and Wiener, figure 1: average PageRank per slice falls from the start.
    mean = zipf_comparison["bfs"].mean_pagerank
    assert mean[0] > 2 * mean[-1]
    assert mean[0] == mean.max()


def test_compare_orders_share_the_final_pagerank():
    g = CapturedGraph.from_edges([0, 0, 1, 2, 3], [1, 2, 3, 3, 0], 4)
    reports = compare_orders(g, {"a": [0, 1, 2, 3], "b": [0, 2, 3, 1]},
                             settings=QualitySettings(slices=2, checkpoints=2))
    scores = final_pagerank(g)
    assert list(reports) == ["a", "b"]
    for label, order in (("a", [0, 1, 2, 3]), ("b", [0, 2, 3, 1])):
        np.testing.assert_allclose(reports[label].capture,
                                   pagerank_capture(np.array(order), scores))


def fake_db(monkeypatch, graphs):
    """Make ``load_graph(path)`` return ``graphs[path.name]`` (no database needed)."""
    monkeypatch.setattr(webcrawl.analysis.graph.loader, "load_graph",
                        lambda path, **kw: graphs[path.name])


def small_graph(order):
    return CapturedGraph.from_edges([0, 0, 1, 1, 2, 3], [1, 2, 3, 4, 4, 0], 5,
                                    fetch_order=order)


def test_compare_crawl_virtual_adds_the_recorded_order(monkeypatch, tmp_path):
    fake_db(monkeypatch, {"a.db": small_graph([0, 2, 1, 4, 3])})
    result = compare_crawl(tmp_path / "a.db", ["bfs", "dfs"],
                           settings=CompareSettings(quality=QualitySettings(slices=5)))
    assert list(result.reports) == [RECORDED, IDEAL, "bfs", "dfs"]
    assert "virtual" in result.method
    assert result.reports["bfs"].pages == 5
    headers, rows = result.summary_table()
    assert headers[:3] == ["strategy", "pages", "PR@1%"]
    # The orderings a crawler can run, then the ceiling, labelled as one.
    assert [row[0] for row in rows] == [RECORDED, "bfs", "dfs", "ideal (ceiling)"]


def test_compare_crawl_recorded_scores_each_database(monkeypatch, tmp_path):
    fake_db(monkeypatch, {"b.db": small_graph([0, 1, 2, 3, 4]),
                          "d.db": small_graph([0, 2, 4, 1, 3])})
    result = compare_crawl([tmp_path / "b.db", tmp_path / "d.db"], ["bfs", "dfs"],
                           settings=CompareSettings(virtual=False))
    assert list(result.reports) == ["bfs", "dfs"]
    assert set(result.graphs) == {"b.db", "d.db"}
    scores = final_pagerank(small_graph([0]))
    np.testing.assert_allclose(result.reports["dfs"].capture,
                               pagerank_capture(np.array([0, 2, 4, 1, 3]), scores))


@pytest.mark.parametrize(("dbs", "strategies", "virtual", "match"), [
    (["a.db"], ["bfs", "nosuch"], True, "unknown strategy 'nosuch'"),
    (["a.db"], [" ", ""], True, "no strategy"),
    (["a.db", "b.db"], ["bfs"], True, "ONE crawl database"),
    (["a.db"], ["bfs", "dfs"], False, "one --db per strategy"),
], ids=["unknown", "empty", "virtual-two-dbs", "recorded-too-few-dbs"])
def test_compare_crawl_errors(monkeypatch, tmp_path, dbs, strategies, virtual, match):
    fake_db(monkeypatch, {"a.db": small_graph([0]), "b.db": small_graph([0])})
    with pytest.raises(ConfigError, match=match):
        compare_crawl([tmp_path / d for d in dbs], strategies,
                      settings=CompareSettings(virtual=virtual))


def test_figures_have_labelled_axes_and_one_curve_per_strategy(zipf_comparison):
    figures = quality_figures(zipf_comparison)
    assert set(figures) == set(METRIC_TITLES)
    for key, fig in figures.items():
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert axes, key
        for ax in axes:
            assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title(), key
            labels = [line.get_label() for line in ax.get_lines()]
            assert labels == STRATEGIES, (key, ax.get_title())
    assert figures["pagerank_capture"].axes[0].get_xscale() == "log"
    assert figures["mean_pagerank"].axes[0].get_yscale() == "log"
    assert png_bytes(figures["sink_fraction"]).startswith(b"\x89PNG\r\n\x1a\n")


def test_write_comparison_writes_pngs_and_json(zipf_comparison, tmp_path):
    comparison = Comparison(dict(zipf_comparison), "virtual crawls (test)")
    written = write_comparison(comparison, tmp_path / "out")
    names = sorted(p.name for p in written)
    assert names == sorted([f"{k}.png" for k in METRIC_TITLES] + ["comparison.json"])
    for path in written[:-1]:
        assert path.read_bytes().startswith(b"\x89PNG")
    data = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert data["method"] == "virtual crawls (test)"
    assert list(data["summary"]) == STRATEGIES
    assert data["summary"]["bfs"]["captured_at_10pct"] == pytest.approx(
        zipf_comparison["bfs"].summary["captured_at_10pct"])
