"""Ceilings are reference lines, never contestants: ``ideal`` and ``omniscient`` are
labelled and defined wherever a comparison shows them, and the best ordering named is
one a crawler can run."""

from __future__ import annotations

import math

import pytest

# Ten chains from the seed and a hub every page links to: discovered at once, but only
# the final PageRank says to take it first, so the ceilings lead (a test that can fail).
from test_orderings import _star_of_chains
from webcrawl.analysis.ordering.ceilings import (
    CEILING_DEFINITIONS,
    best_ordering,
    ceiling_definition,
    display_label,
    is_ceiling,
    split_ceilings,
)
from webcrawl.analysis.ordering.compare import CompareSettings, virtual_comparison
from webcrawl.analysis.ordering.quality import QualitySettings
from webcrawl.analysis.report.plots import CEILING_STYLE, quality_figures
from webcrawl.crawler.cli.compare import print_verdict
from webcrawl.crawler.cli.demo_job import _capture_line

KEY = "captured_at_10pct"


@pytest.fixture(scope="module")
def comparison():
    return virtual_comparison(_star_of_chains(), ["bfs", "dfs", "omniscient"],
                              settings=CompareSettings(quality=QualitySettings(
                                  slices=5, checkpoints=0)))


def test_ceilings_are_the_oracles_only():
    assert is_ceiling("ideal") and is_ceiling("omniscient")
    for name in ("recorded", "bfs", "opic", "batch-pagerank?every=50", "historical",
                 "no such label", "bad?spec"):
        assert not is_ceiling(name), name
    assert ceiling_definition("ideal") == CEILING_DEFINITIONS["ideal"]
    assert display_label("ideal") == "ideal (ceiling)" and display_label("bfs") == "bfs"
    assert split_ceilings(["recorded", "ideal", "bfs", "omniscient", "dfs"]) == (
        ["recorded", "bfs", "dfs"], ["ideal", "omniscient"])


@pytest.mark.parametrize(("summaries", "best"), [
    ({"ideal": {KEY: 0.9}, "omniscient": {KEY: 0.8}, "bfs": {KEY: 0.3}}, ("bfs", 0.3)),
    ({"recorded": {KEY: 0.4}, "bfs": {KEY: 0.4}, "ideal": {KEY: 0.5}}, ("recorded", 0.4)),
    ({"bfs": {KEY: math.nan}, "dfs": {}, "opic": {KEY: 0.2}}, ("opic", 0.2)),
    ({"ideal": {KEY: 0.9}}, None),
], ids=["ceilings-never-win", "ties-first-given", "nan-skipped", "only-a-ceiling"])
def test_best_ordering_is_one_a_crawler_can_run(summaries, best):
    assert best_ordering(summaries) == best


def test_the_comparison_names_a_real_ordering_and_lists_ceilings_apart(comparison):
    capture = {k: r.summary[KEY] for k, r in comparison.reports.items()}
    # The graph is built so that the ceilings lead: a test that could not fail otherwise.
    assert capture["ideal"] >= capture["omniscient"] > max(capture["bfs"], capture["dfs"])
    runnable = {k: v for k, v in capture.items() if k not in ("ideal", "omniscient")}
    assert comparison.best_ordering() == (max(runnable, key=runnable.__getitem__),
                                          max(runnable.values()))
    assert list(comparison.ceilings()) == ["ideal", "omniscient"]
    _headers, rows = comparison.summary_table()
    assert [row[0] for row in rows] == ["recorded", "bfs", "dfs", "ideal (ceiling)",
                                        "omniscient (ceiling)"]
    for _title, _headers, table_rows in comparison.najork_wiener_tables()[:1]:
        assert [row[0] for row in table_rows][-2:] == ["ideal (ceiling)",
                                                       "omniscient (ceiling)"]
    data = comparison.to_dict()
    assert data["ceilings"] == {k: CEILING_DEFINITIONS[k] for k in ("ideal", "omniscient")}
    assert data["best_ordering"]["name"] == comparison.best_ordering()[0]


def test_ceilings_are_drawn_as_labelled_reference_lines(comparison):
    figures = quality_figures(comparison.labelled_reports(),
                              ceilings=comparison.ceiling_labels())
    lines = {line.get_label(): line for line in figures["pagerank_capture"].axes[0].get_lines()}
    assert list(lines) == ["recorded", "bfs", "dfs", "ideal (ceiling)", "omniscient (ceiling)"]
    for label in ("ideal (ceiling)", "omniscient (ceiling)"):
        assert lines[label].get_linestyle() == CEILING_STYLE["linestyle"]
    assert lines["bfs"].get_linestyle() == "-"


def test_compare_prints_the_best_ordering_and_defines_the_ceilings(comparison, capsys):
    print_verdict(comparison)
    out = capsys.readouterr().out.splitlines()
    best, value = comparison.best_ordering()
    assert out[0] == f"best ordering a crawler can run, by PR@10%: {best} ({value:.3f})"
    assert out[1] == "ceilings (reference lines, not orderings a crawler can run):"
    assert out[2:] == [f"  {k}: {CEILING_DEFINITIONS[k]}" for k in ("ideal", "omniscient")]


def test_the_demo_line_ranks_orderings_and_gives_the_ceiling_apart():
    line = _capture_line({"recorded": 0.36, "ideal": 0.49, "pagerank": 0.42, "dfs": 0.09},
                         "PR@10%")
    assert line == ("PageRank captured after 10% of the pages (PR@10%): pagerank 0.42, "
                    "recorded 0.36, dfs 0.09; ceiling ideal 0.49 (the fetchable pages by "
                    "decreasing final PageRank: no crawler can run it)")
