"""The generated national web: its shape, and the same figures for a seed on any machine."""

from __future__ import annotations

import json

import numpy as np
import pytest
from webcrawl.analysis.graph.pagerank_alg import pagerank
from webcrawl.analysis.ordering.country import (
    country_comparison,
    hot_page_comparison,
    share_after,
)
from webcrawl.analysis.ordering.nationalweb import NationalWebSettings, national_web
from webcrawl.analysis.ordering.strategies.oracles import HistoricalPageRank
from webcrawl.analysis.ordering.timed import SimulatedPoliteness
from webcrawl.analysis.ordering.transfer import TransferModel
from webcrawl.crawler.cli import main
from webcrawl.storage.errors import ConfigError

SMALL = NationalWebSettings(sites=200, pages=20_000, seed=5)


@pytest.fixture(scope="module")
def web():
    return national_web(SMALL)


def test_the_shape_of_a_national_web(web):
    graph = web.graph
    per_site = np.bincount(graph.sites)
    assert graph.n == 20_000 and per_site.size == 200 and per_site.min() >= 1
    # heavy-tailed sizes: a few large sites, most far smaller
    assert per_site.max() > 20 * np.median(per_site)
    assert np.sort(per_site)[-5:].sum() > 0.2 * graph.n
    # most links stay inside their site (the further links' locality is 0.9, and the
    # tree and home links are all inside)
    assert 0.85 < web.to_dict()["links_inside_sites"] < 0.99
    # page sizes: log-normal around the median, clipped
    assert np.median(web.sizes) == pytest.approx(15_000, rel=0.05)
    assert web.sizes.min() >= 200 and web.sizes.max() <= 2e6
    # every site's home page is a seed, and every page is reachable from its home page
    assert sorted(graph.site_names[graph.sites[s]] for s in graph.seeds) == sorted(
        graph.site_names)
    from scipy.sparse.csgraph import breadth_first_order

    homes = np.asarray(graph.seeds)
    reached = np.zeros(graph.n, bool)
    for home in homes[np.argsort(-per_site[graph.sites[homes]])][:3]:
        reached[breadth_first_order(graph.adjacency, int(home), return_predecessors=False)] = True
        site = graph.sites[home]
        assert reached[graph.sites == site].all()
    # the previous snapshot knows most pages, not all
    assert 0.7 * graph.n < len(web.history) < 0.9 * graph.n


def test_the_same_seed_gives_the_same_web_and_another_seed_another():
    a, b = national_web(SMALL), national_web(SMALL)
    assert (a.graph.adjacency != b.graph.adjacency).nnz == 0
    assert np.array_equal(a.sizes, b.sizes) and a.history == b.history
    c = national_web(NationalWebSettings(sites=200, pages=20_000, seed=6))
    assert c.graph.m != a.graph.m or not np.array_equal(c.sizes, a.sizes)


def test_the_simulate_command_prints_the_same_figures_for_a_seed(tmp_path, capsys):
    argv = ["simulate", "national-web", "--sites", "40", "--pages", "1500", "--every",
            "200", "--random-seed", "3", "--json", "--hot", "20"]
    assert main(argv) == 0
    runs = [json.loads(capsys.readouterr().out)]
    # another process, with another hash seed and one BLAS thread: the same figures
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONHASHSEED": "12345", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1"}
    other = subprocess.run([sys.executable, "-m", "webcrawl.crawler.cli", *argv],
                           capture_output=True, text=True, env=env, check=True)
    runs.append(json.loads(other.stdout))
    assert runs[0] == runs[1]
    data = runs[0]
    assert "omniscient (ceiling)" in data["orderings"]
    assert "ideal (ceiling)" in data["orderings"]
    assert data["transfer"]["kind"] == "bandwidth"
    assert "transfer model" in data["transfer"]["description"]
    assert set(data["hot_pages"]["orderings"]) == {"bfs", "backlink", "pagerank", "random"}
    for run in data["orderings"].values():
        assert all(0 <= v <= 1 for v in run["pages"] + run["time"])


def test_ceilings_bound_and_orderings_end_complete(web):
    graph = web.graph
    scores = np.asarray(pagerank(graph.adjacency, 0.85).scores)
    d = TransferModel("bandwidth").durations(graph, sizes=web.sizes)
    runs = country_comparison(graph, ["bfs", "larger-sites-first",
                                      HistoricalPageRank.from_scores(web.history)],
                              SimulatedPoliteness(20, min_delay=15), d, scores,
                              fractions=(0.1, 0.5, 1.0))
    ideal = runs["ideal (ceiling)"]["pages"]
    for label in ("bfs", "larger-sites-first", "historical"):
        assert all(v <= i + 1e-12 for v, i in zip(runs[label]["pages"], ideal, strict=True))
        assert runs[label]["pages"][-1] == pytest.approx(1.0)
        assert runs[label]["time"][-1] <= 1.0 + 1e-12


def test_orderings_run_apart_with_one_horizon_give_the_figures_of_one_run():
    # a small web: split runs of a comparison must read time at the same moments
    web = national_web(NationalWebSettings(sites=30, pages=1_500, seed=2))
    graph = web.graph
    scores = np.asarray(pagerank(graph.adjacency, 0.85).scores)
    d = TransferModel("bandwidth").durations(graph, sizes=web.sizes)
    polite = SimulatedPoliteness(4, min_delay=2)
    together = country_comparison(graph, ["bfs", "opic"], polite, d, scores)
    horizon = max(together[k]["seconds"] for k in ("bfs", "opic"))
    assert together["bfs"]["horizon"] == horizon
    for name in ("bfs", "opic"):
        alone = country_comparison(graph, [name], polite, d, scores, horizon=horizon)
        assert alone[name] == together[name]
    # a shorter horizon reads the time fractions at its own shares
    half = country_comparison(graph, ["bfs"], polite, d, scores, horizon=horizon / 2,
                              fractions=(0.5, 1.0))
    assert half["bfs"]["time"][1] == pytest.approx(together["bfs"]["time"][3])
    assert half["bfs"]["hours"][-1] == pytest.approx(horizon / 2 / 3600)


def test_hot_pages_on_a_hand_made_graph():
    from webcrawl.analysis.graph.captured import CapturedGraph

    # 0 -> 1, 2, 3; 1, 2, 3 -> 4; 4 -> 5: only page 4 has 3 in-links (hot at G = 3)
    graph = CapturedGraph.from_edges([0, 0, 0, 1, 2, 3, 4], [1, 2, 3, 4, 4, 4, 5], 6)
    out = hot_page_comparison(graph, ["bfs"], 3, fractions=(0.5, 5 / 6))
    assert out["hot"] == 1
    assert out["orderings"]["bfs"] == [0.0, 1.0]  # bfs takes page 4 fifth
    assert out["ideal (ceiling)"] == [1.0, 1.0]
    assert share_after(np.array([4, 0]), np.array([0.0, 0, 0, 0, 1.0, 0]), [0.1]) == [1.0]


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError):
        NationalWebSettings(sites=10, pages=5)
    with pytest.raises(ConfigError):
        NationalWebSettings(locality=1.5)
