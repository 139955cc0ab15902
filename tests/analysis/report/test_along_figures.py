"""Figures along a crawl: measured values, published ranges and published fitted laws."""

from __future__ import annotations

import numpy as np
from webcrawl.analysis.ordering.along import AlongCrawl
from webcrawl.analysis.ordering.randomweb_figures import PAPER_RANGES, paper_curve
from webcrawl.analysis.report.along_figures import along_figure


def _lines(fig):
    return {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}


def test_fitted_laws_drawn_beside_the_measurements():
    pages = np.array([1000, 10_000, 100_000])
    along = AlongCrawl(pages, {"discovery": np.array([0.01, 0.1, 0.2]),
                               "sinks": np.array([0.6, 0.4, 0.3])}, ("discovery", "sinks"))
    fits = {"discovery": paper_curve("discovery", pages)}
    lines = _lines(along_figure(along, PAPER_RANGES, curves_at=fits))
    assert np.allclose(lines["discovery"].get_ydata(), [0.01, 0.1, 0.2])
    assert np.allclose(lines["discovery paper fit"].get_ydata(), fits["discovery"])
    assert lines["discovery paper fit"].get_linestyle() == "--"
    assert np.allclose(lines["sinks paper low"].get_ydata(), [0.2, 0.2])
    assert "sinks paper fit" not in lines
