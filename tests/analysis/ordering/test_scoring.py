"""Orders made and scored on threads: the same reports however many run at once, on
the compiled and the numpy paths, and as many at once as the memory holds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import webcrawl.analysis._compiled as compiled_module
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.loader import load_graph
from webcrawl.analysis.ordering import _fast_replay, quality_links
from webcrawl.analysis.ordering.compare import (
    IDEAL,
    RECORDED,
    CompareSettings,
    compare_crawl,
    compare_orders,
    virtual_comparison,
)
from webcrawl.analysis.ordering.quality import QualitySettings
from webcrawl.storage.edgelist import import_edges

STRATEGIES = ["bfs", "random", "backlink", "dfs", "pagerank"]


def _graph(seed: int, n: int = 600) -> CapturedGraph:
    """A random graph with a recorded order, unfetched nodes and several seeds."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([np.arange(n - 1), rng.integers(0, n, 5 * n)])
    dst = np.concatenate([np.arange(1, n), rng.integers(0, n, 5 * n)])
    crawled = rng.random(n) < 0.9
    crawled[0] = True
    recorded = rng.permutation(np.flatnonzero(crawled))
    return CapturedGraph.from_edges(src, dst, n=n, crawled=crawled,
                                    fetch_order=recorded, seeds=[0, int(recorded[3])])


def _figures(comparison) -> str:
    """Every figure of a comparison, as its JSON output holds them, with the full
    capture curves."""
    return json.dumps({"json": comparison.to_dict(),
                       "capture": {k: r.capture.tolist()
                                   for k, r in comparison.reports.items()}},
                      sort_keys=True)


@pytest.mark.parametrize("seed", range(3))
def test_the_same_reports_however_many_orderings_run_at_once(seed):
    graph = _graph(seed)
    runs = [virtual_comparison(graph, STRATEGIES, settings=CompareSettings(
        quality=QualitySettings(slices=7, checkpoints=2), seed=seed, workers=workers))
        for workers in (1, 2, 5)]
    assert list(runs[0].reports) == [RECORDED, IDEAL, *STRATEGIES]
    assert _figures(runs[0]) == _figures(runs[1]) == _figures(runs[2])


def test_the_same_reports_on_the_compiled_and_the_numpy_paths(monkeypatch):
    if _fast_replay.have_compiler() is False:
        pytest.skip("numba (webcrawl[fast]) is not installed")
    graph = _graph(7)
    settings = CompareSettings(quality=QualitySettings(slices=9, checkpoints=0), workers=2)
    fast = virtual_comparison(graph, STRATEGIES, settings=settings)
    monkeypatch.setattr(quality_links, "compiled", lambda *_: None)
    monkeypatch.setattr(quality_links, "_CHUNK", 64)
    monkeypatch.setattr(_fast_replay, "compiled", lambda *_: None)
    assert _figures(virtual_comparison(graph, STRATEGIES, settings=settings)) == \
        _figures(fast)


def test_compare_orders_on_threads_keeps_the_order_given():
    graph = _graph(1)
    orders = {"b": graph.fetch_order[::-1], "a": graph.fetch_order}
    alone = compare_orders(graph, orders, workers=1)
    together = compare_orders(graph, orders, workers=2)
    assert list(together) == ["b", "a"]
    for label in orders:
        assert json.dumps(alone[label].to_dict()) == json.dumps(together[label].to_dict())


@pytest.mark.parametrize(("free", "workers", "expected"), [
    (None, None, 2),            # memory unknown: one a CPU
    (10 * 2**30, None, 2),      # room for both
    (2**30, None, 1),           # room for one only
    (10, None, 1),              # not even one: one all the same
    (10 * 2**30, 3, 3),         # asked for: as asked
    (10 * 2**30, 9, 4),         # never more than the tasks
])
def test_parallel_slots_as_cpus_and_memory_allow(monkeypatch, free, workers, expected):
    monkeypatch.setattr(compiled_module, "worker_count", lambda: 2)
    monkeypatch.setattr(compiled_module, "available_memory", lambda: free)
    assert compiled_module.parallel_slots(4, 600 * 2**20, workers=workers) == expected


def test_available_memory_reads_the_system_figure():
    free = compiled_module.available_memory()
    assert free is None or free > 0


def _edge_file(path: Path) -> Path:
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 300, 1500), rng.integers(0, 300, 1500)
    path.write_text("".join(f"{a}\t{b}\n" for a, b in zip(src, dst, strict=True)))
    return path


@pytest.mark.parametrize("pages", ["all", "sources"])
def test_an_imported_graph_is_loaded_once_when_every_node_is_a_page(tmp_path, monkeypatch,
                                                                    pages):
    """Every node a page: the pages graph is the all graph, held once, and the
    comparison is the one of the two graphs loaded apart."""
    db = tmp_path / "g.db"
    import_edges(_edge_file(tmp_path / "g.tsv"), db, pages=pages)
    loads: list[str] = []
    import webcrawl.analysis.graph.loader as loader

    real = loader.load_graph

    def counted(path, **kwargs):
        loads.append(kwargs.get("graph", "pages"))
        return real(path, **kwargs)

    monkeypatch.setattr(loader, "load_graph", counted)
    settings = CompareSettings(quality=QualitySettings(checkpoints=2))
    got = compare_crawl(db, ["bfs", "random", "backlink"], settings=settings)
    assert loads == (["all"] if pages == "all" else ["all", "pages"])
    apart = virtual_comparison(load_graph(db, graph="all"), ["bfs", "random", "backlink"],
                               measured=load_graph(db, graph="pages"), settings=settings)
    assert got.graphs["g.db"] == apart.graphs["graph"]
    assert got.graphs["g.db"]["kind"] == "pages"
    assert json.dumps({k: r.to_dict() for k, r in got.reports.items()}) == \
        json.dumps({k: r.to_dict() for k, r in apart.reports.items()})
