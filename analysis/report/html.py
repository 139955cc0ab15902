"""HTML of the crawl report: the page template, tables and sections
(:mod:`webcrawl.analysis.report.document`).

Everything from the database is escaped (:func:`html.escape`); plots are embedded as PNG
``data:`` URIs, so the document has no external asset.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Section", "page", "table", "url_cell"]


@dataclass
class Section:
    """One section being written: its HTML parts and images."""

    key: str
    parts: list[str] = field(default_factory=list)
    images: int = 0
    missing: str | None = None

    def add(self, markup: str) -> None:
        self.parts.append(markup)

    def text(self, text: str) -> None:
        self.parts.append(f"<p>{html.escape(text)}</p>")

    def image(self, fig: Figure, alt: str, *, caption: str | None = None) -> None:
        from webcrawl.analysis.report.plots import png_bytes

        data = base64.b64encode(png_bytes(fig)).decode("ascii")
        below = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
        self.parts.append(f'<figure><img alt="{html.escape(alt)}" '
                          f'src="data:image/png;base64,{data}">{below}</figure>')
        self.images += 1

    def none(self, reason: str) -> None:
        self.missing = reason
        self.parts.append(f'<p class="missing">{html.escape(reason)}</p>')


def url_cell(url: str) -> str:
    """A URL as escaped inline code."""
    return f'<code class="url">{html.escape(url)}</code>'


_CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       max-width: 1180px; margin: 0 auto; padding: 0 24px 48px; background: #fafafa; }
header { border-bottom: 3px solid #d95f02; margin-bottom: 8px; }
h1 { margin: 24px 0 4px; } h2 { margin-top: 40px; border-bottom: 1px solid #ddd; }
nav ol { columns: 2; padding-left: 20px; } .sub { color: #666; margin-top: 0; }
table { border-collapse: collapse; margin: 10px 0 18px; background: #fff; }
th, td { border: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
code.url { font-size: 13px; word-break: break-all; }
figure { margin: 12px 0; } figcaption { color: #555; font-size: 14px; }
 img { max-width: 100%; border: 1px solid #e4e4e4; background: #fff; }
p.missing { background: #fff4e5; border-left: 4px solid #f0a020; padding: 8px 12px; }
section#overview p { font-size: 16px; max-width: 900px; }
details.terms { margin: 14px 0; color: #444; font-size: 14px; }
details.terms summary { cursor: pointer; color: #666; }
details.terms dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px;
                   margin: 6px 0; }
details.terms dt { font-weight: 600; } details.terms dd { margin: 0; }
"""


def page(title: str, subtitle: str, sections: Sequence[tuple[str, str, str]]) -> str:
    """The whole document: ``sections`` are ``(id, heading, inner HTML)``."""
    toc = "".join(f'<li><a href="#{key}">{html.escape(head)}</a></li>'
                  for key, head, _ in sections)
    body = "".join(f'<section id="{key}"><h2>{html.escape(head)}</h2>{inner}</section>'
                   for key, head, inner in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            f"<header><h1>{html.escape(title)}</h1><p class=\"sub\">{html.escape(subtitle)}"
            f"</p></header><nav><ol>{toc}</ol></nav>{body}</body></html>\n")


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, header: bool = True,
          raw_columns: Sequence[int] = ()) -> str:
    """An HTML table; cells are escaped except in ``raw_columns`` (already markup)."""
    def cell(j: int, value: Any) -> str:
        if j in raw_columns:
            return f"<td>{value}</td>"
        numeric = isinstance(value, int | float | np.integer | np.floating)
        text = f"{value:,}" if isinstance(value, int | np.integer) else str(value)
        return f'<td{" class=num" if numeric else ""}>{html.escape(text)}</td>'

    head = ("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in headers) + "</tr>"
            if header else "")
    body = "".join("<tr>" + "".join(cell(j, v) for j, v in enumerate(row)) + "</tr>"
                   for row in rows)
    return f"<table>{head}{body}</table>"
