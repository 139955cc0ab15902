"""The figures of the HTML report that :mod:`webcrawl.analysis.report.plots` does not draw.

Every function returns a :class:`matplotlib.figure.Figure` built directly (no pyplot
state, Agg only, thread-safe); :func:`webcrawl.analysis.report.plots.png_bytes` encodes it.

* :func:`bowtie_figure`: the classic bow-tie drawing of Broder et al. (IN wing, SCC
  knot, OUT wing, tendrils, tubes, disconnected pieces) with each region's size;
* :func:`degree_figure`: in- and out-degree distributions on log-log axes with the
  fitted discrete power laws (and, when known, the configured exponents);
* :func:`rate_timeline_figure`: pages per second over the crawl;
* :func:`rate_histogram_figure`: estimated change rates (optionally against the truth);
* :func:`freshness_figure`: observed and expected freshness over the revisit window.

References
----------
.. [1] A. Broder et al., "Graph structure in the Web", WWW9, 2000 (figure 9: the bow-tie).
.. [2] J. Cho and H. Garcia-Molina, "The evolution of the web and implications for an
   incremental crawler", VLDB 2000.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import special
from webcrawl.analysis.report.plots import label_log_axes, outside_legend

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from webcrawl.analysis.graph.bowtie_alg import BowTie
    from webcrawl.analysis.graph.degree_dist import DegreeLaws, PowerLawFit

__all__ = [
    "bowtie_figure",
    "degree_figure",
    "freshness_figure",
    "rate_histogram_figure",
    "rate_timeline_figure",
]

_DPI = 100
# Region colours: the knot stands out, the wings are calmer, the rest grey-ish.
_COLORS = {"SCC": "#d95f02", "IN": "#1b9e77", "OUT": "#7570b3", "TENDRILS": "#66a61e",
           "TUBES": "#e6ab02", "DISCONNECTED": "#999999", "OTHER": "#bbbbbb"}


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=_DPI, layout="constrained")


def _label(name: str, count: int, n: int) -> str:
    return f"{name}\n{count:,} ({100.0 * count / n:.1f}%)" if n else f"{name}\n0"


def _scale(fraction: float) -> float:
    """Drawn size of a region: grows like the square root of its share, never vanishes."""
    return 0.25 + 0.75 * float(np.sqrt(fraction))


def bowtie_figure(bt: BowTie, *, title: str | None = None) -> Figure:
    """Draw the bow-tie with every region's node count and share.

    The IN and OUT wings, the SCC knot, tendrils (hanging off IN and into OUT), tubes
    (an arc from IN to OUT under the knot) and the disconnected pieces are drawn with
    sizes growing with their share of the nodes, so the picture shows the shape of
    this crawl rather than Broder's proportions.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from webcrawl.analysis.graph.bowtie_alg import bowtie
    >>> A = sp.csr_array(([1.0] * 4, ([0, 1, 2, 1], [1, 0, 0, 3])), shape=(4, 4))
    >>> fig = bowtie_figure(bowtie(A))
    >>> len(fig.axes)
    1
    """
    from matplotlib.patches import Ellipse, FancyArrowPatch, Polygon

    counts, n = bt.counts, bt.n
    frac = {k: (v / n if n else 0.0) for k, v in counts.items()}
    fig = _figure(10.0, 5.2)
    ax = fig.add_subplot()
    r = 0.55 + 0.45 * float(np.sqrt(frac["SCC"]))           # knot radius
    h_in, h_out = 1.5 * _scale(frac["IN"]), 1.5 * _scale(frac["OUT"])
    ax.add_patch(Polygon([(-r * 0.6, 0.25 * r), (-3.2, h_in), (-3.2, -h_in),
                          (-r * 0.6, -0.25 * r)], closed=True, color=_COLORS["IN"], alpha=0.8))
    ax.add_patch(Polygon([(r * 0.6, 0.25 * r), (3.2, h_out), (3.2, -h_out),
                          (r * 0.6, -0.25 * r)], closed=True, color=_COLORS["OUT"], alpha=0.8))
    ax.add_patch(Ellipse((0, 0), 2 * r, 2 * r, color=_COLORS["SCC"], zorder=3))
    ax.text(0, 0, _label("SCC", counts["SCC"], n), ha="center", va="center", zorder=4,
            fontsize=11, fontweight="bold", color="white")
    ax.text(-2.2, 0, _label("IN", counts["IN"], n), ha="center", va="center", fontsize=10,
            color="white", fontweight="bold")
    ax.text(2.2, 0, _label("OUT", counts["OUT"], n), ha="center", va="center", fontsize=10,
            color="white", fontweight="bold")
    t = 0.35 * _scale(frac["TENDRILS"])
    for x, y in ((-2.4, h_in), (2.4, -h_out)):   # tendrils leave IN, lead into OUT
        ax.add_patch(Ellipse((x, y + (0.45 if y > 0 else -0.45)), 0.6 * t + 0.2, 1.6 * t,
                             color=_COLORS["TENDRILS"], alpha=0.85))
    ax.text(-1.5, h_in + 0.45, _label("TENDRILS", counts["TENDRILS"], n), ha="left",
            va="center", fontsize=9)
    tube_w = 2.0 + 8.0 * float(np.sqrt(frac["TUBES"]))
    ax.add_patch(FancyArrowPatch((-2.6, -h_in * 0.6), (2.6, -h_out * 0.6),
                                 connectionstyle="arc3,rad=0.45", arrowstyle="-",
                                 linewidth=tube_w, color=_COLORS["TUBES"], alpha=0.9))
    ax.text(0, -r - 0.75, _label("TUBES", counts["TUBES"], n), ha="center", va="top",
            fontsize=9)
    d = 0.25 * _scale(frac["DISCONNECTED"] + frac["OTHER"])
    for k, (x, y) in enumerate(((3.9, 1.6), (4.3, 1.1), (3.8, 0.9))):
        ax.add_patch(Ellipse((x, y), 2 * d * (1 - 0.25 * k), 2 * d * (1 - 0.25 * k),
                             color=_COLORS["DISCONNECTED"]))
    other = counts["DISCONNECTED"] + counts["OTHER"]
    ax.text(4.05, 2.25, _label("DISCONNECTED", other, n), ha="center", va="bottom", fontsize=9)
    for x0, x1 in ((-3.6, -3.25), (3.25, 3.6)):
        ax.annotate("", (x1, 0), (x0, 0), arrowprops={"arrowstyle": "->", "lw": 1.5})
    ax.set_xlim(-3.8, 5.0)
    ax.set_ylim(-3.0, 3.0)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title or f"Bow-tie of {n:,} nodes ({bt.n_scc:,} SCCs, {bt.n_wcc:,} WCCs)")
    return fig


def _law_curve(fit: PowerLawFit, x_max: float, share: float) -> tuple[np.ndarray, np.ndarray]:
    """The fitted pmf over ``[x_min, x_max]``, scaled to the tail's share of the nodes."""
    xs = np.unique(np.geomspace(fit.x_min, max(x_max, fit.x_min + 1), 60).round())
    pmf = xs ** -fit.alpha / special.zeta(fit.alpha, fit.x_min)
    return xs, share * pmf


def _degree_panel(ax: Axes, values: np.ndarray, counts: np.ndarray, fit: PowerLawFit | None,
                  expected: float | None, name: str) -> None:
    positive = values > 0
    total = float(counts.sum())
    if not positive.any() or total == 0:
        ax.text(0.5, 0.5, f"no node with a positive {name}-degree", ha="center",
                transform=ax.transAxes)
        ax.axis("off")
        return
    x, p = values[positive], counts[positive] / total
    ax.loglog(x, p, "o", markersize=3.5, color="#1f77b4", label="observed P(k)")
    if fit is not None:
        share = counts[values >= fit.x_min].sum() / total
        xs, ys = _law_curve(fit, float(x.max()), share)
        ax.loglog(xs, ys, "-", color="#d62728", linewidth=2,
                  label=f"{name}-degree fit: alpha = {fit.alpha:.2f} ± {fit.sigma:.2f} "
                        f"(k >= {fit.x_min})")
        if expected is not None:
            # The configured law through the same point at x_min: compare the slopes.
            ys_exp = ys[0] * (xs / xs[0]) ** -expected
            ax.loglog(xs, ys_exp, "--", color="#555555", linewidth=1.4,
                      label=f"{name}-degree configured: alpha = {expected:g}")
    ax.set_xlabel(f"{name}-degree k")
    ax.set_ylabel("fraction of nodes P(k)")
    ax.set_title(f"{name}-degree distribution")
    ax.grid(True, which="major", alpha=0.3)
    label_log_axes(ax)


def degree_figure(laws: DegreeLaws, *, expected: tuple[float | None, float | None] = (None, None)
                  ) -> Figure:
    """In- and out-degree distributions (log-log) with their fitted power laws.

    ``expected`` gives the exponents the graph was generated with (in, out), drawn as
    dashed lines of that slope through the fit's first point.
    """
    fig = _figure(12.0, 5.2)
    ax_in, ax_out = fig.subplots(1, 2)
    _degree_panel(ax_in, laws.in_values, laws.in_counts, laws.in_fit, expected[0], "in")
    _degree_panel(ax_out, laws.out_values, laws.out_counts, laws.out_fit, expected[1], "out")
    outside_legend(fig, max_columns=2)
    return fig


def rate_timeline_figure(seconds: np.ndarray, rate: np.ndarray) -> Figure:
    """URLs fetched per second in each time bin of the crawl (``seconds``: bin ends)."""
    fig = _figure(8.0, 3.6)
    ax = fig.add_subplot()
    ax.plot(seconds, rate, "-o", markersize=3, color="#1f77b4")
    ax.fill_between(seconds, rate, alpha=0.2, color="#1f77b4")
    ax.set_xlabel("seconds since the first fetch")
    ax.set_ylabel("URLs fetched / s")
    ax.set_ylim(bottom=0)
    ax.set_title("Crawl rate over time")
    ax.grid(True, alpha=0.3)
    return fig


def rate_histogram_figure(estimated: np.ndarray, true: np.ndarray | None = None, *,
                          bins: int = 30, title: str = "Estimated change rates") -> Figure:
    """Histogram of estimated change rates (per day, log bins); with ``true`` (same
    pages, same order) also the true rates and a scatter of estimate against truth.
    Pages whose ``estimated`` is nan are left out of both panels."""
    est = estimated[np.isfinite(estimated) & (estimated > 0)]
    panels = 2 if true is not None else 1
    fig = _figure(6.0 * panels, 4.8)
    axes = np.atleast_1d(fig.subplots(1, panels))
    ax = axes[0]
    if est.size:
        lo, hi = float(est.min()), float(est.max())
        if true is not None:
            t = true[np.isfinite(true) & (true > 0)]
            lo, hi = min(lo, float(t.min(initial=lo))), max(hi, float(t.max(initial=hi)))
        edges = np.geomspace(lo, hi * 1.0001 if hi > lo else lo * 2, bins + 1)
        ax.hist(est, bins=edges, alpha=0.75, label="estimated", color="#1f77b4")
        if true is not None:
            ax.hist(true[np.isfinite(true) & (true > 0)], bins=edges, histtype="step",
                    linewidth=2, label="true", color="#d62728")
        ax.set_xscale("log")
    ax.set_xlabel("change rate (changes per day, log)")
    ax.set_ylabel("pages")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    label_log_axes(ax)
    if true is not None:
        _rate_scatter(axes[1], estimated, true)
    outside_legend(fig)
    return fig


def _rate_scatter(ax: Axes, estimated: np.ndarray, true: np.ndarray) -> None:
    ok = np.isfinite(estimated) & np.isfinite(true) & (estimated > 0) & (true > 0)
    ax.loglog(true[ok], estimated[ok], ".", alpha=0.5, color="#1f77b4")
    if ok.any():
        lim = (float(min(true[ok].min(), estimated[ok].min())),
               float(max(true[ok].max(), estimated[ok].max())))
        ax.loglog(lim, lim, "--", color="#555555", label="estimate = truth")
    ax.set_xlabel("true rate (per day)")
    ax.set_ylabel("estimated rate (per day)")
    ax.set_title("Estimate against the fixture's truth")
    ax.grid(True, alpha=0.3)
    label_log_axes(ax)


def freshness_figure(curves: Mapping[str, tuple[Any, Any]], *,
                     title: str = "Freshness of the collection") -> Figure:
    """Freshness over time: ``label -> (days, freshness)`` curves on one axes."""
    fig = _figure(8.0, 4.4)
    ax = fig.add_subplot()
    for label, (x, y) in curves.items():
        xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        ok = np.isfinite(xs) & np.isfinite(ys)
        ax.plot(xs[ok], ys[ok], "-o" if ok.sum() <= 40 else "-", markersize=3, label=label)
    ax.set_xlabel("simulated days since the first fetch")
    ax.set_ylabel("freshness (fraction of fresh copies)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    outside_legend(fig)
    return fig
