"""One self-contained HTML report of a crawl database (``webcrawl report``).

:func:`build_report` reads a crawl database, runs the analyses and writes ONE HTML file:
inline CSS, every plot a PNG ``data:`` URI, no script and no external asset, so it
reads offline and can be mailed.  Sections (their ``id`` in the HTML):

``overview``    what the crawl found, in sentences computed from the data (sizes,
                coverage, duplicates, top pages, the fastest ordering, change rates)
``summary``     pages, hosts, URL outcomes, URLs fetched per second, how the report
                was made (version, command, the settings that differ from the defaults)
``ranking``     top pages by PageRank and by HITS authority
``bowtie``      the bow-tie decomposition: its numbers and a drawn diagram
``degrees``     in/out-degree distributions on log-log axes with fitted power laws
``quality``     quality over time of the crawl's own recorded order
``comparison``  virtual crawls of other orderings over the captured graph (on request)
``changes``     change-rate histogram and freshness, when the crawl was revisited

Every measurement runs on one graph, ``ReportSettings.graph`` (default ``pages``: the
fetched pages and the links among them), which each section names with its node and
link counts; under each section, the definitions of the terms it uses (see
:mod:`webcrawl.analysis.report._overview`).  A section whose data are missing (an
empty crawl, no revisits) says so instead of failing.  Every URL and text from the
database is escaped (:func:`html.escape`): page content is data, never markup.
Callers that already computed an analysis (the demo) pass it in :class:`ReportInputs`
so nothing is computed twice.

References
----------
.. [1] A. Broder et al., "Graph structure in the Web", WWW9, 2000.
.. [2] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality pages",
   WWW 2001.
.. [3] J. Cho and H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from webcrawl.analysis.report._overview import (
    glossary,
    ordering_name,
    overview_section,
    settings_rows,
)
from webcrawl.analysis.report.context import ReportContext, ReportInputs, ReportSettings
from webcrawl.analysis.report.html import Section, page, table, url_cell
from webcrawl.analysis.report.section_changes import changes_section
from webcrawl.analysis.report.section_sites import sites_part
from webcrawl.storage.errors import AnalysisError

if TYPE_CHECKING:
    from webcrawl.analysis.graph.captured import CapturedGraph
    from webcrawl.analysis.ordering.compare import Comparison
    from webcrawl.analysis.ordering.quality import QualityReport

__all__ = [
    "SECTIONS",
    "ReportSummary",
    "build_report",
    "compare_orderings",
]

#: Section id -> heading, in report order.
SECTIONS: dict[str, str] = {
    "overview": "What this crawl found",
    "summary": "Crawl summary",
    "ranking": "Top pages",
    "bowtie": "Bow-tie structure",
    "degrees": "Degree distributions",
    "quality": "Crawl quality over time",
    "comparison": "Comparison of crawl orderings",
    "changes": "Change rates and freshness",
}

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ReportSummary:
    """What :func:`build_report` wrote.

    ``sections`` maps every section id to None when it has its data, else to the
    sentence the report shows instead.  ``rate_error`` is the median relative error of
    the change-rate estimates against ``ReportInputs.true_rates`` over ``rate_pages``
    revisited pages (None without revisits or truth).  ``graph`` is the measured
    graph's :meth:`~webcrawl.analysis.graph.captured.CapturedGraph.info`; ``figures`` the
    headline numbers of the sections (``pagerank_top``: ``[url, score]`` rows,
    ``bowtie``: region counts, ``quality``: the recorded order's summary,
    ``comparison``: each ordering's summary, ``reach``: the fetchable set), the same
    numbers the CLI prints for the same database and graph.
    """

    path: Path
    sections: dict[str, str | None]
    images: int
    size_bytes: int
    pages: int
    urls: int
    hosts: int
    rate_error: float | None = None
    rate_pages: int = 0
    graph: dict[str, Any] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        """Ids of the sections that had no data."""
        return [k for k, v in self.sections.items() if v is not None]


def build_report(db_path: str | Path, out_path: str | Path, *,
                 settings: ReportSettings | None = None, inputs: ReportInputs | None = None,
                 progress: Progress | None = None) -> ReportSummary:
    """Write the HTML report of a crawl database.

    Parameters
    ----------
    db_path : str or Path
        The crawl database.
    out_path : str or Path
        The HTML file to write (folders created).
    settings : ReportSettings, optional
    inputs : ReportInputs, optional
        Analyses already computed (not recomputed) and facts only the caller knows.
    progress : callable, optional
        Called with one line per section (the CLI prints it on stderr).

    Returns
    -------
    ReportSummary

    Raises
    ------
    StoreError
        The database is missing or not a crawl database.
    ConfigError
        Bad settings (e.g. an unknown ordering to compare).

    Examples
    --------
    >>> build_report("crawl.db", "report.html").missing  # doctest: +SKIP
    ['comparison', 'changes']
    """
    settings = settings or ReportSettings()
    db, out = Path(db_path), Path(out_path)
    started = _dt.datetime.now(_dt.UTC)
    ctx = ReportContext(db, settings, inputs or ReportInputs())
    writers: dict[str, Callable[[ReportContext, Section], None]] = {
        "summary": _summary, "ranking": _ranking, "bowtie": _bowtie, "degrees": _degrees,
        "quality": _quality, "comparison": _comparison, "changes": changes_section,
    }
    sections = []
    # The overview is written last (it speaks of every other section's results) and
    # shown first.
    for key, write in [*writers.items(), ("overview", overview_section)]:
        if progress:
            progress(f"report: {SECTIONS[key].lower()}")
        section = Section(key)
        try:
            write(ctx, section)
        except AnalysisError as exc:  # empty graph, nothing to fit: say so, keep going
            section.parts.clear()
            section.none(f"Not available for this crawl: {exc}")
        sections.append(section)
    sections.insert(0, sections.pop())
    title = settings.title or f"webcrawl report: {db.name}"
    ended = _dt.datetime.now(_dt.UTC)
    generated = ended.strftime("%Y-%m-%d %H:%M UTC")
    sections[1].parts.append(_provenance(ctx, started, ended))
    for section in sections:
        section.add(glossary("".join(section.parts)))
    document = page(title, f"{db.name}, generated {generated}",
                    [(s.key, SECTIONS[s.key], "".join(s.parts)) for s in sections])
    out.parent.mkdir(parents=True, exist_ok=True)
    data = document.encode("utf-8")
    # Write beside the target and rename: a full disk leaves no partial (0-byte) report.
    partial = out.with_name(f".{out.name}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return ReportSummary(
        path=out, sections={s.key: s.missing for s in sections},
        images=sum(s.images for s in sections), size_bytes=len(data),
        pages=ctx.full.pages, urls=len(ctx.urls),
        hosts=len(ctx.host_names), rate_error=ctx.rate_error[0] if ctx.rate_error else None,
        rate_pages=ctx.rate_error[1] if ctx.rate_error else 0, graph=ctx.graph.info(),
        figures=ctx.figures)


# ----------------------------------------------------------------------------- provenance
#: What each URL outcome means, shown beside its share.
OUTCOME_MEANING = {
    "fetched": "an HTML page answered 2xx; its links are in the graph",
    "not_html": "answered 2xx but not HTML (by Content-Type or content)",
    "redirect": "answered 3xx; its target is its one link",
    "not_modified": "answered 304 to a conditional revisit",
    "http_error": "answered 4xx or 5xx after the retries",
    "network_error": "connection refused, reset or unresolved after the retries",
    "timeout": "no complete answer in time after the retries",
    "too_large": "body over the size cap (kept cut, not parsed)",
    "robots_excluded": "disallowed by the host's robots.txt, never requested",
    "robots_unreachable": "never requested: the host's robots.txt could not be fetched "
                          "(connection refused, no address, TLS, timeout or 5xx), which "
                          "RFC 9309 reads as disallow all",
    "out_of_scope": "never requested: another host or domain than the scope allows, too "
                    "deep, over a per-host or URL-shape limit, or a link to a binary file "
                    "(.pdf, images, archives)",
    "abandoned": "left in the frontier at a page limit by an older version (resumable)",
}


def webcrawl_version() -> str:
    """The installed distribution's version, else the source tree's."""
    from importlib import metadata

    try:
        return metadata.version("webcrawl")
    except metadata.PackageNotFoundError:
        from webcrawl.storage._version import __version__

        return f"{__version__} (source tree)"


def _utc(wall: float) -> str:
    return _dt.datetime.fromtimestamp(wall, _dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _provenance(ctx: ReportContext, started: _dt.datetime, ended: _dt.datetime) -> str:
    """How the report was made: enough to make it again (version, command, settings,
    times)."""
    import shlex
    import sys

    from webcrawl.storage.reader import FETCH_KINDS

    f = ctx.fetches
    rows: list[list[Any]] = [
        ["webcrawl version", webcrawl_version()],
        ["report command", shlex.join(["webcrawl", *sys.argv[1:]])
         if sys.argv and sys.argv[0].endswith(("webcrawl", "crawler/cli/__main__.py"))
         else "build_report() called from Python"],
        ["report made", f"{started.strftime('%Y-%m-%d %H:%M:%S')} to "
                        f"{ended.strftime('%H:%M:%S UTC')}"],
    ]
    for kind in ("crawl", "revisit"):
        mine = f["kind"] == FETCH_KINDS.index(kind)
        if np.any(mine):
            rows.append([f"{kind} ran", f"{_utc(float(f['started_at'][mine].min()))} to "
                                        f"{_utc(float(f['ended_at'][mine].max()))}"])
    defaults = ctx.inputs.setting_defaults
    changed, stored = settings_rows(ctx.meta.get("settings"), defaults)
    if not stored:
        rows.append(["crawl settings", "none stored (an imported or older crawl)"])
    elif defaults is None:
        rows.append(["crawl settings", f"{stored} stored with the crawl (table below)"])
    else:
        rows.append(["crawl settings", f"{stored} stored with the crawl; "
                     f"{len(changed)} differ from the defaults (table below)"
                     if changed else f"{stored} stored with the crawl, all at their "
                     "defaults"])
    out = "<h3>How this report was made</h3>" + table(["", ""], rows, header=False)
    if changed:
        heading = ("Crawl settings that differ from the defaults" if defaults is not None
                   else "Crawl settings (stored with the crawl)")
        out += f"<h3>{heading}</h3>" + table(["setting", "value", "default"], changed)
    return out


# ----------------------------------------------------------------------------- summary
def _summary(ctx: ReportContext, sec: Section) -> None:
    from webcrawl.storage.reader import FETCH_KINDS, OUTCOMES

    urls, f = ctx.urls, ctx.fetches
    crawl = f["kind"] == FETCH_KINDS.index("crawl")
    strategy = ctx.meta.get("strategy", "?")
    seeds = json.loads(ctx.meta.get("seeds", "[]"))
    rows: list[list[Any]] = [
        ["database", ctx.db.name], ["ordering", strategy],
        ["seeds", ", ".join(seeds) or "none recorded"],
        ["HTML pages fetched", ctx.full.pages],
        ["URLs fetched (any answer or failure)", _urls_fetched(urls.outcome)],
        ["URLs discovered", len(urls)], ["hosts seen (in links)", len(ctx.host_names)],
        ["measured graph (every section)", ctx.graph.describe()],
        ["fetch attempts (retries included)", int(np.count_nonzero(crawl))],
        ["revisits", int(np.count_nonzero(~crawl))],
    ]
    if np.any(crawl):
        span = float(f["ended_at"][crawl].max() - f["started_at"][crawl].min())
        rows.append(["crawl duration", f"{span:.1f} s"])
    cuts = _link_cuts(ctx)
    rows.append(["pages with links cut (links_max_per_page)", len(cuts)])
    rows += [[k, v] for k, v in ctx.inputs.facts.items()]
    sec.add(table(["", ""], rows, header=False))
    if cuts:
        sec.add("<h3>Pages whose links were cut</h3>")
        sec.add("<p>Only the first links (document order) of these pages are in the graph; "
                "raise <code>--max-links-per-page</code> to keep them all.</p>")
        sec.add(table(["page", "links kept", "links dropped"],
                      [[url, kept, dropped] for url, kept, dropped in cuts[:50]]))
    codes, counts = np.unique(urls.outcome, return_counts=True)
    outcome_rows = [[OUTCOMES[c].value if c >= 0 else "in the frontier (not taken)", int(n),
                     f"{100.0 * n / max(len(urls), 1):.1f}%",
                     OUTCOME_MEANING.get(OUTCOMES[c].value, "") if c >= 0
                     else "discovered, waiting to be fetched"]
                    for c, n in zip(codes, counts, strict=True)]
    sec.add("<h3>URL outcomes</h3>")
    sec.add(f"<p>Share of the {len(urls):,} URLs discovered (fetched or not).</p>")
    sec.add(table(["outcome", "URLs", "share", "what it means"], outcome_rows) if outcome_rows
            else "<p class='missing'>No URL recorded.</p>")
    sites_part(ctx, sec)
    if not np.any(crawl):
        sec.none("No fetch was recorded: this crawl is empty.")
        return
    _timeline(ctx, sec, f["ended_at"][crawl])


def _urls_fetched(outcome: np.ndarray) -> int:
    """URLs whose request ended (any answer or failure): what ``--max-pages`` counts."""
    from webcrawl.storage.reader import OUTCOMES
    from webcrawl.storage.records import REQUESTED

    ended = [OUTCOMES.index(o) for o in REQUESTED]
    return int(np.count_nonzero(np.isin(outcome, ended)))


def _link_cuts(ctx: ReportContext) -> list[tuple[str, int, int]]:
    """Pages cut at ``links_max_per_page``: (URL, kept, dropped), most dropped first."""
    from webcrawl.storage.reader import CrawlReader

    with CrawlReader(ctx.db) as reader:
        cuts = reader.link_cuts()
        urls = reader.url_strings([src for src, _, _ in cuts]) if cuts else []
    rows = [(url, kept, dropped) for url, (_, kept, dropped) in zip(urls, cuts, strict=True)]
    return sorted(rows, key=lambda r: -r[2])


def _timeline(ctx: ReportContext, sec: Section, ended: np.ndarray) -> None:
    from webcrawl.analysis.report.figures import rate_timeline_figure

    t = np.sort(ended - ended.min())
    span = float(t[-1])
    bins = ctx.settings.timeline_bins if span > 0 else 1
    width = span / bins if span > 0 else 1.0
    counts = np.bincount(np.minimum((t / width).astype(np.int64), bins - 1), minlength=bins)
    sec.add("<h3>URLs fetched per second</h3>")
    sec.image(rate_timeline_figure(width * np.arange(1, bins + 1), counts / width),
              "URLs fetched per second over the crawl")


# ----------------------------------------------------------------------------- ranking
def _ranking(ctx: ReportContext, sec: Section) -> None:
    from webcrawl.analysis.graph.hits_alg import hits

    scores = ctx.pagerank
    g, k = ctx.graph, ctx.settings.top_k
    auth = (ctx.inputs.hits or hits(g.adjacency)).authorities
    indeg = np.asarray(g.adjacency.astype(bool).sum(axis=0)).ravel()
    top = np.argsort(-scores, kind="stable")[:k]
    ctx.figures["pagerank_top"] = [[g.urls[i], float(scores[i])] for i in top.tolist()]
    sec.text(f"Over the {g.describe()} (PageRank with damping 0.85; scores sum to 1, so "
             f"the mean is {1.0 / g.n:.2e}).")
    sec.add(_top_table("Top pages by PageRank", g, scores, indeg, k, "PageRank"))
    sec.add(_top_table("Top pages by HITS authority", g, auth, indeg, k, "authority"))


def _top_table(title: str, g: CapturedGraph, scores: np.ndarray, indeg: np.ndarray, k: int,
               name: str) -> str:
    top = np.argsort(-scores, kind="stable")[:k]
    mean = 1.0 / scores.size
    rows = [[i + 1, url_cell(g.urls[node]), f"{scores[node]:.3e}",
             f"{scores[node] / mean:.1f}", int(indeg[node])] for i, node in enumerate(top)]
    return f"<h3>{html.escape(title)}</h3>" + table(
        ["#", "URL", name, "x mean", "in-links"], rows, raw_columns=(1,))


# ----------------------------------------------------------------------------- structure
def _bowtie(ctx: ReportContext, sec: Section) -> None:
    from webcrawl.analysis.graph.bowtie_alg import bowtie
    from webcrawl.analysis.report.figures import bowtie_figure

    bt = ctx.inputs.bowtie or bowtie(ctx.graph.adjacency)
    ctx.bowtie = bt
    ctx.figures["bowtie"] = dict(bt.counts)
    rows = [[name, count, f"{100.0 * frac:.1f}%"] for (name, count), frac in
            zip(bt.counts.items(), bt.fractions.values(), strict=True)]
    rows += [["strongly connected components", bt.n_scc, ""],
             ["weakly connected components", bt.n_wcc, ""],
             ["largest WCC", bt.largest_wcc, f"{100.0 * bt.largest_wcc / bt.n:.1f}%"]]
    sec.text(f"Broder et al.'s decomposition of the {ctx.graph.describe()}, around the "
             "largest strongly connected component (SCC): IN reaches it, OUT is reached "
             f"from it. Here the SCC holds {100.0 * bt.fractions['SCC']:.1f}% of the "
             f"nodes, IN {100.0 * bt.fractions['IN']:.1f}% and OUT "
             f"{100.0 * bt.fractions['OUT']:.1f}%.")
    sec.add(table(["region", "nodes", "share"], rows))
    sec.image(bowtie_figure(bt), "bow-tie diagram with region sizes")


def _degrees(ctx: ReportContext, sec: Section) -> None:
    from webcrawl.analysis.graph.degree_dist import degree_laws
    from webcrawl.analysis.report.figures import degree_figure

    laws = ctx.inputs.degree_laws or degree_laws(ctx.graph.adjacency)
    expected = ctx.inputs.expected_exponents
    rows: list[list[Any]] = []
    for name, fit, exp in (("in", laws.in_fit, expected[0]), ("out", laws.out_fit, expected[1])):
        if fit is None:
            rows.append([name, "too few nodes to fit", "", "", "", _opt(exp)])
        else:
            rows.append([name, f"{fit.alpha:.3f} ± {fit.sigma:.3f}", fit.x_min, fit.n_tail,
                         f"{fit.ks:.3f}", _opt(exp)])
    sec.text(f"Degrees in the {ctx.graph.describe()}.  "
             "Discrete power laws p(k) ~ k^-alpha fitted by maximum likelihood above the "
             "x_min that minimises the Kolmogorov-Smirnov distance (Clauset, Shalizi and "
             "Newman); Broder et al. measured 2.1 (in) and 2.72 (out) on the 1999 web.")
    sec.add(table(["degree", "alpha", "x_min", "tail nodes", "KS", "expected alpha"], rows))
    sec.image(degree_figure(laws, expected=expected),
              "in- and out-degree distributions on log-log axes with fitted laws")


def _opt(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


# ----------------------------------------------------------------------------- quality
def _quality(ctx: ReportContext, sec: Section) -> None:
    from webcrawl.analysis.ordering.quality import crawl_quality

    if ctx.graph.fetch_order.size == 0:
        raise AnalysisError("no fetch order was recorded (an imported graph?)")
    report = ctx.inputs.quality or crawl_quality(ctx.graph)
    ctx.figures["quality"] = dict(report.summary)
    sec.text(f"The crawl's own order ({report.pages:,} fetches) measured against the "
             f"PageRank of the {ctx.graph.describe()} (Najork and Wiener; Bennouas and de "
             "Montgolfier).")
    _quality_parts(sec, {"recorded": report}, None)


def _comparison(ctx: ReportContext, sec: Section) -> None:
    comparison = ctx.inputs.comparison
    if comparison is None:
        if not ctx.settings.compare:
            sec.none("No comparison was requested (webcrawl report --compare "
                     "bfs,dfs,random,backlink,pagerank,opic replays orderings virtually "
                     "over the captured graph).")
            return
        comparison = compare_orderings(ctx.full, ctx.graph, ctx.settings.compare)
    ctx.figures["comparison"] = {k: dict(r.summary) for k, r in comparison.reports.items()}
    sec.text("Each ordering is replayed as a virtual crawl inside the recorded crawl's "
             "reach: only URLs the crawl got an HTTP answer for are fetched (redirects "
             "as recorded), so on a finished crawl every ordering ends on the same pages. "
             f"Measured on the {comparison.graphs['graph']['description']}; 'recorded' "
             "is the real crawl's order.")
    ceilings = comparison.ceilings()
    if ceilings:
        sec.text("Ceilings are reference lines, not orderings a crawler can run (drawn "
                 "dashed, listed last): "
                 + "; ".join(f"{label}, {text}" for label, text in ceilings.items()) + ".")
    best = comparison.best_ordering()
    if best is not None:
        sec.text(f"The best ordering a crawler can run here is {ordering_name(best[0])}: "
                 "its first 10% "
                 f"of pages held {best[1]:.3f} of the final graph's PageRank (PR@10%).")
    if comparison.reach is not None:
        ctx.figures["reach"] = comparison.reach.to_dict()
        sec.add("<p>" + "<br>".join(html.escape(line)
                                    for line in comparison.reach.lines()) + "</p>")
    _quality_parts(sec, comparison.labelled_reports(),
                   ("pagerank_capture", "mean_pagerank", "top_n_fetched", "discovery_rate"),
                   comparison.ceiling_labels())
    for title, headers, rows in comparison.najork_wiener_tables():
        sec.add(f"<h3>{html.escape(title)}</h3>")
        sec.add(table(headers, [[_cell(v) for v in row] for row in rows]))


def _cell(value: Any) -> Any:
    return f"{value:.3g}" if isinstance(value, float) else value


def compare_orderings(full_graph: CapturedGraph, graph: CapturedGraph,
                      strategies: Sequence[str], *,
                      progress: Progress | None = None) -> Comparison:
    """The report's (and the demo's) virtual comparison: the recorded order and replays
    of ``strategies`` over the ``all`` graph ``full_graph``, measured on ``graph`` (of
    the same database), with :func:`webcrawl.analysis.ordering.compare.virtual_comparison`, as
    ``webcrawl compare --virtual``."""
    from webcrawl.analysis.ordering.compare import CompareSettings, virtual_comparison

    if full_graph.fetch_order.size == 0:
        raise AnalysisError("no page was crawled")
    return virtual_comparison(full_graph, strategies, measured=graph,
                              settings=CompareSettings(graph=graph.kind), progress=progress)


def _quality_parts(sec: Section, reports: Mapping[str, QualityReport],
                   keys: Sequence[str] | None, ceilings: Sequence[str] = ()) -> None:
    from webcrawl.analysis.ordering.quality import summary_label
    from webcrawl.analysis.report.plots import METRIC_TITLES, quality_figures

    summary_keys = list(dict.fromkeys(k for r in reports.values() for k in r.summary))
    rows = [[name, r.pages, *(f"{r.summary.get(k, math.nan):.3f}" for k in summary_keys)]
            for name, r in reports.items()]
    sec.add(table(["order", "pages", *(summary_label(k) for k in summary_keys)], rows))
    if len(reports) == 1:
        report = next(iter(reports.values()))
        sec.add("<h3>Average slice on which the top-N pages were fetched (Najork and "
                f"Wiener; slice 1 = first 1/{report.slice_ends.size} of the crawl)</h3>")
        sec.add(table(["top N", "mean slice", "fetched"],
                      [[n, _cell(mean), f"{count} of {n}"]
                       for n, (mean, count) in report.top_mean_slice.items()]))
    for key, fig in quality_figures(reports, ceilings=ceilings).items():
        if keys is None or key in keys:
            sec.image(fig, METRIC_TITLES[key])
