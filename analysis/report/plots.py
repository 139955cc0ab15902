"""PNG line plots for the quality metrics (matplotlib, Agg backend, no pyplot state).

One figure per metric, one curve per crawl order (strategy), axes labelled, log axes
where the early crawl matters.  Figures are built on :class:`matplotlib.figure.Figure`
directly, so plotting is thread-safe and never opens a window; :func:`png_bytes` gives
the encoded image for embedding (the HTML report), :func:`save_png` writes a file.

Examples
--------
>>> fig = line_figure([Panel("Demo", "x", "y", {"a": ([1, 2, 3], [1, 4, 9])})])
>>> png_bytes(fig)[:4] == b"\\x89PNG"
True
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from analysis.ordering.quality import QualityReport

__all__ = [
    "METRIC_TITLES",
    "Panel",
    "line_figure",
    "png_bytes",
    "quality_figures",
    "save_png",
]

#: Metric key -> figure title (also the PNG file stem used by ``webcrawl compare``).
METRIC_TITLES = {
    "pagerank_capture": "PageRank captured after k pages",
    "mean_pagerank": "Average PageRank of the pages fetched in each slice",
    "top_n_fetched": "Fraction of the top-N pages fetched",
    "top_n_overlap": "Top-N of the partial graph vs. top-N of the final graph",
    "discovery_rate": "Discovery rate: links to URLs already seen",
    "sink_fraction": "Fraction of sinks among crawled pages",
}

#: Most points drawn per curve; longer curves are thinned (log-spaced) first.
MAX_POINTS = 2000
_DPI = 110
_PANEL_SIZE = (6.4, 4.2)


@dataclass
class Panel:
    """One set of axes: curves are ``label -> (x, y)``."""

    title: str
    xlabel: str
    ylabel: str
    curves: Mapping[str, tuple[Any, Any]]
    logx: bool = False
    logy: bool = False
    ylim: tuple[float, float] | None = None
    styles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def line_figure(panels: Sequence[Panel], *, title: str | None = None,
                colors: Mapping[str, Any] | None = None) -> Figure:
    """A figure with one axes per panel (side by side, wrapping after two)."""
    from matplotlib.figure import Figure

    cols = min(2, len(panels))
    rows = -(-len(panels) // cols)
    fig = Figure(figsize=(_PANEL_SIZE[0] * cols, _PANEL_SIZE[1] * rows + (0.4 if title else 0)),
                 dpi=_DPI, layout="constrained")
    labels = list(dict.fromkeys(label for p in panels for label in p.curves))
    palette = colors or _palette(labels)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, panel in zip(axes, panels, strict=False):
        _draw(ax, panel, palette)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig


def _draw(ax: Any, panel: Panel, palette: Mapping[str, Any]) -> None:
    from matplotlib.ticker import NullFormatter

    drawn = False
    for label, (x, y) in panel.curves.items():
        xs, ys = _thin(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
        ok = np.isfinite(xs) & np.isfinite(ys)
        if panel.logx:
            ok &= xs > 0
        if panel.logy:
            ok &= ys > 0
        if not ok.any():
            continue
        style = {"color": palette.get(label), "linewidth": 1.6, **panel.styles.get(label, {})}
        marker = "o" if ok.sum() <= 30 else None
        ax.plot(xs[ok], ys[ok], label=label, marker=marker, markersize=3, **style)
        drawn = True
    ax.set_title(panel.title, fontsize=11)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    if panel.logx and drawn:
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # 2x10^2, 3x10^2, ... overlap
    if panel.logy and drawn:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    if panel.ylim is not None:
        ax.set_ylim(*panel.ylim)
    ax.grid(True, which="major", alpha=0.3)
    if drawn:
        ax.legend(fontsize=9)


def _palette(labels: Sequence[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return {label: cmap(i % 10) for i, label in enumerate(labels)}


def _thin(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep at most :data:`MAX_POINTS` points, log-spaced by index (dense at the start)."""
    if x.size <= MAX_POINTS:
        return x, y
    idx = np.unique(np.rint(np.geomspace(1, x.size, MAX_POINTS)).astype(np.int64) - 1)
    return x[idx], y[idx]


def png_bytes(fig: Figure) -> bytes:
    """The figure encoded as PNG."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def save_png(fig: Figure, path: str | Path) -> Path:
    """Write the figure as a PNG file (folders created as needed) and return the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(png_bytes(fig))
    return out


def quality_figures(reports: Mapping[str, QualityReport], *,
                    subtitle: str | None = None) -> dict[str, Figure]:
    """One figure per metric of :data:`METRIC_TITLES`, one curve per report.

    Parameters
    ----------
    reports : mapping
        Curve label (strategy name) -> :class:`analysis.ordering.quality.QualityReport`.
    subtitle : str, optional
        Appended to each figure's title; default the measured graph's description
        (``graph of fetched pages: N pages, M links``).
    """
    if not reports:
        return {}
    colors = _palette(list(reports))
    any_report = next(iter(reports.values()))
    if subtitle is None:
        subtitle = any_report.graph.get("description")
    pr = "remote-links PageRank" if any_report.remote_only else "PageRank"
    by_time = any_report.slice_end_seconds is not None
    x_label = "seconds since crawl start (end of slice)" if by_time else "pages crawled"

    def slice_x(r: QualityReport) -> np.ndarray:
        return r.slice_end_seconds if r.slice_end_seconds is not None else r.slice_ends

    panels: dict[str, list[Panel]] = {
        "pagerank_capture": [Panel(
            "cumulative fraction of total " + pr, "pages crawled (log)",
            f"fraction of total {pr}",
            {s: (np.arange(1, r.capture.size), r.capture[1:]) for s, r in reports.items()},
            logx=True, ylim=(0.0, 1.02))],
        "mean_pagerank": [Panel(
            f"average {pr} per slice (mean over all pages = 1)", x_label,
            f"average {pr} of the slice's pages (log)",
            {s: (slice_x(r), r.mean_pagerank) for s, r in reports.items()}, logy=True)],
        "top_n_fetched": [Panel(
            f"top-{n} pages by final {pr}", "pages crawled", "fraction fetched",
            {s: (r.slice_ends, r.top_fetched[n]) for s, r in reports.items()
             if n in r.top_fetched}, ylim=(-0.02, 1.02))
            for n in _shared_keys(r.top_fetched for r in reports.values())],
        "top_n_overlap": [Panel(
            f"top-{n}: partial graph vs final graph", "pages crawled",
            "overlap fraction",
            {s: (r.checkpoint_pages, r.overlap[n]) for s, r in reports.items()
             if n in r.overlap}, ylim=(-0.02, 1.02))
            for n in _shared_keys(r.overlap for r in reports.values())],
        "discovery_rate": [
            Panel("target already known (seed, fetched or linked)", x_label,
                  "probability per link", {s: (slice_x(r), r.discovery_known)
                                           for s, r in reports.items()}, ylim=(-0.02, 1.02)),
            Panel("target already crawled (random-web-crawls)", x_label,
                  "probability per link", {s: (slice_x(r), r.discovery_crawled)
                                           for s, r in reports.items()}, ylim=(-0.02, 1.02))],
        "sink_fraction": [Panel(
            "crawled pages with no crawled successor", x_label, "fraction of crawled pages",
            {s: (slice_x(r), r.sinks) for s, r in reports.items()}, ylim=(-0.02, 1.02))],
    }
    figures = {}
    for key, metric_panels in panels.items():
        if not metric_panels:
            continue
        title = METRIC_TITLES[key] + (f" ({subtitle})" if subtitle else "")
        figures[key] = line_figure(metric_panels, title=title, colors=colors)
    return figures


def _shared_keys(dicts: Any) -> list[int]:
    """Sorted keys present in any of the dicts (each panel skips reports without it)."""
    keys: set[int] = set()
    for d in dicts:
        keys.update(d)
    return sorted(keys)
