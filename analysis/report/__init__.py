"""Presentation: the self-contained HTML report and every figure.

The only place that imports matplotlib, always through the :class:`matplotlib.figure.Figure` API.
``build_report("crawl.db", "report.html", settings=ReportSettings())`` writes what
``webcrawl report`` writes; each figure function returns a ``Figure`` (``save_png`` writes one).
"""

from __future__ import annotations

from webcrawl.analysis.report.along_figures import (
    along_figure,
)
from webcrawl.analysis.report.change_figures import (
    plot_change_report,
)
from webcrawl.analysis.report.comparison_files import (
    write_comparison,
)
from webcrawl.analysis.report.context import (
    ReportInputs,
    ReportSettings,
)
from webcrawl.analysis.report.document import (
    ReportSummary,
    build_report,
    compare_orderings,
)
from webcrawl.analysis.report.figures import (
    bowtie_figure,
    degree_figure,
    freshness_figure,
    rate_histogram_figure,
    rate_timeline_figure,
)
from webcrawl.analysis.report.plots import (
    png_bytes,
    quality_figures,
    save_png,
)

__all__ = [
    "ReportInputs",
    "ReportSettings",
    "ReportSummary",
    "along_figure",
    "bowtie_figure",
    "build_report",
    "compare_orderings",
    "degree_figure",
    "freshness_figure",
    "plot_change_report",
    "png_bytes",
    "quality_figures",
    "rate_histogram_figure",
    "rate_timeline_figure",
    "save_png",
    "write_comparison",
]
