"""Geometry checks of a matplotlib figure, measured on the drawn figure (Agg renderer).

:func:`layout_problems` lists what a reader would see as a defect: text cut at the
figure's edge, a log axis with fewer than two labelled ticks, a legend over plotted data
or over other text.  Shared by the figure-layout tests and the report tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Bbox

#: Pixels a text may reach past the figure's edge (anti-aliasing).
EDGE_TOLERANCE = 1.0
#: Points sampled on each drawn line segment when testing it against a legend.
SEGMENT_SAMPLES = 25


def draw(fig: Figure) -> Any:
    """Draw ``fig`` with Agg (runs the constrained layout) and return the renderer."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _texts(fig: Figure) -> list[Text]:
    """The texts the drawn figure shows (tick labels only for ticks inside the view)."""
    tick_labels: set[int] = set()
    shown: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                for label in (tick.label1, tick.label2):
                    tick_labels.add(id(label))
                    if ax.axison and lo <= tick.get_loc() <= hi:  # axis("off"): none
                        shown.add(id(label))
    out = []
    for text in fig.findobj(Text):
        if not (text.get_visible() and text.get_text().strip()):
            continue
        if text.axes is not None and not text.axes.get_visible():
            continue
        if id(text) in tick_labels and id(text) not in shown:
            continue
        out.append(text)
    return out


def _legend_texts(fig: Figure) -> set[int]:
    ids: set[int] = set()
    for legend in _legends(fig):
        ids.update(id(t) for t in legend.findobj(Text))
    return ids


def _legends(fig: Figure) -> list[Legend]:
    found = list(fig.legends)
    found += [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return [lg for lg in found if lg.get_visible()]


def log_axis_labels(ax: Any, which: str) -> list[str]:
    """The non-empty labels of the major ticks inside the view of a drawn axis."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    lo, hi = sorted(axis.get_view_interval())
    return [t.label1.get_text() for t in axis.get_major_ticks()
            if t.label1.get_visible() and t.label1.get_text().strip()
            and lo <= t.get_loc() <= hi]


def _data_points(ax: Any, renderer: Any) -> np.ndarray:
    """Display coordinates of the plotted data: line vertices and points along every
    segment, marker centres, and the corners and centre of every bar."""
    points: list[np.ndarray] = []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = np.asarray(line.get_xydata(), dtype=float)
        xy = xy[np.isfinite(xy).all(axis=1)]
        if xy.size == 0:
            continue
        disp = line.get_transform().transform(xy)
        if len(disp) > 1 and line.get_linestyle() not in ("None", "", " "):
            t = np.linspace(0.0, 1.0, SEGMENT_SAMPLES)[:, None, None]
            seg = disp[:-1][None] * (1 - t) + disp[1:][None] * t
            points.append(seg.reshape(-1, 2))
        points.append(disp)
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_visible() and patch.get_height():
            box = patch.get_window_extent(renderer)
            points.append(np.array([[box.x0, box.y0], [box.x1, box.y1], [box.x0, box.y1],
                                    [box.x1, box.y0], [(box.x0 + box.x1) / 2,
                                                       (box.y0 + box.y1) / 2]]))
    for coll in ax.collections:
        if isinstance(coll, Collection) and coll.get_visible():
            offsets = coll.get_offsets()
            if len(offsets):
                points.append(coll.get_offset_transform().transform(offsets))
    return np.concatenate(points) if points else np.zeros((0, 2))


def _inside(points: np.ndarray, box: Bbox) -> int:
    if points.size == 0:
        return 0
    return int(np.count_nonzero((points[:, 0] > box.x0) & (points[:, 0] < box.x1)
                                & (points[:, 1] > box.y0) & (points[:, 1] < box.y1)))


def layout_problems(fig: Figure) -> list[str]:
    """Every layout defect of ``fig``, as sentences (empty: none)."""
    renderer = draw(fig)
    problems: list[str] = []
    frame = fig.bbox
    for text in _texts(fig):
        box = text.get_window_extent(renderer)
        if (box.x0 < frame.x0 - EDGE_TOLERANCE or box.x1 > frame.x1 + EDGE_TOLERANCE
                or box.y0 < frame.y0 - EDGE_TOLERANCE or box.y1 > frame.y1 + EDGE_TOLERANCE):
            problems.append(f"text {text.get_text()!r} is cut at the figure's edge")
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for which in ("x", "y"):
            scale = ax.get_xscale() if which == "x" else ax.get_yscale()
            if scale == "log" and len(log_axis_labels(ax, which)) < 2:
                problems.append(f"log {which} axis of {ax.get_title()!r} shows "
                                f"{log_axis_labels(ax, which)} only")
    in_legend = _legend_texts(fig)
    for legend in _legends(fig):
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            if not ax.get_visible():
                continue
            covered = _inside(_data_points(ax, renderer), box)
            if covered:
                problems.append(f"the legend covers {covered} data points of "
                                f"{ax.get_title()!r}")
        for text in _texts(fig):
            if id(text) in in_legend:
                continue
            if box.overlaps(text.get_window_extent(renderer)):
                problems.append(f"the legend overlaps the text {text.get_text()!r}")
    return problems
