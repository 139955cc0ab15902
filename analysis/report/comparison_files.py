"""The files of an ordering comparison: one PNG per quality metric plus the JSON."""

from __future__ import annotations

import json
from pathlib import Path

from webcrawl.analysis.ordering.compare import Comparison
from webcrawl.analysis.report.plots import quality_figures, save_png

__all__ = ["write_comparison"]


def write_comparison(comparison: Comparison, out_dir: str | Path, *,
                     json_name: str = "comparison.json") -> list[Path]:
    """Write one PNG per metric and the JSON of ``comparison`` into ``out_dir``
    (the ceilings drawn as labelled reference lines).

    Returns the written paths (PNGs first, JSON last).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = quality_figures(comparison.labelled_reports(),
                              ceilings=comparison.ceiling_labels())
    written = [save_png(fig, out / f"{key}.png") for key, fig in figures.items()]
    json_path = out / json_name
    json_path.write_text(json.dumps(comparison.to_dict(), indent=2) + "\n")
    written.append(json_path)
    return written
