"""The PNG figures of a change report (``webcrawl analyze changes --out DIR``).

Built on :class:`matplotlib.figure.Figure` directly: no pyplot state, no backend switch.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from webcrawl.analysis.change.change_stats import (
    CENSORED_LABEL,
    CHANGE_BUCKETS,
    LIFESPAN_BUCKETS,
    ChangeReport,
)
from webcrawl.analysis.report.plots import fit_title, label_log_axes, outside_legend, save_png

__all__ = ["plot_change_report"]


def plot_change_report(report: ChangeReport, out_dir: str | Path) -> list[Path]:
    """Write ``change_intervals.png``, ``change_intervals_by_domain.png``,
    ``lifespan.png``, ``unchanged.png`` and ``poisson.png`` into ``out_dir``
    (created); return their paths."""
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []

    def subplots(figsize: tuple[float, float]) -> tuple[Figure, Any]:
        fig = Figure(figsize=figsize, layout="constrained")
        return fig, fig.add_subplot()

    def save(fig: Figure, name: str) -> None:
        path = out / name
        for ax in fig.axes:
            label_log_axes(ax)
        outside_legend(fig)
        paths.append(save_png(fig, path))

    labels = [label for label, _ in CHANGE_BUCKETS] + [CENSORED_LABEL.replace(" (", "\n(")]
    x = np.arange(len(labels))
    for name, names, table, counts in (
            ("change_intervals.png", report.host_names, report.bucket_by_host,
             report.pages_by_host),
            ("change_intervals_by_domain.png", report.class_names, report.bucket_by_class,
             report.pages_by_class)):
        rows = [("all", report.bucket_overall)] + [
            (label, row) for label, row, n in zip(names, table, counts, strict=True) if n > 0]
        # The legend (4 columns) sits below the bars: the figure grows with its rows.
        fig, ax = subplots(figsize=(9, 4 + 0.22 * math.ceil(len(rows) / 4)))
        width = 0.8 / len(rows)
        for k, (label, row) in enumerate(rows):
            bars = ax.bar(x + k * width, row, width, label=label)
            bars[-1].set_hatch("//")   # censored: not an interval bucket
        ax.set_xticks(x + 0.4 - width / 2, labels, fontsize="small")
        ax.set_ylabel("fraction of pages")
        fit_title(fig, f"Average change interval ({report.window_days:.3g}-day window; "
                       "hatched: no change seen, censored)")
        save(fig, name)

    lab = [label for label, _ in LIFESPAN_BUCKETS]
    x = np.arange(len(lab))
    fig, ax = subplots(figsize=(7, 4))
    ax.bar(x - 0.2, report.lifespan_buckets1, 0.4, label="method 1")
    ax.bar(x + 0.2, report.lifespan_buckets2, 0.4, label="method 2")
    ax.set_xticks(x, lab)
    ax.set_ylabel("fraction of pages")
    ax.set_title(f"Visible lifespan ({report.window_days:.3g}-day window)")
    save(fig, "lifespan.png")

    fig, ax = subplots(figsize=(7, 4))
    ax.step(report.unchanged_days, report.unchanged_fraction, where="post")
    ax.axhline(0.5, color="grey", linestyle=":")
    ax.set_xlabel("days since start")
    ax.set_ylabel("fraction unchanged")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"Pages not yet changed ({report.window_days:.3g}-day window)")
    save(fig, "unchanged.png")

    fig, ax = subplots(figsize=(7, 4))
    xs = report.poisson.normalised
    null = report.poisson.null_normalised
    if xs.size:
        top = float(max(xs.max(), null.max() if null.size else 0.0))
        bins = np.linspace(0.0, top, 41)
        ax.hist(xs, bins=bins, density=True, log=True, label="observed")
        if null.size:
            # The test's null: Poisson pages seen through the same visits (the visit
            # grid hides and shifts changes, so this is not Exp(1)).
            ax.hist(null, bins=bins, density=True, log=True, histtype="step", linewidth=2,
                    label="simulated Poisson null")
    ax.set_xlabel("change interval / page's mean interval")
    ax.set_ylabel("density (log)")
    if report.poisson.skipped is not None:
        ax.set_title(f"Poisson test skipped: too few change intervals "
                     f"({report.window_days:.3g}-day window)")
    else:
        ax.set_title(f"Poisson test ({report.window_days:.3g}-day window): "
                     f"KS {report.poisson.statistic:.3f}, "
                     f"p = {report.poisson.pvalue:.3g}")
    save(fig, "poisson.png")
    return paths
