"""Figures of measurements along a crawl, beside the ranges a paper reports.

Built on :func:`webcrawl.analysis.report.plots.line_figure` (matplotlib ``Figure`` API, no pyplot).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from webcrawl.analysis.ordering.along import AlongCrawl
from webcrawl.analysis.report.plots import Panel, line_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["along_figure"]

#: Panels: title, y label, quantities drawn.
_PANELS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Degree exponents (Bennouas figs. 1-2)", "fitted exponent",
     ("in_exponent", "out_exponent")),
    ("PageRank law (fig. 10)", "fitted exponent", ("pagerank_exponent",)),
    ("Discovery rate (fig. 12)", "links to crawled pages", ("discovery",)),
    ("Sinks (fig. 13)", "fraction of crawled pages", ("sinks",)),
    ("(4,4) cores: at least 4 fans, 4 centers (fig. 9)", "cores per crawled page",
     ("cores44", "cores44_exact")),
    ("Bow-tie (fig. 7)", "fraction of crawled pages", ("scc", "in", "out", "other")),
    ("Clustering (fig. 6)", "average local coefficient", ("clustering",)),
)


def along_figure(along: AlongCrawl,
                 ranges: Mapping[str, tuple[float, float, str]] | None = None, *,
                 title: str | None = None,
                 curves_at: Mapping[str, np.ndarray] | None = None) -> Figure:
    """One panel per measured property against pages crawled (log x), with each
    quantity's published range drawn as two dotted lines ``"<name> paper"`` and,
    from ``curves_at`` (quantity -> values at ``along.pages``), a published fitted law
    as a dashed line ``"<name> paper fit"``."""
    panels = []
    x = along.pages.astype(np.float64)
    for panel_title, ylabel, keys in _PANELS:
        curves: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        styles: dict[str, dict[str, object]] = {}
        for key in keys:
            if key not in along.values:
                continue
            curves[key] = (x, along.values[key])
            if ranges and key in ranges:
                lo, hi, _ = ranges[key]
                edge = np.array([x[0], x[-1]])
                for bound, name in ((lo, f"{key} paper low"), (hi, f"{key} paper high")):
                    curves[name] = (edge, np.array([bound, bound]))
                    styles[name] = {"linestyle": ":", "color": "grey", "linewidth": 1.0}
            if curves_at and key in curves_at:
                name = f"{key} paper fit"
                curves[name] = (x, np.asarray(curves_at[key], dtype=np.float64))
                styles[name] = {"linestyle": "--", "color": "black", "linewidth": 1.0}
        if curves:
            panels.append(Panel(panel_title, "pages crawled", ylabel, curves, logx=True,
                                styles=styles))
    return line_figure(panels, title=title)
