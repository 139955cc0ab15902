"""PNG line plots for the quality metrics (matplotlib, Agg backend, no pyplot state).

One figure per metric, one curve per crawl order (strategy), axes labelled, log axes
where the early crawl matters.  The layout rules every figure of the report follows
live here too: :func:`label_log_axes` (every log axis shows at least two labelled
ticks), :func:`outside_legend` (one legend below the axes, never over the data) and
:func:`fit_title` (a figure title wrapped to the figure's width, never cut).
Figures are built on :class:`matplotlib.figure.Figure` directly, so plotting is
thread-safe and never opens a window; :func:`png_bytes` gives the encoded image for
embedding (the HTML report), :func:`save_png` writes a file.

Examples
--------
>>> fig = line_figure([Panel("Demo", "x", "y", {"a": ([1, 2, 3], [1, 4, 9])})])
>>> png_bytes(fig)[:4] == b"\\x89PNG"
True
"""

from __future__ import annotations

import io
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from webcrawl.analysis.ordering.quality import QualityReport

__all__ = [
    "METRIC_TITLES",
    "Panel",
    "fit_title",
    "label_log_axes",
    "line_figure",
    "outside_legend",
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
    height = _PANEL_SIZE[1] * rows + 0.5 + (0.4 if title else 0)  # + legend, + title
    fig = Figure(figsize=(_PANEL_SIZE[0] * cols, height), dpi=_DPI, layout="constrained")
    labels = list(dict.fromkeys(label for p in panels for label in p.curves))
    palette = colors or _palette(labels)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, panel in zip(axes, panels, strict=False):
        _draw(ax, panel, palette)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    outside_legend(fig)
    if title:
        fit_title(fig, title)
    return fig


_LEGEND_FONT = 9.0
#: Fewest labelled major ticks on a log axis.
MIN_LOG_LABELS = 2
# Tick multiples tried, in order, when the decades alone give too few labelled ticks.
_LOG_SUBS = ((1.0, 2.0, 5.0), (1.0, 2.0, 3.0, 5.0, 7.0), tuple(float(k) for k in range(1, 10)))


def label_log_axes(ax: Any) -> None:
    """Give every log-scaled axis of ``ax`` at least :data:`MIN_LOG_LABELS` labelled
    major ticks inside its view.

    Matplotlib labels only the powers of ten, so an axis spanning 0.3 to 6 shows one
    label (``10^0``) and cannot be read.  Such an axis gets ticks at 1, 2 and 5 times
    the powers of ten (more multiples if still too few), labelled in plain numbers.
    Call it last, once the data and limits are set.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() != "log":
            continue
        lo, hi = sorted(limits)
        if _ticks_inside(LogLocator(base=10.0), lo, hi) >= MIN_LOG_LABELS:
            continue
        locator: Any = MaxNLocator(nbins=4)  # a view narrower than any multiple's step
        for subs in _LOG_SUBS:
            if _ticks_inside(LogLocator(base=10.0, subs=subs), lo, hi) >= MIN_LOG_LABELS:
                locator = LogLocator(base=10.0, subs=subs)
                break
        axis.set_major_locator(locator)
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())


def _ticks_inside(locator: Any, lo: float, hi: float) -> int:
    ticks = np.asarray(locator.tick_values(lo, hi))
    return int(np.count_nonzero((ticks >= lo) & (ticks <= hi)))


def outside_legend(fig: Figure, *, max_columns: int = 4) -> None:
    """One legend for the whole figure, below every axes (constrained layout makes
    room), so it never covers data, however the curves fall; each label once."""
    handles: dict[str, Any] = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if not handles:
        return
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    # As many columns as fit the figure's width (each as wide as the longest label
    # plus its line sample and padding, in points).
    font = FontProperties(size=_LEGEND_FONT)
    widest = max(text_to_path.get_text_width_height_descent(label, font, ismath=False)[0]
                 for label in handles) + 4.5 * _LEGEND_FONT
    fits = int(0.95 * fig.get_figwidth() * 72.0 // widest)
    fig.legend(list(handles.values()), list(handles), loc="outside lower center",
               ncols=max(1, min(len(handles), max_columns, fits)), fontsize=_LEGEND_FONT)


def fit_title(fig: Figure, title: str) -> None:
    """``fig.suptitle(title)`` wrapped onto as many lines as it needs to fit the
    figure's width (a long title is otherwise cut at both edges)."""
    import textwrap

    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    font = FontProperties(size="large")
    room = 0.94 * fig.get_figwidth() * 72.0  # points; the text's widths are in points
    lines = [title]
    for width in range(len(title), 10, -1):
        lines = textwrap.wrap(title, width) or [title]
        if max(text_to_path.get_text_width_height_descent(line, font, ismath=False)[0]
               for line in lines) <= room:
            break
    fig.suptitle("\n".join(lines), fontproperties=font)


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
    label_log_axes(ax)


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


#: How a ceiling's curve is drawn: a reference line, not a contestant.
CEILING_STYLE: dict[str, Any] = {"color": "0.35", "linestyle": "--", "linewidth": 1.2}


def quality_figures(reports: Mapping[str, QualityReport], *,
                    subtitle: str | None = None,
                    ceilings: Collection[str] = ()) -> dict[str, Figure]:
    """One figure per metric of :data:`METRIC_TITLES`, one curve per report.

    Parameters
    ----------
    reports : mapping
        Curve label (strategy name) -> :class:`webcrawl.analysis.ordering.quality.QualityReport`.
    subtitle : str, optional
        Appended to each figure's title; default the measured graph's description
        (``graph of fetched pages: N pages, M links``).
    ceilings : collection of str
        Labels of ``reports`` that are ceilings (``ideal (ceiling)``): drawn as grey
        dashed reference lines (:data:`CEILING_STYLE`), out of the palette.
    """
    if not reports:
        return {}
    colors = _palette([label for label in reports if label not in ceilings])
    styles = {label: CEILING_STYLE for label in ceilings}
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
        for panel in metric_panels:
            panel.styles = styles
        title = METRIC_TITLES[key] + (f" ({subtitle})" if subtitle else "")
        figures[key] = line_figure(metric_panels, title=title, colors=colors)
    return figures


def _shared_keys(dicts: Any) -> list[int]:
    """Sorted keys present in any of the dicts (each panel skips reports without it)."""
    keys: set[int] = set()
    for d in dicts:
        keys.update(d)
    return sorted(keys)
