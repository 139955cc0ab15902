"""PageRank kept between commands: reused only for the same graph of the same file."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from webcrawl.analysis.graph import loader
from webcrawl.analysis.graph.kept import load_source_graph, source_pagerank
from webcrawl.analysis.graph.pagerank_alg import pagerank
from webcrawl.storage import results_cache
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.results_cache import cache_dir
from webcrawl.storage.store import CrawlStore, UrlRow

URLS = [f"http://a.test/p{i}" for i in range(6)] + ["http://b.test/", "http://b.test/x"]
LINKS = {0: [1, 2, 6], 1: [2, 0], 2: [0, 3], 3: [4], 6: [7, 0], 4: [0, 5]}


@pytest.fixture
def crawl(tmp_path: Path, write_crawl: Callable[..., Path],
          monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small crawl (pages 5 and 7 in the frontier); no quiet period needed."""
    monkeypatch.setattr(results_cache, "QUIET_SECONDS", 0.0)
    return write_crawl(tmp_path / "crawl.db", URLS, LINKS)


def _pagerank(db: Path, **options: Any) -> Any:
    graph, source = load_source_graph(db, **options)
    return graph, source_pagerank(source, graph.adjacency, 0.85, tol=1e-10)


def test_the_second_command_gets_the_same_bits_without_computing(
        crawl: Path, pagerank_computations: list[int]) -> None:
    graph, first = _pagerank(crawl)
    assert first.scores.tobytes() == pagerank(graph.adjacency, 0.85, tol=1e-10).scores.tobytes()
    _, second = _pagerank(crawl)
    assert pagerank_computations == [1]
    assert second.scores.tobytes() == first.scores.tobytes()
    assert (second.iterations, second.residual) == (first.iterations, first.residual)


def test_another_graph_or_parameter_computes_again(
        crawl: Path, pagerank_computations: list[int]) -> None:
    _pagerank(crawl)
    for options in ({"graph": "all"}, {"duplicates": "keep"}, {"remote_only": True},
                    {"sites": "hosts"}):
        graph, result = _pagerank(crawl, **options)
        assert result.scores.size == graph.n
    graph, source = load_source_graph(crawl)
    for alpha, tol in ((0.9, 1e-10), (0.85, 1e-8)):
        result = source_pagerank(source, graph.adjacency, alpha, tol=tol)
        assert result.scores.tobytes() == pagerank(graph.adjacency, alpha,
                                                   tol=tol).scores.tobytes()
    assert len(pagerank_computations) == 7
    assert len(list(cache_dir(crawl).glob("pagerank-*.npz"))) == 7


def test_a_resumed_crawl_is_never_served_the_old_pagerank(
        crawl: Path, pagerank_computations: list[int]) -> None:
    _, before = _pagerank(crawl)

    async def resume() -> None:  # page 5 fetched, linking back to page 0
        async with await CrawlStore.open(crawl, resume=True) as store:
            store.add_fetch(FetchRecord(5, 6, 1006.0, 1006.5, Outcome.FETCHED, 200,
                                        "text/html"))
            store.add_links(5, [0, 8])
            store.add_url(UrlRow(8, "http://a.test/new", 0, 1, 6))
            store.set_outcome(5, Outcome.FETCHED, 6)

    asyncio.run(resume())
    graph, after = _pagerank(crawl)
    assert pagerank_computations == [1, 1]
    assert graph.n == before.scores.size + 1
    assert after.scores.tobytes() == pagerank(graph.adjacency, 0.85,
                                              tol=1e-10).scores.tobytes()


def test_nothing_is_kept_or_served_while_a_writer_holds_the_file(
        crawl: Path, pagerank_computations: list[int]) -> None:
    _pagerank(crawl)
    lock = crawl.with_name(crawl.name + "-writer")
    lock.write_text("4242 webcrawl crawl --resume")
    _pagerank(crawl)
    _pagerank(crawl)
    assert pagerank_computations == [1, 1, 1]
    lock.unlink()
    _pagerank(crawl)
    assert pagerank_computations == [1, 1, 1]


def _commit(path: Path) -> None:
    """A commit to the database (a meta value), as any writer's."""
    async def commit() -> None:
        async with await CrawlStore.open(path, resume=True) as store:
            store.set_meta("note", "written during the load")

    asyncio.run(commit())


def test_a_file_written_during_the_load_keeps_nothing(
        crawl: Path, pagerank_computations: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    real = loader.load_graph

    def load_then_write(*args: Any, **kwargs: Any) -> Any:
        graph = real(*args, **kwargs)
        _commit(crawl)
        return graph

    monkeypatch.setattr(loader, "load_graph", load_then_write)
    _pagerank(crawl)
    assert not cache_dir(crawl).exists()
    monkeypatch.setattr(loader, "load_graph", real)
    _pagerank(crawl)
    assert pagerank_computations == [1, 1]


def test_mean_scores_from_a_kept_vector_are_pageranks(crawl: Path) -> None:
    graph, result = _pagerank(crawl)
    mean = pagerank(graph.adjacency, 0.85, tol=1e-10, normalize="mean").scores
    assert (result.scores * graph.adjacency.shape[0]).tobytes() == mean.tobytes()
    assert np.isclose(mean.mean(), 1.0)
