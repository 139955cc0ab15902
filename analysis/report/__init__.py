"""Presentation: the self-contained HTML report and every figure.

The only place that imports matplotlib, always through the :class:`matplotlib.figure.Figure` API.
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
    ReportContext,
    ReportInputs,
    ReportSettings,
)
from webcrawl.analysis.report.document import (
    SECTIONS,
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
from webcrawl.analysis.report.html import (
    Section,
    page,
    table,
    url_cell,
)
from webcrawl.analysis.report.plots import (
    METRIC_TITLES,
    Panel,
    fit_title,
    label_log_axes,
    line_figure,
    outside_legend,
    png_bytes,
    quality_figures,
    save_png,
)
from webcrawl.analysis.report.section_changes import (
    DAY_SECONDS_KEYS,
    changes_section,
)

__all__ = [
    "DAY_SECONDS_KEYS",
    "METRIC_TITLES",
    "SECTIONS",
    "Panel",
    "ReportContext",
    "ReportInputs",
    "ReportSettings",
    "ReportSummary",
    "Section",
    "along_figure",
    "bowtie_figure",
    "build_report",
    "changes_section",
    "compare_orderings",
    "degree_figure",
    "fit_title",
    "freshness_figure",
    "label_log_axes",
    "line_figure",
    "outside_legend",
    "page",
    "plot_change_report",
    "png_bytes",
    "quality_figures",
    "rate_histogram_figure",
    "rate_timeline_figure",
    "save_png",
    "table",
    "url_cell",
    "write_comparison",
]
