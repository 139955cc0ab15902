"""``analyze pagerank`` then ``compare``: the second reuses the first's PageRank, and
prints exactly what it prints computing its own."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from crawldb import write_crawl
from webcrawl.crawler.cli import main
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb
from webcrawl.storage.results_cache import cache_dir

COMPARE = ["compare", "--virtual", "--strategies", "bfs,random,backlink", "--checkpoints", "2",
           "--json"]


def _imported(tmp_path: Path, pages: str) -> Path:
    web = FixtureWeb.build(FixtureConfig(model="zipf", pages=500, hosts=4, seed=7))
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{a}\t{b}\n" for a, b in zip(web.src, web.dst, strict=True)))
    db = tmp_path / f"{pages}.db"
    assert main(["import", "edges", str(edges), "--db", str(db), "--pages", pages, "-q"]) == 0
    return db


def _crawled(tmp_path: Path) -> Path:
    web = FixtureWeb.build(FixtureConfig(model="zipf", pages=400, hosts=3, seed=2))
    urls = [f"http://h{web.host_of[p]}.test/p{p}" for p in range(web.pages)]
    links = {p: web.dst[web.src == p].tolist() for p in range(0, web.pages, 2)}
    return write_crawl(tmp_path / "crawl.db", urls, links)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0
    out: str = capsys.readouterr().out
    return out


@pytest.mark.parametrize("make", [lambda p: _imported(p, "all"),
                                  lambda p: _imported(p, "sources"), _crawled],
                         ids=["import-all", "import-sources", "crawl"])
def test_compare_after_pagerank_prints_what_it_prints_alone(
        make: Callable[[Path], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        pagerank_computations: list[int]) -> None:
    db = make(tmp_path)
    capsys.readouterr()
    alone = _run([*COMPARE, "--db", str(db)], capsys)
    shutil.rmtree(cache_dir(db))
    ranked = _run(["analyze", "pagerank", "--db", str(db), "--json"], capsys)
    assert len(pagerank_computations) == 2
    after = _run([*COMPARE, "--db", str(db)], capsys)
    assert len(pagerank_computations) == 2            # compare used the PageRank kept by analyze
    assert after == alone
    shutil.rmtree(cache_dir(db))
    assert _run(["analyze", "pagerank", "--db", str(db), "--json"], capsys) == ranked
    assert _run(["analyze", "pagerank", "--db", str(db), "--json", "--mean"], capsys) \
        != ranked
    assert len(pagerank_computations) == 3


def test_other_parameters_compute_again(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        pagerank_computations: list[int]) -> None:
    db = _imported(tmp_path, "all")
    _run(["analyze", "pagerank", "--db", str(db), "--json"], capsys)
    _run(["analyze", "pagerank", "--db", str(db), "--json", "--alpha", "0.9"], capsys)
    _run(["analyze", "pagerank", "--db", str(db), "--json", "--duplicates", "keep"], capsys)
    _run(["analyze", "pagerank", "--db", str(db), "--json", "--remote-only"], capsys)
    _run([*COMPARE, "--db", str(db), "--remote-only"], capsys)
    assert len(pagerank_computations) == 5
