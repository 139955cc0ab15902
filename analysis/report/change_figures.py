"""The PNG figures of a change report (``webcrawl analyze changes --out DIR``).

Built on :class:`matplotlib.figure.Figure` directly: no pyplot state, no backend switch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from analysis.change.change_stats import CHANGE_BUCKETS, LIFESPAN_BUCKETS, ChangeReport

__all__ = ["plot_change_report"]


def plot_change_report(report: ChangeReport, out_dir: str | Path) -> list[Path]:
    """Write ``change_intervals.png``, ``lifespan.png``, ``unchanged.png`` and
    ``poisson.png`` into ``out_dir`` (created); return their paths."""
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []

    def subplots(figsize: tuple[float, float]) -> tuple[Figure, Any]:
        fig = Figure(figsize=figsize)
        return fig, fig.add_subplot()

    def save(fig: Figure, name: str) -> None:
        path = out / name
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        paths.append(path)

    labels = [label for label, _ in CHANGE_BUCKETS]
    x = np.arange(len(labels))
    fig, ax = subplots(figsize=(8, 4))
    rows = [("all", report.bucket_overall)] + [
        (name, row) for name, row, n in zip(report.host_names, report.bucket_by_host,
                                            report.pages_by_host, strict=True) if n > 0]
    width = 0.8 / len(rows)
    for k, (name, row) in enumerate(rows):
        ax.bar(x + k * width, row, width, label=name)
    ax.set_xticks(x + 0.4 - width / 2, labels)
    ax.set_ylabel("fraction of pages")
    ax.set_title("Average change interval")
    ax.legend(fontsize="small")
    save(fig, "change_intervals.png")

    lab = [label for label, _ in LIFESPAN_BUCKETS]
    x = np.arange(len(lab))
    fig, ax = subplots(figsize=(7, 4))
    ax.bar(x - 0.2, report.lifespan_buckets1, 0.4, label="method 1")
    ax.bar(x + 0.2, report.lifespan_buckets2, 0.4, label="method 2")
    ax.set_xticks(x, lab)
    ax.set_ylabel("fraction of pages")
    ax.set_title("Visible lifespan")
    ax.legend()
    save(fig, "lifespan.png")

    fig, ax = subplots(figsize=(7, 4))
    ax.step(report.unchanged_days, report.unchanged_fraction, where="post")
    ax.axhline(0.5, color="grey", linestyle=":")
    ax.set_xlabel("days since start")
    ax.set_ylabel("fraction unchanged")
    ax.set_ylim(0, 1.02)
    ax.set_title("Pages not yet changed")
    save(fig, "unchanged.png")

    fig, ax = subplots(figsize=(7, 4))
    xs = report.poisson.normalised
    if xs.size:
        ax.hist(xs, bins=40, density=True, log=True, label="observed")
        grid = np.linspace(0, float(xs.max()), 200)
        ax.plot(grid, np.exp(-grid), label="exponential")
        ax.legend()
    ax.set_xlabel("change interval / page's mean interval")
    if report.poisson.skipped is not None:
        ax.set_title("Poisson test skipped: too few change intervals")
    else:
        ax.set_title(f"Poisson test: KS {report.poisson.statistic:.3f}, "
                     f"p = {report.poisson.pvalue:.3g}")
    save(fig, "poisson.png")
    return paths
