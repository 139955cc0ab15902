"""``webcrawl demo``: the whole product on one machine, no network, in about a minute.

:func:`run_demo` builds a fixture web (:mod:`fixtures`), serves it on a free loopback
port on an accelerated clock, crawls it politely with ``bfs`` into ``OUT/crawl.db``
(the server's politeness audit must find no violation), runs the analyses (PageRank
and HITS, bow-tie, degree laws against the configured exponents, quality over time, a
virtual comparison of the orderings, a short revisit run with change-rate estimates
against the truth) and writes ``OUT/report.html``.  Every step is announced on
``stream`` as ``[k/N] ...``; the summary lines are returned (the CLI prints them).  The
comparison's line ranks the orderings a crawler can run and gives the ceiling ``ideal``
apart, defined.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from webcrawl.storage.errors import AnalysisError, ConfigError

if TYPE_CHECKING:
    from webcrawl.analysis.graph.captured import CapturedGraph, GraphKind
    from webcrawl.analysis.report import ReportInputs, ReportSummary
    from webcrawl.crawler.engine import CrawlStats
    from webcrawl.crawler.settings import CrawlSettings
    from webcrawl.fixtures import FixtureWeb, ProcessFixtureServer

__all__ = ["DEMO_STRATEGIES", "DemoResult", "DemoSettings", "run_demo"]

#: Orderings replayed virtually over the captured graph.
DEMO_STRATEGIES = ("bfs", "dfs", "random", "backlink", "pagerank", "opic")
STEPS = 9


@dataclass(frozen=True)
class DemoSettings:
    """Settings of the demo; the defaults crawl ~3000 pages in about 10-20 s.

    Attributes
    ----------
    pages, hosts, seed, model :
        The fixture web (default 3000 pages on 30 hosts, seed 1, ``zipf``).
    day_seconds : float
        Real seconds per simulated day of the fixture's clock (default 1.0: a one-minute
        demo spans about two simulated months, long enough to see pages change).
    polite_min_delay, polite_delay_factor, polite_max_delay : float
        The crawler's politeness (defaults 0.025 s, 2, 0.25 s): the normal Mercator rule
        with small delays, one request per host at a time.
    audit_gap_fraction : float
        The audit checks gaps of at least this fraction of ``polite_min_delay`` (default
        0.8): the server stamps a request's end after flushing its answer, a little
        later than the crawler's clock, so the gap it sees is slightly shorter.
    revisit_seconds : float
        Real seconds of the revisit run (default 20: 20 simulated days, about two
        revisits per page at the default size).
    revisit_budget : float
        Revisit starts per real second over all hosts, at most (default 400: the
        politeness delays are the real limit).
    revisit_policy : str
        Refresh policy of the revisit loop (default ``"optimal"``, Cho and
        Garcia-Molina's freshness-optimal allocation).
    strategies : tuple of str
        Orderings of the virtual comparison (default :data:`DEMO_STRATEGIES`).
    graph : {"pages", "all"}
        The graph every analysis measures (default ``pages``: the fetched pages and the
        links among them; ``all`` adds every discovered URL), as ``--graph`` elsewhere.
    force : bool
        Overwrite an existing ``crawl.db`` (default False: refuse).
    """

    pages: int = 3000
    hosts: int = 30
    seed: int = 1
    model: str = "zipf"
    day_seconds: float = 1.0
    polite_min_delay: float = 0.025
    polite_delay_factor: float = 2.0
    polite_max_delay: float = 0.25
    audit_gap_fraction: float = 0.8
    revisit_seconds: float = 20.0
    revisit_budget: float = 400.0
    revisit_policy: str = "optimal"
    strategies: tuple[str, ...] = DEMO_STRATEGIES
    force: bool = False
    graph: GraphKind = "pages"

    def __post_init__(self) -> None:
        if self.graph not in ("pages", "all"):  # webcrawl.analysis.graph.GRAPH_KINDS (not imported:
            # --help builds a DemoSettings and must not load numpy)
            raise ConfigError(f"unknown graph {self.graph!r}: choose 'pages' or 'all'")
        if self.pages < 1 or self.hosts < 1:
            raise ConfigError("the demo needs at least one page and one host")
        if self.hosts > self.pages:
            raise ConfigError(f"--hosts ({self.hosts}) must not exceed --pages ({self.pages})")
        if self.seed < 0:
            raise ConfigError(f"--seed must be >= 0, got {self.seed}")
        for name in ("day_seconds", "revisit_budget"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("polite_min_delay", "polite_delay_factor", "revisit_seconds"):
            if not getattr(self, name) >= 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0 < self.audit_gap_fraction <= 1:
            raise ConfigError("audit_gap_fraction must be in (0, 1]")

    def crawl_settings(self) -> CrawlSettings:
        from webcrawl.crawler.settings import CrawlSettings

        return CrawlSettings(
            polite_min_delay=self.polite_min_delay, polite_delay_factor=self.polite_delay_factor,
            polite_max_delay=max(self.polite_max_delay, self.polite_min_delay),
            resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",), frontier_strategy="bfs")


@dataclass
class DemoResult:
    """What the demo did: paths, figures, per-step seconds and the summary lines."""

    out_dir: Path
    db: Path
    report: Path
    crawl: dict[str, Any] = field(default_factory=dict)
    audit_violations: int = 0
    audit_failures: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    summary: list[str] = field(default_factory=list)
    report_summary: ReportSummary | None = None

    @property
    def ok(self) -> bool:
        """The crawl finished and the politeness audit found nothing."""
        return self.audit_violations == 0 and self.crawl.get("stopped") == "done"

    def as_dict(self) -> dict[str, Any]:
        """The final figures as JSON-ready values (``webcrawl demo --json``; NaN -> None)."""
        import math

        def clean(value: Any) -> Any:
            if isinstance(value, float):
                return None if math.isnan(value) else value
            if isinstance(value, dict):
                return {str(k): clean(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [clean(v) for v in value]
            if hasattr(value, "item"):  # numpy scalars
                return clean(value.item())
            return value

        rs = self.report_summary
        figures: dict[str, Any] = clean({
            "ok": self.ok, "out_dir": str(self.out_dir), "db": str(self.db),
            "report": str(self.report), "crawl": self.crawl,
            "audit": {"violations": self.audit_violations, "failures": self.audit_failures},
            "figures": self.figures,
            "change_rate_error": None if rs is None else rs.rate_error,
            "timings": self.timings})
        return figures


class _Steps:
    """Announces ``[k/N] what`` on the stream and times each step."""

    def __init__(self, stream: TextIO, timings: dict[str, float]) -> None:
        self.stream, self.timings, self.k = stream, timings, 0

    @contextmanager
    def step(self, key: str, text: str) -> Iterator[None]:
        self.k += 1
        self.say(f"[{self.k}/{STEPS}] {text} ...")
        t0 = time.monotonic()
        yield
        self.timings[key] = time.monotonic() - t0

    def say(self, text: str) -> None:
        print(text, file=self.stream, flush=True)


def run_demo(out_dir: str | Path = "demo-out", settings: DemoSettings | None = None, *,
             stream: TextIO | None = None, **overrides: Any) -> DemoResult:
    """Run the whole demo into ``out_dir`` (see the module docstring).

    ``overrides`` set :class:`DemoSettings` fields (``pages=300, hosts=5``).

    Raises
    ------
    ConfigError
        Bad settings, or ``out_dir/crawl.db`` exists and ``force`` is false.
    """
    from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_process

    if overrides:
        base = settings or DemoSettings()
        settings = DemoSettings(**{**base.__dict__, **overrides})
    s = settings or DemoSettings()
    out = Path(out_dir)
    db = _prepare_out(out, s.force)
    result = DemoResult(out_dir=out, db=db, report=out / "report.html")
    steps = _Steps(stream or sys.stderr, result.timings)
    t_start = time.monotonic()
    with steps.step("fixture", f"building the fixture web ({s.pages:,} pages on {s.hosts} "
                               f"hosts, {s.model} model, seed {s.seed})"):
        web = FixtureWeb.build(FixtureConfig(model=s.model, pages=s.pages, hosts=s.hosts,
                                             seed=s.seed, day_seconds=s.day_seconds))
        # A process of its own: a server sharing the crawler's interpreter stamps requests
        # late whenever the crawler is busy, and its audit then sees gaps that were not.
        server_cm = serve_in_process(web)
        server = server_cm.__enter__()
        steps.say(f"      serving {server.seed_url} (1 simulated day = {s.day_seconds:g} s)")
    try:
        inputs = _crawl_and_analyse(s, web, server, db, steps, result)
    finally:
        server_cm.__exit__(None, None, None)
    with steps.step("report", f"writing the report {result.report}"):
        from webcrawl.analysis.report.context import ReportSettings
        from webcrawl.analysis.report.document import build_report

        result.report_summary = build_report(db, result.report, inputs=inputs,
                                             settings=ReportSettings(graph=s.graph))
    result.timings["total"] = time.monotonic() - t_start
    result.summary = _summary_lines(result)
    return result


def _prepare_out(out: Path, force: bool) -> Path:
    db = out / "crawl.db"
    if db.exists() and not force:
        raise ConfigError(f"{db} already exists; pass --force to overwrite it or choose "
                          "another --out")
    out.mkdir(parents=True, exist_ok=True)
    for name in ("crawl.db", "crawl.db-wal", "crawl.db-shm", "report.html"):
        (out / name).unlink(missing_ok=True)
    return db


def _crawl_and_analyse(s: DemoSettings, web: FixtureWeb, server: ProcessFixtureServer,
                       db: Path, steps: _Steps, result: DemoResult) -> ReportInputs:
    """Steps 2-8, while the fixture server runs."""
    from webcrawl.analysis.graph.loader import load_graph
    from webcrawl.analysis.report import ReportInputs
    from webcrawl.fixtures.audit import describe_failures

    with steps.step("crawl", f"crawling politely with bfs into {db}"):
        stats = _crawl(s, server.seed_url, db, steps.stream)
        result.crawl = stats.as_dict()
        gap = s.audit_gap_fraction * s.polite_min_delay
        audit = server.audit(max_concurrency=1, min_gap=gap)
        result.audit_violations = int(audit["violation_count"])
        result.audit_failures = describe_failures(audit)
        gaps = [h["min_gap"] for h in audit["hosts"].values() if h["min_gap"] is not None]
        smallest = f", smallest {1000 * min(gaps):.1f} ms" if gaps else ""
        steps.say(f"      politeness audit by the server: {audit['violation_count']} "
                  f"violations in {audit['requests']:,} requests (one request per host at "
                  f"a time, gaps >= {1000 * gap:.1f} ms{smallest}, robots.txt first, no "
                  "disallowed path fetched)")
        for line in result.audit_failures:
            steps.say(f"      audit: {line}")
    full = load_graph(db, graph="all")
    graph = full if s.graph == "all" else load_graph(db, graph="pages")
    facts = _facts(s, web, server, audit, full)
    inputs = _analyses(s, full, graph, steps, result)
    with steps.step("revisit", f"revisiting for {s.revisit_seconds:g} s "
                               f"({s.revisit_seconds / s.day_seconds:g} simulated days)"):
        change = _revisit(s, web, server, db, steps, result)
    from webcrawl.crawler.config import settings_dict
    from webcrawl.crawler.settings import CrawlSettings

    return ReportInputs(**{**inputs, **change, "facts": facts,
                           "setting_defaults": settings_dict(CrawlSettings())})


def _crawl(s: DemoSettings, seed_url: str, db: Path, stream: TextIO) -> CrawlStats:
    from webcrawl.crawler import eventloop
    from webcrawl.crawler.engine import Crawler
    from webcrawl.crawler.progress import Progress, format_summary
    from webcrawl.crawler.scope import describe_scope

    settings = s.crawl_settings()
    crawler = Crawler(db, [seed_url], settings)

    async def main() -> None:
        progress = Progress(crawler.stats, interval=settings.progress_interval, stream=stream,
                            log_interval=settings.progress_log_interval,
                            scope=describe_scope(settings, [seed_url]))
        progress.start()
        try:
            await crawler.run()
        finally:
            await progress.stop()

    eventloop.run(main())
    print("      " + format_summary(crawler.stats), file=stream)
    return crawler.stats


def _facts(s: DemoSettings, web: FixtureWeb, server: ProcessFixtureServer,
           audit: dict[str, Any], full: CapturedGraph) -> dict[str, str]:
    """Rows of the report's summary that only the demo knows (fixture and audit)."""
    truth = web.truth_pages(server.port)
    reach = web.reachable()
    allowed = sum(1 for i, p in enumerate(truth) if reach[i] and p.robots_allowed)
    return {
        "fixture web": f"{s.pages:,} pages on {s.hosts} hosts ({s.model}, seed {s.seed}), "
                       f"{int(web.src.size):,} links",
        "coverage": f"{full.pages:,} of the {allowed:,} robots-allowed pages reachable from "
                    "the seed",
        "politeness audit": f"{audit['violation_count']} violations in "
                            f"{audit['requests']:,} requests",
    }


def _analyses(s: DemoSettings, full: CapturedGraph, graph: CapturedGraph, steps: _Steps,
              result: DemoResult) -> dict[str, Any]:
    """Steps 3-7; returns the :class:`ReportInputs` fields they computed."""
    import numpy as np
    from webcrawl.analysis.graph.bowtie_alg import bowtie
    from webcrawl.analysis.graph.degree_dist import degree_laws
    from webcrawl.analysis.graph.hits_alg import hits
    from webcrawl.analysis.graph.pagerank_alg import pagerank
    from webcrawl.analysis.ordering.quality import crawl_quality, summary_label
    from webcrawl.analysis.report.document import compare_orderings

    fig = result.figures
    fig["graph"] = graph.info()
    with steps.step("pagerank", f"PageRank and HITS of the {graph.describe()}"):
        scores = np.asarray(pagerank(graph.adjacency).scores)
        hub_auth = hits(graph.adjacency)
        top = int(np.argmax(scores))
        fig["top_page"] = (graph.urls[top], float(scores[top] * scores.size))
        fig["top_score"] = float(scores[top])
    with steps.step("bowtie", "bow-tie decomposition"):
        bt = bowtie(graph.adjacency)
        fig["bowtie"] = bt.fractions
        fig["bowtie_counts"] = dict(bt.counts)
    with steps.step("degrees", "degree laws (fitted vs the fixture's configured exponents)"):
        laws = degree_laws(graph.adjacency)
        fig["alpha_in"] = laws.in_fit.alpha if laws.in_fit else float("nan")
        fig["alpha_out"] = laws.out_fit.alpha if laws.out_fit else float("nan")
    with steps.step("quality", "quality over time of the recorded bfs order"):
        quality = crawl_quality(graph)
        fig["quality"] = dict(quality.summary)
    with steps.step("compare", "virtual comparison of the orderings "
                               + ", ".join(s.strategies)):
        comparison = compare_orderings(full, graph, s.strategies)
        reports = comparison.reports
        key = "captured_at_10pct"
        fig["capture_key"] = summary_label(key)
        fig["capture"] = {name: r.summary.get(key, float("nan")) for name, r in reports.items()}
        fig["comparison"] = {name: dict(r.summary) for name, r in reports.items()}
    from webcrawl.fixtures import FixtureConfig

    config = FixtureConfig(model=s.model)
    expected = ((config.zipf_in_exponent, config.zipf_out_exponent) if s.model == "zipf"
                else (None, None))
    fig["expected"] = expected
    return {"graph": graph, "full_graph": full, "pagerank": scores, "hits": hub_auth,
            "bowtie": bt, "degree_laws": laws, "quality": quality, "comparison": comparison,
            "expected_exponents": expected}


def _revisit(s: DemoSettings, web: FixtureWeb, server: ProcessFixtureServer, db: Path,
             steps: _Steps, result: DemoResult) -> dict[str, Any]:
    """Step 8: revisit the collection on the accelerated clock, then measure its true
    freshness against the fixture's change times; hand the truth to the report."""
    from webcrawl.analysis.change.revisit_eval import SimClock, evaluate_revisit
    from webcrawl.crawler import eventloop
    from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings

    if s.revisit_seconds == 0:
        steps.say("      skipped (revisit_seconds = 0)")
        return {}
    settings = RevisitSettings(policy=s.revisit_policy, budget=s.revisit_budget,
                               duration=s.revisit_seconds, day_seconds=s.day_seconds)
    stats = eventloop.run(RevisitCrawler(db, settings, s.crawl_settings()).run())
    steps.say("      " + stats.summary())
    result.figures["revisits"] = stats.as_dict()
    clock = SimClock(wall_ref=time.time(), sim_day=server.sim_days(),
                     day_seconds=s.day_seconds)
    truth = web.truth_pages(server.port)
    until = server.sim_days()
    changes = {p.url: web.change_times(i, until) for i, p in enumerate(truth)}
    try:
        evaluation = evaluate_revisit(db, changes, clock)
    except AnalysisError as exc:  # no revisit completed: nothing to measure
        steps.say(f"      no freshness to measure: {exc}")
        return {"true_rates": {p.url: p.lam for p in truth}}
    fr = evaluation.result
    inside = fr.times < evaluation.end  # the last breakpoint closes the window
    wall = clock.wall_ref + (fr.times[inside] - clock.sim_day) * s.day_seconds
    result.figures["freshness"] = (evaluation.freshness, evaluation.estimated_freshness)
    return {"true_rates": {p.url: p.lam for p in truth},
            "truth_freshness": (wall, fr.fresh_count[inside] / fr.n_pages),
            "change_facts": {
                "revisit policy": f"{s.revisit_policy}, at most {s.revisit_budget:g} "
                                  "fetches/s, the crawl's politeness",
                "revisit run": stats.summary(),
                "true freshness over the revisit window":
                    f"{evaluation.freshness:.3f} (mean age {evaluation.age:.3g} days; "
                    f"the {evaluation.end - evaluation.start:.3g}-day revisit window)",
                "freshness the crawler estimates for itself":
                    f"{evaluation.estimated_freshness:.3f} (mean age "
                    f"{evaluation.estimated_age:.3g} days; same window)"}}


def _summary_lines(r: DemoResult) -> list[str]:
    c, fig = r.crawl, r.figures
    lines = [
        f"crawled {c.get('outcomes', {}).get('fetched', 0):,} HTML pages "
        f"({c.get('fetches', 0):,} URLs fetched) on {c.get('hosts', 0)} hosts in "
        f"{c.get('seconds', 0):.1f} s ({c.get('fetches_per_second', 0):.0f} URLs/s); "
        f"politeness audit: {r.audit_violations} violations",
    ]
    if "graph" in fig:
        lines.append(f"measured on the {fig['graph']['description']}")
    if "top_page" in fig:
        url, times_mean = fig["top_page"]
        lines.append(f"top page by PageRank: {url} ({times_mean:.0f}x the mean)")
    if "bowtie" in fig:
        lines.append("bow-tie: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in
                                            fig["bowtie"].items() if k != "OTHER"))
    if "alpha_in" in fig:
        exp_in, exp_out = (f" (configured {e:g})" if e is not None else ""
                           for e in fig.get("expected", (None, None)))
        lines.append(f"degree laws: in alpha {fig['alpha_in']:.2f}{exp_in}, "
                     f"out alpha {fig['alpha_out']:.2f}{exp_out}")
    if "capture" in fig:
        lines.append(_capture_line(fig["capture"], fig["capture_key"]))
    rs = r.report_summary
    if "revisits" in fig:
        v = fig["revisits"]
        error = ("n/a" if rs is None or rs.rate_error is None
                 else f"{rs.rate_error:.2f} over {rs.rate_pages:,} pages")
        lines.append(f"revisits: {v['fetches']:,} in {v['seconds']:.0f} s ({v['changed']:,} "
                     f"changed); change-rate estimates vs truth, median relative error: "
                     f"{error}")
        if "freshness" in fig:
            lines.append("freshness over the revisit window: true {:.3f}, estimated by the "
                         "crawler {:.3f}".format(*fig["freshness"]))
    lines.append(f"report: {r.report}  (demo took {r.timings.get('total', 0):.0f} s)")
    return lines


def _capture_line(capture: dict[str, float], label: str) -> str:
    """PR@10% of every ordering a crawler can run, best first, then the ceilings apart,
    each defined (they are references, never contestants)."""
    from webcrawl.analysis.ordering.ceilings import short_definition, split_ceilings

    orderings, ceilings = split_ceilings(capture)
    ranked = sorted(orderings, key=lambda k: -capture[k])
    line = (f"PageRank captured after 10% of the pages ({label}): "
            + ", ".join(f"{k} {capture[k]:.2f}" for k in ranked))
    for name in ceilings:
        line += (f"; ceiling {name} {capture[name]:.2f} ({short_definition(name)}: no "
                 "crawler can run it)")
    return line
