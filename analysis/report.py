"""One self-contained HTML report of a crawl database (``webcrawl report``).

:func:`build_report` reads a crawl database, runs the analyses and writes ONE HTML file:
inline CSS, every plot a PNG ``data:`` URI, no script and no external asset, so it
reads offline and can be mailed.  Sections (their ``id`` in the HTML):

``summary``     pages, hosts, URL outcomes, pages per second over time
``ranking``     top pages by PageRank and by HITS authority
``bowtie``      the bow-tie decomposition: its numbers and a drawn diagram
``degrees``     in/out-degree distributions on log-log axes with fitted power laws
``quality``     quality over time of the crawl's own recorded order
``comparison``  virtual crawls of other orderings over the captured graph (on request)
``changes``     change-rate histogram and freshness, when the crawl was revisited

A section whose data are missing (an empty crawl, no revisits) says so instead of
failing.  Every URL and text from the database is escaped (:func:`html.escape`): page
content is data, never markup.  Callers that already computed an analysis (the demo)
pass it in :class:`ReportInputs` so nothing is computed twice.

References
----------
.. [1] A. Broder et al., "Graph structure in the Web", WWW9, 2000.
.. [2] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality pages",
   WWW 2001.
.. [3] J. Cho and H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from storage.errors import AnalysisError, ConfigError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from analysis.bowtie import BowTie
    from analysis.change_stats import VisitLog
    from analysis.degrees import DegreeLaws
    from analysis.graph import CapturedGraph
    from analysis.hits import HitsResult
    from analysis.quality import QualityReport

__all__ = ["SECTIONS", "ReportInputs", "ReportSettings", "ReportSummary", "build_report"]

#: Section id -> heading, in report order.
SECTIONS: dict[str, str] = {
    "summary": "Crawl summary",
    "ranking": "Top pages",
    "bowtie": "Bow-tie structure",
    "degrees": "Degree distributions",
    "quality": "Crawl quality over time",
    "comparison": "Comparison of crawl orderings",
    "changes": "Change rates and freshness",
}
#: Meta keys that may give the length of a day on the revisit clock (seconds).
DAY_SECONDS_KEYS = ("revisit_day_seconds", "day_seconds")
SECONDS_PER_DAY = 86400.0

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ReportSettings:
    """What the report shows.

    Attributes
    ----------
    top_k : int
        Rows of the top-pages tables (default 20).
    timeline_bins : int
        Time bins of the pages-per-second plot (default 40).
    rate_bins : int
        Bins of the change-rate histogram (default 30).
    freshness_points : int
        Time points of the freshness curves (default 60).
    compare : tuple of str
        Orderings replayed virtually over the captured graph for the comparison
        section (default none: the section says how to ask for it).
    seconds_per_day : float or None
        Length of a day on the crawl's clock for change rates; None reads the meta keys
        :data:`DAY_SECONDS_KEYS` (an accelerated revisit records its own) and falls back
        to 86400.
    rate_prior_changes, rate_prior_days : float
        The Gamma prior of the change-rate estimates (:func:`analysis.changes.map_rate`,
        defaults 0.1 and 1.0: weak, so one change timed by Last-Modified decides a fast
        page's rate, while a page never seen changing still gets a positive rate).
    title : str or None
        Page title (default ``webcrawl report: <file name>``).
    """

    top_k: int = 20
    timeline_bins: int = 40
    rate_bins: int = 30
    freshness_points: int = 60
    compare: tuple[str, ...] = ()
    seconds_per_day: float | None = None
    rate_prior_changes: float = 0.1
    rate_prior_days: float = 1.0
    title: str | None = None

    def __post_init__(self) -> None:
        for name in ("top_k", "timeline_bins", "rate_bins", "freshness_points"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not (self.rate_prior_changes >= 0 and self.rate_prior_days > 0):
            raise ConfigError("rate_prior_changes must be >= 0 and rate_prior_days > 0")
        if self.seconds_per_day is not None and not (
                math.isfinite(self.seconds_per_day) and self.seconds_per_day > 0):
            raise ConfigError(f"seconds_per_day must be > 0, got {self.seconds_per_day}")


@dataclass(frozen=True, eq=False)
class ReportInputs:
    """Analyses already computed by the caller, and facts only the caller knows.

    Every field is optional; missing analyses are computed from the database.
    ``graph`` is the full captured graph (``load_graph(db)``), ``pages_graph`` the
    crawled pages only (``include_frontier=False``: ranking, bow-tie and degrees use it);
    ``pagerank`` and ``hits`` belong to ``pages_graph``; ``comparison`` maps an ordering
    to its quality report over ``graph``.  ``facts`` are extra rows of the summary
    (fixture, audit), ``expected_exponents`` the (in, out) exponents the graph was
    generated with, ``true_rates`` the true change rate (per day) of each URL,
    ``truth_freshness`` a true freshness curve ``(wall-clock seconds, freshness)`` and
    ``change_facts`` extra rows of the change section (revisit policy, errors).
    """

    graph: CapturedGraph | None = None
    pages_graph: CapturedGraph | None = None
    pagerank: np.ndarray | None = None
    hits: HitsResult | None = None
    bowtie: BowTie | None = None
    degree_laws: DegreeLaws | None = None
    quality: QualityReport | None = None
    comparison: Mapping[str, QualityReport] | None = None
    facts: Mapping[str, str] = field(default_factory=dict)
    expected_exponents: tuple[float | None, float | None] = (None, None)
    true_rates: Mapping[str, float] | None = None
    truth_freshness: tuple[np.ndarray, np.ndarray] | None = None
    change_facts: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReportSummary:
    """What :func:`build_report` wrote.

    ``sections`` maps every section id to None when it has its data, else to the
    sentence the report shows instead.  ``rate_error`` is the median relative error of
    the change-rate estimates against ``ReportInputs.true_rates`` over ``rate_pages``
    revisited pages (None without revisits or truth).
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

    @property
    def missing(self) -> list[str]:
        """Ids of the sections that had no data."""
        return [k for k, v in self.sections.items() if v is not None]


@dataclass
class _Section:
    """One section being written: its HTML parts and images."""

    key: str
    parts: list[str] = field(default_factory=list)
    images: int = 0
    missing: str | None = None

    def add(self, markup: str) -> None:
        self.parts.append(markup)

    def text(self, text: str) -> None:
        self.parts.append(f"<p>{html.escape(text)}</p>")

    def image(self, fig: Figure, alt: str) -> None:
        from analysis.plots import png_bytes

        data = base64.b64encode(png_bytes(fig)).decode("ascii")
        self.parts.append(f'<figure><img alt="{html.escape(alt)}" '
                          f'src="data:image/png;base64,{data}"></figure>')
        self.images += 1

    def none(self, reason: str) -> None:
        self.missing = reason
        self.parts.append(f'<p class="missing">{html.escape(reason)}</p>')


class _Context:
    """Everything read from the database once, and analyses shared between sections."""

    def __init__(self, db: Path, settings: ReportSettings, inputs: ReportInputs) -> None:
        from analysis.loader import load_graph
        from storage.reader import CrawlReader

        self.db, self.settings, self.inputs = db, settings, inputs
        with CrawlReader(db) as reader, reader.snapshot():
            self.meta = reader.meta()
            self.host_ids, self.host_names = reader.hosts()
            self.urls = reader.urls()
            self.fetches = reader.fetches()
        self.graph = inputs.graph if inputs.graph is not None else load_graph(db)
        self.pages = (inputs.pages_graph if inputs.pages_graph is not None
                      else load_graph(db, include_frontier=False))
        self._pagerank = inputs.pagerank
        self.rate_error: tuple[float, int] | None = None

    @property
    def pagerank(self) -> np.ndarray:
        """PageRank (sum 1) of the crawled-pages graph, computed once."""
        if self._pagerank is None:
            from analysis.pagerank import pagerank

            if self.pages.n == 0:
                raise AnalysisError("no page was crawled")
            self._pagerank = np.asarray(pagerank(self.pages.adjacency).scores)
        return self._pagerank


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
    ctx = _Context(db, settings, inputs or ReportInputs())
    writers: dict[str, Callable[[_Context, _Section], None]] = {
        "summary": _summary, "ranking": _ranking, "bowtie": _bowtie, "degrees": _degrees,
        "quality": _quality, "comparison": _comparison, "changes": _changes,
    }
    sections = []
    for key, write in writers.items():
        if progress:
            progress(f"report: {SECTIONS[key].lower()}")
        section = _Section(key)
        try:
            write(ctx, section)
        except AnalysisError as exc:  # empty graph, nothing to fit: say so, keep going
            section.parts.clear()
            section.none(f"Not available for this crawl: {exc}")
        sections.append(section)
    title = settings.title or f"webcrawl report: {db.name}"
    generated = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    document = page(title, f"{db.name}, generated {generated}",
                    [(s.key, SECTIONS[s.key], "".join(s.parts)) for s in sections])
    out.parent.mkdir(parents=True, exist_ok=True)
    data = document.encode("utf-8")
    out.write_bytes(data)
    return ReportSummary(
        path=out, sections={s.key: s.missing for s in sections},
        images=sum(s.images for s in sections), size_bytes=len(data),
        pages=int(np.count_nonzero(ctx.graph.crawled)), urls=len(ctx.urls),
        hosts=len(ctx.host_names), rate_error=ctx.rate_error[0] if ctx.rate_error else None,
        rate_pages=ctx.rate_error[1] if ctx.rate_error else 0)


# ----------------------------------------------------------------------------- summary
def _summary(ctx: _Context, sec: _Section) -> None:
    from storage.reader import FETCH_KINDS, OUTCOMES

    urls, f = ctx.urls, ctx.fetches
    crawl = f["kind"] == FETCH_KINDS.index("crawl")
    strategy = ctx.meta.get("strategy", "?")
    seeds = json.loads(ctx.meta.get("seeds", "[]"))
    rows: list[list[Any]] = [
        ["database", ctx.db.name], ["ordering", strategy],
        ["seeds", ", ".join(seeds) or "none recorded"],
        ["pages fetched (HTML)", int(np.count_nonzero(ctx.graph.crawled))],
        ["URLs discovered", len(urls)], ["hosts", len(ctx.host_names)],
        ["links between crawled pages", ctx.pages.m],
        ["fetch attempts", int(np.count_nonzero(crawl))],
        ["revisits", int(np.count_nonzero(~crawl))],
    ]
    if np.any(crawl):
        span = float(f["ended_at"][crawl].max() - f["started_at"][crawl].min())
        rows.append(["crawl duration", f"{span:.1f} s"])
    rows += [[k, v] for k, v in ctx.inputs.facts.items()]
    sec.add(table(["", ""], rows, header=False))
    codes, counts = np.unique(urls.outcome, return_counts=True)
    outcome_rows = [[OUTCOMES[c].value if c >= 0 else "in the frontier (not taken)", int(n),
                     f"{100.0 * n / max(len(urls), 1):.1f}%"] for c, n in zip(codes, counts,
                                                                          strict=True)]
    sec.add("<h3>URL outcomes</h3>")
    sec.add(table(["outcome", "URLs", "share"], outcome_rows) if outcome_rows
            else "<p class='missing'>No URL recorded.</p>")
    if not np.any(crawl):
        sec.none("No fetch was recorded: this crawl is empty.")
        return
    _timeline(ctx, sec, f["ended_at"][crawl])


def _timeline(ctx: _Context, sec: _Section, ended: np.ndarray) -> None:
    from analysis.report_figures import rate_timeline_figure

    t = np.sort(ended - ended.min())
    span = float(t[-1])
    bins = ctx.settings.timeline_bins if span > 0 else 1
    width = span / bins if span > 0 else 1.0
    counts = np.bincount(np.minimum((t / width).astype(np.int64), bins - 1), minlength=bins)
    sec.add("<h3>Pages per second</h3>")
    sec.image(rate_timeline_figure(width * np.arange(1, bins + 1), counts / width),
              "pages per second over the crawl")


# ----------------------------------------------------------------------------- ranking
def _ranking(ctx: _Context, sec: _Section) -> None:
    from analysis.hits import hits

    scores = ctx.pagerank
    g, k = ctx.pages, ctx.settings.top_k
    auth = (ctx.inputs.hits or hits(g.adjacency)).authorities
    indeg = np.asarray(g.adjacency.astype(bool).sum(axis=0)).ravel()
    sec.text(f"Over the graph of the {g.n:,} crawled pages and the {g.m:,} links between "
             "them (PageRank with damping 0.85; scores sum to 1, so the mean is "
             f"{1.0 / g.n:.2e}).")
    sec.add(_top_table("Top pages by PageRank", g, scores, indeg, k, "PageRank"))
    sec.add(_top_table("Top pages by HITS authority", g, auth, indeg, k, "authority"))


def _top_table(title: str, g: CapturedGraph, scores: np.ndarray, indeg: np.ndarray, k: int,
               name: str) -> str:
    top = np.argsort(-scores, kind="stable")[:k]
    mean = 1.0 / scores.size
    rows = [[i + 1, _url(g.urls[node]), f"{scores[node]:.3e}",
             f"{scores[node] / mean:.1f}", int(indeg[node])] for i, node in enumerate(top)]
    return f"<h3>{html.escape(title)}</h3>" + table(
        ["#", "URL", name, "x mean", "in-links"], rows, raw_columns=(1,))


def _url(url: str) -> str:
    return f'<code class="url">{html.escape(url)}</code>'


# ----------------------------------------------------------------------------- structure
def _bowtie(ctx: _Context, sec: _Section) -> None:
    from analysis.bowtie import bowtie
    from analysis.report_figures import bowtie_figure

    bt = ctx.inputs.bowtie or bowtie(ctx.pages.adjacency)
    rows = [[name, count, f"{100.0 * frac:.1f}%"] for (name, count), frac in
            zip(bt.counts.items(), bt.fractions.values(), strict=True)]
    rows += [["strongly connected components", bt.n_scc, ""],
             ["weakly connected components", bt.n_wcc, ""],
             ["largest WCC", bt.largest_wcc, f"{100.0 * bt.largest_wcc / bt.n:.1f}%"]]
    sec.text("Broder et al.'s decomposition of the crawled pages around the largest "
             "strongly connected component (SCC): IN reaches it, OUT is reached from it. "
             "A crawl only finds pages reachable from its seeds, so IN is small unless "
             "the seeds lie outside the SCC.")
    sec.add(table(["region", "nodes", "share"], rows))
    sec.image(bowtie_figure(bt), "bow-tie diagram with region sizes")


def _degrees(ctx: _Context, sec: _Section) -> None:
    from analysis.degrees import degree_laws
    from analysis.report_figures import degree_figure

    laws = ctx.inputs.degree_laws or degree_laws(ctx.pages.adjacency)
    expected = ctx.inputs.expected_exponents
    rows: list[list[Any]] = []
    for name, fit, exp in (("in", laws.in_fit, expected[0]), ("out", laws.out_fit, expected[1])):
        if fit is None:
            rows.append([name, "too few nodes to fit", "", "", "", _opt(exp)])
        else:
            rows.append([name, f"{fit.alpha:.3f} ± {fit.sigma:.3f}", fit.x_min, fit.n_tail,
                         f"{fit.ks:.3f}", _opt(exp)])
    sec.text("Discrete power laws p(k) ~ k^-alpha fitted by maximum likelihood above the "
             "x_min that minimises the Kolmogorov-Smirnov distance (Clauset, Shalizi and "
             "Newman); Broder et al. measured 2.1 (in) and 2.72 (out) on the 1999 web.")
    sec.add(table(["degree", "alpha", "x_min", "tail nodes", "KS", "expected alpha"], rows))
    sec.image(degree_figure(laws, expected=expected),
              "in- and out-degree distributions on log-log axes with fitted laws")


def _opt(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


# ----------------------------------------------------------------------------- quality
def _quality(ctx: _Context, sec: _Section) -> None:
    from analysis.quality import crawl_quality

    report = ctx.inputs.quality or crawl_quality(ctx.graph)
    sec.text(f"The crawl's own order ({report.pages:,} pages taken) measured against the "
             "PageRank of the final captured graph (Najork and Wiener; Bennouas and de "
             "Montgolfier).")
    _quality_parts(sec, {"recorded": report}, None)


def _comparison(ctx: _Context, sec: _Section) -> None:
    reports = ctx.inputs.comparison
    if reports is None:
        if not ctx.settings.compare:
            sec.none("No comparison was requested (webcrawl report --compare "
                     "bfs,dfs,random,backlink,pagerank,opic replays orderings virtually "
                     "over the captured graph).")
            return
        reports = compare_orderings(ctx.graph, ctx.settings.compare)
    sec.text("Each ordering is replayed as a virtual crawl over the captured graph with "
             "the recorded crawl's page budget; 'recorded' is the real crawl's order.")
    _quality_parts(sec, reports, ("pagerank_capture", "mean_pagerank", "top_n_fetched",
                                  "discovery_rate"))


def compare_orderings(graph: CapturedGraph, strategies: Sequence[str],
                      progress: Progress | None = None) -> dict[str, QualityReport]:
    """Quality reports of the recorded order and virtual crawls of ``strategies``."""
    from analysis.compare import RECORDED, compare_orders, virtual_orders

    if graph.fetch_order.size == 0:
        raise AnalysisError("no page was crawled")
    orders: dict[str, np.ndarray] = {RECORDED: graph.fetch_order}
    budget = int(np.count_nonzero(graph.crawled)) or None
    orders |= virtual_orders(graph, list(strategies), max_pages=budget, progress=progress)
    return compare_orders(graph, orders, progress=progress)


def _quality_parts(sec: _Section, reports: Mapping[str, QualityReport],
                   keys: Sequence[str] | None) -> None:
    from analysis.plots import METRIC_TITLES, quality_figures
    from analysis.quality import summary_label

    summary_keys = list(dict.fromkeys(k for r in reports.values() for k in r.summary))
    rows = [[name, r.pages, *(f"{r.summary.get(k, math.nan):.3f}" for k in summary_keys)]
            for name, r in reports.items()]
    sec.add(table(["order", "pages", *(summary_label(k) for k in summary_keys)], rows))
    for key, fig in quality_figures(reports).items():
        if keys is None or key in keys:
            sec.image(fig, METRIC_TITLES[key])


# ----------------------------------------------------------------------------- changes
def _changes(ctx: _Context, sec: _Section) -> None:
    from analysis.change_stats import CHANGE_BUCKETS, bucket_fractions
    from analysis.changes import map_rate
    from analysis.report_figures import rate_histogram_figure
    from storage.reader import FETCH_KINDS

    revisits = int(np.count_nonzero(ctx.fetches["kind"] == FETCH_KINDS.index("revisit")))
    if revisits == 0:
        sec.none("No revisit data: this crawl was not revisited, so there are no change "
                 "rates or freshness to show (webcrawl revisit adds them).")
        return
    day = _day_seconds(ctx)
    log, page_ids, t0 = _visit_log(ctx, day)
    hist = log.history()
    est = map_rate(hist, prior_changes=ctx.settings.rate_prior_changes,
                   prior_time=ctx.settings.rate_prior_days)
    known = hist.n_visits > 0
    est[~known] = np.nan  # the prior alone says nothing about the page
    if not known.any():
        sec.none(f"{revisits} revisits, but no page was visited twice with an answer: "
                 "no change rate can be estimated.")
        return
    true = _true_rates(ctx, page_ids)
    rows: list[list[Any]] = [["revisits", revisits], ["pages with a rate estimate",
                                                       int(known.sum())],
                             ["length of a day on the clock", f"{day:g} s"],
                             ["estimator", "posterior mode (Gamma prior: "
                              f"{ctx.settings.rate_prior_changes:g} change in "
                              f"{ctx.settings.rate_prior_days:g} days), Last-Modified used"],
                             ["median estimated rate", f"{np.median(est[known]):.3g} / day"]]
    if true is not None:
        ok = known & np.isfinite(true) & (true > 0)
        if ok.any():
            rel = np.abs(est[ok] - true[ok]) / true[ok]
            ctx.rate_error = (float(np.median(rel)), int(ok.sum()))
            rows.append(["median relative error vs truth",
                         f"{ctx.rate_error[0]:.3f} over {ctx.rate_error[1]:,} pages"])
    rows += [[k, v] for k, v in ctx.inputs.change_facts.items()]
    sec.add(table(["", ""], rows, header=False))
    with np.errstate(divide="ignore"):  # a rate of 0: an infinite interval, the last bucket
        buckets = bucket_fractions(1.0 / est[known])
    sec.add("<h3>Pages by estimated mean change interval</h3>")
    sec.add(table([label for label, _ in CHANGE_BUCKETS],
                  [[f"{100.0 * b:.1f}%" for b in buckets]]))
    sec.image(rate_histogram_figure(est, true, bins=ctx.settings.rate_bins),
              "histogram of estimated change rates")
    _freshness(ctx, sec, log, est, (t0, day))


def _day_seconds(ctx: _Context) -> float:
    if ctx.settings.seconds_per_day is not None:
        return ctx.settings.seconds_per_day
    for key in DAY_SECONDS_KEYS:
        try:
            value = float(ctx.meta[key])
        except (KeyError, ValueError):
            continue
        if math.isfinite(value) and value > 0:
            return value
    return SECONDS_PER_DAY


def _visit_log(ctx: _Context, day: float) -> tuple[VisitLog, np.ndarray, float]:
    """Every fetch with an HTTP answer as a visit (2xx/304 present, 404/410 gone), in days
    since the first fetch (a request's midpoint); returns the log, the URL id of each log
    page and the wall time of day 0."""
    from analysis.change_stats import VisitLog

    f = ctx.fetches
    status = f["status"]
    present = ((status >= 200) & (status < 300)) | (status == 304)
    keep = present | (status == 404) | (status == 410)
    if not keep.any():
        raise AnalysisError("no fetch has an HTTP answer")
    mid = 0.5 * (f["started_at"][keep] + f["ended_at"][keep])
    t0 = float(mid.min())
    changed = f["changed"][keep].astype(np.int8)
    changed[(status[keep] == 304) & (changed < 0)] = 0
    lm = _modified_days(f["last_modified"][keep], (mid - t0) / day, day, t0)
    page_ids, page = np.unique(f["url_id"][keep], return_inverse=True)
    url_host = ctx.urls.host_ids[np.searchsorted(ctx.urls.ids, page_ids)]
    host = np.searchsorted(ctx.host_ids, url_host)
    log = VisitLog.from_arrays(page, (mid - t0) / day, present[keep], changed,
                               last_modified=lm, host=host,
                               host_names=ctx.host_names or ["?"],
                               digest=list(f["digest"][keep]))
    return log, page_ids, t0


def _modified_days(headers: np.ndarray, visit_days: np.ndarray, day: float,
                   t0: float) -> np.ndarray:
    """Last-Modified headers on the visits' clock (days since the first visit).

    HTTP dates run on the server's clock.  On a real one (86400 s a day) it is the
    crawler's, and the first visit's wall time ``t0`` is day 0.  An accelerated server clock
    (the fixture web) has HTTP days of ``day`` real seconds and an unknown origin: the
    origin is taken as the smallest one consistent with every visit, since no page was
    modified after it was seen (``max(Last-Modified - visit)``); fast-changing pages
    make that bound tight.
    """
    from email.utils import parsedate_to_datetime

    stamps: dict[str, float] = {}
    for value in set(headers.tolist()) - {None}:
        try:
            stamps[value] = parsedate_to_datetime(value).timestamp() / SECONDS_PER_DAY
        except (TypeError, ValueError, IndexError):
            stamps[value] = math.nan
    http_days = np.array([stamps.get(v, math.nan) if v else math.nan for v in headers.tolist()],
                         dtype=np.float64)
    known = np.isfinite(http_days)
    if not known.any():
        return http_days
    if day == SECONDS_PER_DAY:
        return http_days - t0 / SECONDS_PER_DAY
    return http_days - float(np.max(http_days[known] - visit_days[known]))
def _true_rates(ctx: _Context, page_ids: np.ndarray) -> np.ndarray | None:
    truth = ctx.inputs.true_rates
    if truth is None:
        return None
    pos = np.searchsorted(ctx.urls.ids, page_ids)
    return np.array([truth.get(ctx.urls.urls[p], math.nan) for p in pos.tolist()])


def _freshness(ctx: _Context, sec: _Section, log: VisitLog, est: np.ndarray,
               clock: tuple[float, float]) -> None:
    """Observed freshness at revisits, expected freshness under the estimates, and the
    truth when given; ``clock`` is (wall time of day 0, seconds per day)."""
    from analysis.freshness import estimated_freshness, expected_freshness
    from analysis.report_figures import freshness_figure

    pres = log.present
    page, t = log.page[pres], log.time[pres]
    start, end = float(log.time.min()), float(log.time.max())
    if not end > start:
        return
    points = ctx.settings.freshness_points
    edges = np.linspace(start, end, points + 1)
    seen = log.changed[pres] >= 0
    which = np.clip(np.searchsorted(edges, t[seen], side="right") - 1, 0, points - 1)
    n_bin = np.bincount(which, minlength=points)
    fresh_bin = np.bincount(which, weights=(log.changed[pres][seen] == 0), minlength=points)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.where(n_bin > 0, fresh_bin / np.maximum(n_bin, 1), np.nan)
    rated = np.isfinite(est[page])
    grid = edges[1:]
    expected = np.array([_expected_at(est, page[rated], t[rated], at, expected_freshness)
                         for at in grid])
    curves: dict[str, tuple[Any, Any]] = {
        "revisits that found the copy unchanged": (0.5 * (edges[:-1] + edges[1:]), observed),
        "expected under the estimated rates": (grid, expected)}
    if ctx.inputs.truth_freshness is not None:
        wall, fresh = ctx.inputs.truth_freshness
        curves["true (fixture ground truth)"] = ((np.asarray(wall) - clock[0]) / clock[1], fresh)
    keep = np.isfinite(est)
    remap = np.cumsum(keep) - 1
    mean_f, mean_a = estimated_freshness(est[keep], remap[page[rated]], t[rated], start, end)
    sec.add("<h3>Freshness</h3>")
    sec.text(f"Expected time-averaged freshness over the {end - start:.3g}-day window: "
             f"{mean_f:.3f}; expected age {mean_a:.3g} days (Cho and Garcia-Molina).")
    sec.image(freshness_figure(curves), "freshness of the collection over time")


def _expected_at(rate: np.ndarray, page: np.ndarray, t: np.ndarray, at: float,
                 expected_freshness: Callable[..., np.ndarray]) -> float:
    """Mean expected freshness at ``at`` of the pages visited by then (last visit <= at)."""
    before = t <= at
    if not before.any():
        return math.nan
    last = np.full(rate.size, -np.inf)
    np.maximum.at(last, page[before], t[before])
    have = np.isfinite(last)
    return float(np.mean(expected_freshness(rate[have], last[have], at)))


# ----------------------------------------------------------------------------- HTML
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
figure { margin: 12px 0; } img { max-width: 100%; border: 1px solid #e4e4e4; background: #fff; }
p.missing { background: #fff4e5; border-left: 4px solid #f0a020; padding: 8px 12px; }
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
