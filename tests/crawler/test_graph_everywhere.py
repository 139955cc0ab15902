"""One graph definition everywhere (issue 14).

One database, made by the demo, goes through the four ways of measuring it: the demo
itself, the library, the command line and the report.  They must give the same numbers
for the same graph, and every command must measure the ``pages`` graph by default and
the ``all`` graph with ``--graph all``, and say which.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from webcrawl.analysis.graph.bowtie_alg import bowtie
from webcrawl.analysis.graph.loader import load_graph
from webcrawl.analysis.graph.pagerank_alg import pagerank
from webcrawl.analysis.ordering.compare import CompareSettings, virtual_comparison
from webcrawl.analysis.ordering.quality import crawl_quality
from webcrawl.analysis.report.context import ReportSettings
from webcrawl.analysis.report.document import build_report
from webcrawl.crawler.cli import main
from webcrawl.crawler.cli.demo_job import DEMO_STRATEGIES, DemoResult, DemoSettings, run_demo
from webcrawl.storage.reader import CrawlReader


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    out = tmp_path_factory.mktemp("demo")
    return run_demo(out, pages=200, hosts=4, seed=3, revisit_seconds=0, stream=io.StringIO())


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def counts(db: Path) -> tuple[int, int]:
    with CrawlReader(db) as reader:
        urls = reader.urls(text=False)
    return int(urls.has_outcome("fetched").sum()), len(urls)


def test_demo_library_cli_and_report_give_the_same_numbers(
        demo: DemoResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, fig = demo.db, demo.figures
    # the library
    graph = load_graph(db)
    scores = np.asarray(pagerank(graph.adjacency).scores)
    top = int(np.argmax(scores))
    lib_bowtie = dict(bowtie(graph.adjacency).counts)
    lib_quality = crawl_quality(graph).summary
    lib_compare = {name: r.summary for name, r in virtual_comparison(
        load_graph(db, graph="all"), DEMO_STRATEGIES, measured=graph).reports.items()}
    # the demo (the same graph, the same numbers)
    assert fig["graph"] == graph.info()
    assert fig["top_page"][0] == graph.urls[top]
    assert fig["top_score"] == pytest.approx(scores[top], rel=1e-12)
    assert fig["bowtie_counts"] == lib_bowtie
    assert fig["quality"] == pytest.approx(lib_quality, rel=1e-12)
    assert fig["comparison"].keys() == lib_compare.keys()
    for name, summary in lib_compare.items():
        assert fig["comparison"][name] == pytest.approx(summary, rel=1e-12), name
    # the command line
    pr = cli_json(capsys, "analyze", "pagerank", "--db", str(db), "--json", "--top", "1")
    assert pr["graph"] == graph.info()
    assert pr["top"][0]["url"] == graph.urls[top]
    assert pr["top"][0]["score"] == pytest.approx(scores[top], rel=1e-12)
    bt = cli_json(capsys, "analyze", "bowtie", "--db", str(db), "--json")
    assert {k: v["count"] for k, v in bt["regions"].items()} == lib_bowtie
    quality = cli_json(capsys, "analyze", "quality", "--db", str(db), "--json")
    assert quality["graph"] == graph.info()
    assert quality["summary"] == pytest.approx(lib_quality, rel=1e-12)
    compare = cli_json(capsys, "compare", "--db", str(db), "--virtual", "--json",
                       "--strategies", ",".join(DEMO_STRATEGIES))
    assert compare["graphs"][db.name] == graph.info()
    for name, summary in lib_compare.items():
        got = {k: v for k, v in compare["summary"][name].items() if k != "pages"}
        assert got == pytest.approx(summary, rel=1e-12), name
    # the report, built from the database alone
    summary = build_report(db, tmp_path / "r.html",
                           settings=ReportSettings(compare=DEMO_STRATEGIES))
    rf = summary.figures
    assert summary.graph == graph.info()
    assert rf["pagerank_top"][0][0] == graph.urls[top]
    assert rf["pagerank_top"][0][1] == pytest.approx(scores[top], rel=1e-12)
    assert rf["bowtie"] == lib_bowtie
    assert rf["quality"] == pytest.approx(lib_quality, rel=1e-12)
    for name, s in lib_compare.items():
        assert rf["comparison"][name] == pytest.approx(s, rel=1e-12), name
    html = (tmp_path / "r.html").read_text()
    assert html.count(graph.describe()) >= 5  # summary, ranking, bow-tie, degrees, quality...


COMMANDS = {
    "pagerank": ["analyze", "pagerank"],
    "hits": ["analyze", "hits"],
    "bowtie": ["analyze", "bowtie"],
    "degrees": ["analyze", "degrees"],
    "quality": ["analyze", "quality", "--checkpoints", "0"],
    "sample": ["analyze", "sample", "--size", "20", "--walkers", "4", "--burn-in", "20",
               "--walk-length", "20"],
    "smallworld": ["analyze", "smallworld", "--sources", "10"],
    "cores": ["analyze", "cores", "--max-i", "2", "--max-j", "2"],
    "compare": ["compare", "--virtual", "--strategies", "bfs", "--checkpoints", "0"],
}


def _graph_of(name: str, out: Any, db: Path) -> dict[str, Any]:
    return dict(out["graphs"][db.name]) if name == "compare" else dict(out["graph"])


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_measures_the_pages_graph_by_default(
        demo: DemoResult, capsys: pytest.CaptureFixture[str], name: str) -> None:
    pages, urls = counts(demo.db)
    assert urls > pages  # the demo's crawl has off-site and robots-excluded URLs
    default = _graph_of(name, cli_json(capsys, *COMMANDS[name], "--db", str(demo.db),
                                       "--json"), demo.db)
    assert default["kind"] == "pages" and default["nodes"] == default["pages"] == pages
    assert default["description"].startswith(f"graph of fetched pages: {pages:,} pages")
    every = _graph_of(name, cli_json(capsys, *COMMANDS[name], "--db", str(demo.db), "--json",
                                     "--graph", "all"), demo.db)
    assert every["kind"] == "all" and every["nodes"] == urls and every["pages"] == pages
    assert every["links"] > default["links"]


def test_report_demo_and_library_default_to_the_pages_graph(demo: DemoResult,
                                                            tmp_path: Path) -> None:
    pages, urls = counts(demo.db)
    assert load_graph(demo.db).kind == "pages" and load_graph(demo.db).n == pages
    assert ReportSettings().graph == "pages" and DemoSettings().graph == "pages"
    assert CompareSettings().graph == "pages"
    assert demo.figures["graph"]["kind"] == "pages"
    assert demo.report_summary is not None and demo.report_summary.graph["nodes"] == pages
    assert any(line.startswith(f"measured on the graph of fetched pages: {pages:,} pages")
               for line in demo.summary)
    every = build_report(demo.db, tmp_path / "all.html", settings=ReportSettings(graph="all"))
    assert every.graph["kind"] == "all" and every.graph["nodes"] == urls


def test_report_cli_names_its_graph(demo: DemoResult, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    pages, _ = counts(demo.db)
    # Without --quiet: the summary is what -q hides.
    assert main(["report", "--db", str(demo.db), "--output", str(tmp_path / "r.html")]) == 0
    assert f"measured on the graph of fetched pages: {pages:,} pages" in capsys.readouterr().out
