"""The report's table of sites served under more than one host name (mirrors).

Part of the summary section (:mod:`webcrawl.analysis.report.document`): the mirrored
hosts the loader merged into one site (:mod:`webcrawl.analysis.graph.sites`), so a
reader knows which host names every host-based figure of the report (remote links,
host counts, the orderings' site-level rules) counts as one site.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webcrawl.analysis.graph.sites import MIRROR_MIN_SHARE, MIRROR_MIN_SHARED
from webcrawl.analysis.report.html import Section, table

if TYPE_CHECKING:
    from webcrawl.analysis.report.context import ReportContext

__all__ = ["sites_part"]

#: Mirror groups listed (the most shared documents first); the rest are counted.
MIRRORS_LISTED = 20


def sites_part(ctx: ReportContext, sec: Section) -> None:
    """Add the "Sites served under more than one name" part to ``sec``."""
    mirrors = ctx.graph.mirrors
    sec.add("<h3>Sites served under more than one name</h3>")
    rule = (f"Hosts that serve identical pages for at least {MIRROR_MIN_SHARE:.0%} of the "
            f"smaller host's pages (and {MIRROR_MIN_SHARED} documents or more) are one "
            "site: a mirror, an http and https copy, a www. alias.  Every host-based "
            "figure (remote links, host counts, the orderings that choose by site) "
            "counts them as one site, named by the host other sites link to most; a "
            "page merged from copies is shown at its copy on that host.")
    if not mirrors:
        sec.text("None: no two hosts of this crawl serve the same documents.  " + rule)
        return
    sec.text(rule)
    rows = [[", ".join(m.hosts), ", ".join(f"{p:,}" for p in m.pages), m.shared]
            for m in mirrors[:MIRRORS_LISTED]]
    sec.add(table(["hosts (site name first)", "pages fetched on each", "shared documents"],
                  rows))
    if len(mirrors) > MIRRORS_LISTED:
        sec.text(f"... and {len(mirrors) - MIRRORS_LISTED:,} more mirrored sites.")
