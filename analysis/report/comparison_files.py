"""The files of an ordering comparison: one PNG per quality metric plus the JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from webcrawl.analysis.ordering.compare import Comparison
from webcrawl.analysis.report.plots import (
    CEILING_STYLE,
    Panel,
    line_figure,
    quality_figures,
    save_png,
)
from webcrawl.storage.output import write_output

__all__ = ["write_comparison"]


def write_comparison(comparison: Comparison, out_dir: str | Path, *,
                     json_name: str = "comparison.json") -> list[Path]:
    """Write one PNG per metric and the JSON of ``comparison`` into ``out_dir``
    (the ceilings drawn as labelled reference lines); a timed comparison adds
    ``capture_over_time.png``, titled with its politeness and transfer-time model.

    Returns the written paths (PNGs first, JSON last).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = quality_figures(comparison.labelled_reports(),
                              ceilings=comparison.ceiling_labels())
    written = [save_png(fig, out / f"{key}.png") for key, fig in figures.items()]
    if comparison.clock:
        written.append(save_png(_time_figure(comparison), out / "capture_over_time.png"))
    written.append(write_output(out / json_name,
                                json.dumps(comparison.to_dict(), indent=2) + "\n"))
    return written


def _time_figure(comparison: Comparison) -> Any:
    """PageRank captured over simulated hours, one curve per timed ordering."""
    from webcrawl.analysis.ordering.ceilings import display_label

    curves = {("recorded (the real crawl, wall clock)" if label == "recorded"
               else display_label(label)): (info["hours"], info["capture"])
              for label, info in comparison.clock.items()}
    styles = {label: CEILING_STYLE for label in comparison.ceiling_labels()}
    timing = comparison.timing
    title = "Simulated time"
    if timing:
        title += f": {timing['politeness']}; {timing['transfer']['description']}"
    return line_figure([Panel("PageRank captured over simulated time", "simulated hours",
                              "share of PageRank", curves, ylim=(0.0, 1.0),
                              styles=styles)], title=title)
