"""Every figure of the report is readable: no text cut at the figure's edge, every log
axis with at least two labelled ticks, no legend over data or over other text.

The checker (:mod:`layout_check`) measures the drawn figure; it is first shown to catch
each defect on a figure made the careless way, then run on every figure a report of a
revisited fixture crawl draws, and on the ``analyze changes`` plots.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from layout_check import draw, layout_problems, log_axis_labels
from matplotlib.figure import Figure
from webcrawl.analysis.change.change_stats import change_report
from webcrawl.analysis.change.fetch_history import load_visit_log
from webcrawl.analysis.report.change_figures import plot_change_report
from webcrawl.analysis.report.figures import degree_figure, freshness_figure, rate_histogram_figure
from webcrawl.analysis.report.plots import (
    Panel,
    fit_title,
    label_log_axes,
    line_figure,
    outside_legend,
)

if TYPE_CHECKING:  # (conftest is not importable: several test folders have one)
    from conftest import RenderedReport

LONG_TITLE = ("Average PageRank of the pages fetched in each slice (graph of fetched pages: "
              "2,701 pages, 17,925 links)")


def _slice_curve() -> tuple[np.ndarray, np.ndarray]:
    """Mean PageRank per slice of a crawl: 5.1 falling to 0.3, about one decade."""
    x = np.arange(1, 21) * 135.0
    return x, 5.1 * np.exp(-np.linspace(0.0, np.log(17.0), 20))


def test_the_checker_sees_each_defect_of_a_careless_figure() -> None:
    x, y = _slice_curve()
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for k in range(7):
        ax.plot(x, y * (1 + 0.1 * k), "-o", label=f"order {k}")
    ax.set_yscale("log")
    ax.legend(loc="center")        # over the curves
    fig.suptitle(LONG_TITLE)       # wider than the figure
    problems = layout_problems(fig)
    assert any("log y axis" in p for p in problems), problems
    assert any("cut at the figure's edge" in p for p in problems), problems
    assert any("legend covers" in p for p in problems), problems


def test_the_same_figure_made_with_the_layout_helpers_has_no_defect() -> None:
    x, y = _slice_curve()
    fig = Figure(figsize=(6.4, 4.7), layout="constrained")
    ax = fig.add_subplot()
    for k in range(7):
        ax.plot(x, y * (1 + 0.1 * k), "-o", label=f"order {k}")
    ax.set_yscale("log")
    label_log_axes(ax)
    outside_legend(fig)
    fit_title(fig, LONG_TITLE)
    assert layout_problems(fig) == []
    assert fig.get_suptitle().count("\n") >= 1   # wrapped, every word kept
    assert fig.get_suptitle().replace("\n", " ") == LONG_TITLE


@pytest.mark.parametrize(("lo", "hi"), [(0.3, 6.0), (0.61, 0.93), (1e-5, 1.0), (2.0, 3.0),
                                        (40.0, 41.0), (1.0, 2701.0)],
                         ids=["one-decade", "within-a-decade", "five-decades", "2-3",
                              "narrow", "pages"])
def test_every_log_axis_gets_two_labelled_ticks_inside_its_view(lo: float, hi: float) -> None:
    fig = Figure(layout="constrained")
    ax = fig.add_subplot()
    ax.plot([lo, hi], [lo, hi])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    label_log_axes(ax)
    draw(fig)
    for which in ("x", "y"):
        labels = log_axis_labels(ax, which)
        assert len(labels) >= 2, (which, labels)
        # The labels are the tick values, inside the view.
        values = [float(t.replace("\u2212", "-")) for t in labels
                  if re.fullmatch(r"[\d.e+\-\u2212]+", t)]
        assert all(lo <= v <= hi for v in values), values


def test_a_line_figure_of_the_slices_shows_every_defect_fixed() -> None:
    x, y = _slice_curve()
    curves = {f"order {k}": (x, y * (1 + 0.1 * k)) for k in range(7)}
    fig = line_figure([Panel("average PageRank per slice", "pages crawled",
                             "average PageRank (log)", curves, logy=True)],
                      title=LONG_TITLE)
    assert layout_problems(fig) == []
    assert len(fig.legends) == 1 and not fig.axes[0].get_legend()


def test_degree_rate_and_freshness_figures_have_no_defect() -> None:
    import scipy.sparse as sp
    from webcrawl.analysis.graph.degree_dist import degree_laws

    rng = np.random.default_rng(3)
    n = 3000   # out-degrees ~ Zipf(2.7), targets by Zipf(2.1)-like popularity
    out = np.minimum(rng.zipf(2.7, n), 300)
    popularity = 1.0 / np.arange(1, n + 1) ** (1 / 1.1)
    dst = rng.choice(n, int(out.sum()), p=popularity / popularity.sum())
    src = np.repeat(np.arange(n), out)
    laws = degree_laws(sp.csr_array((np.ones(src.size), (src, dst)), shape=(n, n)))
    true = 10 ** rng.uniform(-2.5, 0.7, 800)
    est = true * np.exp(rng.normal(0, 0.5, true.size))
    days = np.linspace(0.0, 34.0, 60)
    figures: list[Figure] = [
        degree_figure(laws, expected=(2.1, 2.72)),
        rate_histogram_figure(est, true, title="Estimated change rates (33.5-day window)"),
        rate_histogram_figure(est),
        freshness_figure({"revisits that found the copy unchanged": (days, 0.4 + 0 * days),
                          "expected under the estimated rates": (days, 0.6 + 0 * days),
                          "true (fixture ground truth)": (days, 0.62 + 0 * days)}),
    ]
    for fig in figures:
        assert layout_problems(fig) == []


def test_every_figure_of_a_report_has_no_layout_defect(rendered_report: RenderedReport) -> None:
    figs = rendered_report.figures
    assert len(figs) == rendered_report.summary.images
    # summary 1, bow-tie 1, degrees 1, quality 6, comparison 4, changes 2
    assert [s for s, _, _ in figs].count("comparison") == 4
    assert [s for s, _, _ in figs].count("changes") == 2
    for section, alt, fig in figs:
        assert layout_problems(fig) == [], (section, alt)


def test_the_analyze_changes_plots_have_no_layout_defect(rendered_report: RenderedReport,
                                                         tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[tuple[str, Any]] = []
    original = Figure.savefig

    def keep(self: Figure, fname: Any, *args: Any, **kw: Any) -> None:
        drawn.append((Path(str(fname)).name, self))
        original(self, fname, *args, **kw)

    monkeypatch.setattr(Figure, "savefig", keep)
    report = change_report(load_visit_log(rendered_report.db))
    paths = plot_change_report(report, tmp_path)
    assert len(drawn) == len(paths) == 5
    for name, fig in drawn:
        assert layout_problems(fig) == [], name
        titles = [t.get_text() for t in ([fig._suptitle] if fig._suptitle else [])]
        titles += [ax.get_title() for ax in fig.axes]
        # Every plot states its window, in days, from the data.
        assert any(f"{report.window_days:.3g}-day window" in t for t in titles), (name, titles)
