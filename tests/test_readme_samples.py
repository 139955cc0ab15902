"""The README-sample check itself (``tests/readme_samples.py``): it finds the samples,
ignores what varies from run to run and fails on a change of form."""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_samples import Step, check_demo, check_overview, check_tour, form, samples

ROOT = Path(__file__).resolve().parents[1]

DEMO = ["crawled 2,701 HTML pages (2,701 URLs fetched) on 30 hosts in 15.6 s",
        "PageRank captured after 10% of the pages (PR@10%): pagerank 0.42, recorded 0.36, "
        "dfs 0.09; ceiling ideal 0.49 (the fetchable pages by decreasing final PageRank: "
        "no crawler can run it)",
        "freshness over the revisit window: true 0.544, estimated by the crawler 0.491"]


def test_the_readme_shows_the_demo_the_tour_and_the_report() -> None:
    found = {i: [s.kind for s in shown]
             for i, shown in samples((ROOT / "README.md").read_text()).items()}
    assert found == {0: ["demo"], 1: ["tour", "overview"]}


def test_figures_urls_rules_and_the_order_of_orderings_are_not_form() -> None:
    assert form("top page: http://site19.test:40237/a5/p637.html (48x the mean)") == \
        form("top page: http://site2.test:8400/p1.html (5x the mean)")
    assert form("1     0.03089  ----  x") == form("12  0.1  -------  x")
    assert form("against opic 0.21, bfs 0.19, random 0.14.") == \
        form("against random 0.3, opic 0.2, bfs 0.1.")
    assert form("Of the 4 orderings compared, the crawl's own order (recorded) captured") == \
        form("Of the 4 orderings compared, opic captured")


@pytest.mark.parametrize("printed", [
    "PR@10%: pagerank 0.42, ideal 0.49, recorded 0.36",          # a ceiling among them
    "PR@10%: pagerank 0.42, recorded 0.36",                       # an item lost
    "PR@10%: pagerank 0.42, recorded 0.36, dfs 0.09; ceiling omniscient 0.5",
], ids=["ceiling-ranked", "item-lost", "other-ceiling"])
def test_a_change_of_form_is_seen(printed: str) -> None:
    assert form(printed) != form("PR@10%: pagerank 0.42, recorded 0.36, dfs 0.09; "
                                 "ceiling ideal 0.49")


def test_the_demo_is_held_line_for_line() -> None:
    out = "\n".join([DEMO[0], DEMO[1].replace("0.42", "0.40"), DEMO[2]]) + "\n"
    check_demo(DEMO, Step(["webcrawl", "demo"], out, ""))
    with pytest.raises(AssertionError, match="no longer has the README sample's form"):
        check_demo(DEMO, Step(["webcrawl", "demo"], out.replace("ceiling ideal", "ideal"), ""))
    # The freshness line may be missing only when the demo said why.
    short = "\n".join(DEMO[:2]) + "\n"
    check_demo(DEMO, Step(["webcrawl", "demo"], short, "no freshness to measure: ..."))
    with pytest.raises(AssertionError):
        check_demo(DEMO, Step(["webcrawl", "demo"], short, ""))


def test_the_tour_needs_every_sample_line_and_shows_every_stdout_line() -> None:
    sample = ["crawl done: 277 URLs fetched in 9.1 s", "rank  score", "wrote report.html"]
    steps = [Step(["w", "crawl"], "", "progress 1\ncrawl done: 270 URLs fetched in 3 s\n"),
             Step(["w", "analyze"], "rank  score\n", ""),
             Step(["w", "report"], "wrote report.html\n", "")]
    check_tour(sample, steps)
    with pytest.raises(AssertionError, match="lacks"):
        check_tour(sample, [*steps, Step(["w", "report"], "a new line\n", "")])
    with pytest.raises(AssertionError, match="no longer has"):
        check_tour(sample, steps[1:])


def test_the_overview_parts_are_found_in_order() -> None:
    text = "The crawl fetched 5 URLs. It found 9. Of the 3 orderings compared, bfs won."
    check_overview(["The crawl fetched 277 URLs. [...]",
                    "Of the 4 orderings compared, opic won."], text)
    with pytest.raises(AssertionError):
        check_overview(["Of the 4 orderings compared, opic won. [...] The crawl fetched"],
                       text)
