"""Compare crawl orderings: which one finds the important pages first?

Two ways to get the orders, both scored on a final captured graph with
:func:`webcrawl.analysis.ordering.quality.crawl_quality`:

* **virtual** (``webcrawl compare --virtual``): crawl once, then replay each strategy
  over the captured graph with :func:`analysis.ordering.virtual.virtual_crawl` (no network),
  inside the recorded crawl's reach (only URLs the crawl got an HTTP answer for are
  fetched; :mod:`webcrawl.analysis.ordering.reach`); every order is scored against the same
  measured graph (``pages`` by default: the fetched pages and the links among them) and
  the same PageRank, and the crawl's own recorded order is added as the curve
  ``recorded``, and the ceiling ``ideal`` (the fetchable pages in decreasing final
  PageRank, discovered or not: no order of k pages holds more).  ``ideal`` and the
  oracle ``omniscient`` are ceilings (:mod:`webcrawl.analysis.ordering.ceilings`):
  every output shows them apart, labelled and defined, and
  :meth:`Comparison.best_ordering` names the best ordering a crawler can run.  On a finished crawl
  every ordering ends on the recorded crawl's page set, so PageRank captured ends at 1.
  With ``timed`` each replay runs in simulated time under politeness
  (:mod:`webcrawl.analysis.ordering.timed`), and the summary adds PageRank captured at
  fractions of the simulated time and each ordering's simulated duration;
* **recorded**: one crawl database per strategy (for instance the same site crawled
  with ``--strategy bfs`` and ``--strategy random``); each recorded order is scored
  against its own final graph.

:func:`compare_crawl` is the library function behind ``webcrawl compare``;
:func:`compare_orders` scores orders you already have;
:func:`webcrawl.analysis.report.comparison_files.write_comparison` writes
one PNG per metric and ``comparison.json``.

References
----------
.. [1] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality pages",
   WWW 2001 (breadth-first, backlink, PageRank and random orderings, virtual crawls).
.. [2] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007 (BFS, DFS, DEG,
   RND and PageRank capture).
.. [3] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country: better
   strategies than breadth-first for web page ordering", WWW 2005 (simulated crawls
   in time under politeness; larger-sites-first, batch and partial PageRank, oracles).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from webcrawl.analysis.graph.captured import (
    CapturedGraph,
    DuplicatePolicy,
    GraphKind,
    check_duplicates,
    check_graph_kind,
)
from webcrawl.analysis.ordering._scoring import OrderJob, replayed_order, score_jobs, virtual_orders
from webcrawl.analysis.ordering.ceilings import (
    IDEAL,
    best_ordering,
    ceiling_definition,
    display_label,
    split_ceilings,
)
from webcrawl.analysis.ordering.quality import (
    QualityReport,
    QualitySettings,
    capture_at_times,
    final_pagerank,
    ideal_order,
    summary_label,
)
from webcrawl.analysis.ordering.reach import Reach, reach_summary
from webcrawl.analysis.ordering.timed import (
    SimulatedPoliteness,
    recorded_politeness,
)
from webcrawl.analysis.ordering.transfer import TransferModel
from webcrawl.storage.errors import ConfigError

if TYPE_CHECKING:
    from webcrawl.analysis.graph.kept import GraphSource

__all__ = [
    "IDEAL",
    "RECORDED",
    "CompareSettings",
    "Comparison",
    "compare_crawl",
    "compare_orders",
    "virtual_comparison",
    "virtual_orders",
]

#: Curve label of a crawl's own recorded order in a virtual comparison.
RECORDED = "recorded"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class CompareSettings:
    """Settings of :func:`compare_crawl`.

    Attributes
    ----------
    quality : QualitySettings
        Metric settings (slices, top-N, checkpoints, remote-links PageRank, ...).
    virtual : bool
        Replay each strategy over one captured graph (default True); False compares
        the recorded orders of one database per strategy.
    include_recorded : bool
        In a virtual comparison, also score the crawl's recorded order (default True).
    max_pages : int or None
        Stop virtual crawls after this many fetches (default None: the whole fetchable
        set, the recorded crawl's reach; URLs outside it cost no budget).
    seed : int
        Random seed of randomised strategies in virtual crawls (default 0).
    graph : {"pages", "all"}
        The graph the orders are measured on (default ``pages``: the fetched pages and
        the links among them; ``all`` adds every discovered URL).
    include_ideal : bool
        In a virtual comparison, add the ``ideal`` curve (default True).
    timed : bool
        Replay in simulated time under politeness (default False).
    connections, min_delay, delay_factor, max_delay : optional
        The simulated politeness; None (default): the recorded crawl's settings
        (:func:`webcrawl.analysis.ordering.timed.recorded_politeness`).
    fetch_seconds : float
        Fetch time of pages the recorded crawl did not time, when their host has no
        timed page either and no page was timed at all (an imported graph).
    transfer : TransferModel, optional
        How long each simulated fetch takes
        (:class:`webcrawl.analysis.ordering.transfer.TransferModel`); default the
        recorded times, ``fetch_seconds`` where nothing was measured.
    time_fractions : tuple of float
        Fractions of the longest simulated duration at which the summary reports
        PageRank captured (default 10%, 25%, 50%).
    workers : int or None
        Orderings replayed and scored at once, on threads over the one graph in
        memory (default None: one a CPU, as many as the memory available holds;
        timed replays one at a time).  The results do not depend on it.
    """

    quality: QualitySettings = field(default_factory=QualitySettings)
    virtual: bool = True
    include_recorded: bool = True
    max_pages: int | None = None
    seed: int = 0
    graph: GraphKind = "pages"
    duplicates: DuplicatePolicy = "collapse"
    include_ideal: bool = True
    timed: bool = False
    connections: int | None = None
    min_delay: float | None = None
    delay_factor: float | None = None
    max_delay: float | None = None
    fetch_seconds: float = 0.5
    transfer: TransferModel | None = None
    time_fractions: tuple[float, ...] = (0.1, 0.25, 0.5)
    workers: int | None = None

    def __post_init__(self) -> None:
        check_graph_kind(self.graph)
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"workers must be >= 1, got {self.workers}")
        check_duplicates(self.duplicates)
        if self.max_pages is not None and self.max_pages < 1:
            raise ConfigError(f"max_pages must be >= 1, got {self.max_pages}")
        if not self.fetch_seconds >= 0:
            raise ConfigError(f"fetch_seconds must be >= 0, got {self.fetch_seconds}")
        if any(not 0.0 < f <= 1.0 for f in self.time_fractions):
            raise ConfigError(f"time fractions must be in (0, 1], got {self.time_fractions}")

    def transfer_model(self) -> TransferModel:
        """The transfer-time model of timed replays (``transfer``, else the recorded
        times with ``fetch_seconds``)."""
        return self.transfer or TransferModel("recorded", seconds=self.fetch_seconds)

    def politeness(self, recorded: SimulatedPoliteness) -> SimulatedPoliteness:
        """The simulated politeness: ``recorded`` with the settings given here."""
        def pick(given: float | None, stored: float) -> float:
            return stored if given is None else given

        return SimulatedPoliteness(
            connections=recorded.connections if self.connections is None else self.connections,
            min_delay=pick(self.min_delay, recorded.min_delay),
            delay_factor=pick(self.delay_factor, recorded.delay_factor),
            max_delay=pick(self.max_delay, recorded.max_delay))


@dataclass(frozen=True, eq=False)
class Comparison:
    """Quality reports of several crawl orders, with how they were made.

    ``graphs`` maps each database name to the measured graph's
    :meth:`~webcrawl.analysis.graph.captured.CapturedGraph.info`; ``reach`` is the fetchable
    set of a virtual comparison (None for recorded orders).
    """

    reports: dict[str, QualityReport]
    method: str
    graphs: dict[str, dict[str, Any]] = field(default_factory=dict)
    reach: Reach | None = None
    #: timed comparisons: label -> {"seconds": duration, "hours": [...],
    #: "capture": [...]} (capture at evenly spaced simulated times)
    clock: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: timed comparisons: {"politeness": ..., "transfer": the model's parameters}
    timing: dict[str, Any] = field(default_factory=dict)

    def ceilings(self) -> dict[str, str]:
        """The ceilings among the curves (``ideal``, ``omniscient``), with definitions."""
        return {label: definition for label in self.reports
                if (definition := ceiling_definition(label)) is not None}

    def best_ordering(self, key: str = "captured_at_10pct") -> tuple[str, float] | None:
        """The ordering a crawler can run with the highest summary figure ``key``
        (ceilings never win; the recorded order does count), and that figure."""
        return best_ordering({k: r.summary for k, r in self.reports.items()}, key)

    def labelled_reports(self) -> dict[str, QualityReport]:
        """The reports as outputs show them: the orderings, then the ceilings, each
        labelled ``"ideal (ceiling)"``."""
        orderings, ceilings = split_ceilings(self.reports)
        return {display_label(k): self.reports[k] for k in (*orderings, *ceilings)}

    def ceiling_labels(self) -> list[str]:
        """The ceilings' labels as :meth:`labelled_reports` shows them."""
        return [display_label(k) for k in self.ceilings()]

    def summary_table(self) -> tuple[list[str], list[list[Any]]]:
        """Headers and rows of the summary figures: one row per ordering, then the
        ceilings, labelled (:meth:`labelled_reports`)."""
        reports = self.labelled_reports()
        keys = list(dict.fromkeys(k for r in reports.values() for k in r.summary))
        headers = ["strategy", "pages", *(summary_label(k) for k in keys)]
        rows = [[name, r.pages, *(r.summary.get(k, float("nan")) for k in keys)]
                for name, r in reports.items()]
        return headers, rows

    def najork_wiener_tables(self) -> list[tuple[str, list[str], list[list[Any]]]]:
        """Najork and Wiener's figures per ordering, as (title, headers, rows) tables.

        The average slice on which the top-N pages were fetched (one row per ordering),
        and the average PageRank (mean 1 over the graph) of each slice's pages (one
        row per slice, one column per ordering).
        """
        reports = self.labelled_reports()
        names = list(reports)
        tops = list(dict.fromkeys(n for r in reports.values() for n in r.top_mean_slice))
        slices = max((r.slice_ends.size for r in reports.values()), default=0)
        top_rows = [[name, *(reports[name].top_mean_slice.get(n, (float("nan"), 0))[0]
                             for n in tops)] for name in names]
        mean_rows = [[i + 1, *(float(r.mean_pagerank[i]) if i < r.mean_pagerank.size
                               else float("nan") for r in reports.values())]
                     for i in range(slices)]
        return [
            ("Average slice on which the top-N pages were fetched (Najork and Wiener; "
             f"slice 1 = first 1/{slices} of the crawl)",
             ["ordering", *(f"top{n}" for n in tops)], top_rows),
            ("Average PageRank of the pages fetched in each slice (mean 1 over the graph)",
             ["slice", *names], mean_rows),
        ]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: method, graphs, reach, summary table and every curve, the
        ceilings (label -> definition) and the best ordering a crawler can run at 10%."""
        best = self.best_ordering()
        return {
            "method": self.method,
            "graphs": self.graphs,
            "reach": None if self.reach is None else self.reach.to_dict(),
            "ceilings": self.ceilings(),
            "best_ordering": None if best is None else {
                "metric": summary_label("captured_at_10pct"), "name": best[0],
                "value": best[1]},
            "summary": {name: r.to_dict()["summary"] | {"pages": r.pages}
                        for name, r in self.reports.items()},
            "reports": {name: r.to_dict() for name, r in self.reports.items()},
            "clock": self.clock,
            "timing": self.timing,
        }


def compare_orders(graph: CapturedGraph, orders: Mapping[str, np.ndarray | Sequence[int]],
                   *, settings: QualitySettings | None = None,
                   fetch_times: Mapping[str, np.ndarray] | None = None,
                   progress: Progress | None = None,
                   scores: np.ndarray | None = None,
                   workers: int | None = None) -> dict[str, QualityReport]:
    """Score several orders over one graph, sharing one final-graph PageRank.

    Parameters
    ----------
    graph : CapturedGraph
        The final graph every order is measured against.
    orders : mapping
        Label -> node indices in fetch order.
    settings : QualitySettings, optional
    fetch_times : mapping, optional
        Label -> fetch times, for time slices.
    scores : ndarray, optional
        The graph's final PageRank (:func:`final_pagerank` with ``settings``), if
        already computed.
    workers : int, optional
        Orders scored at once on threads (default: as CPUs and memory allow; the
        reports do not depend on it).

    Returns
    -------
    dict
        Label -> :class:`~webcrawl.analysis.ordering.quality.QualityReport`, in the order given.

    Examples
    --------
    >>> g = CapturedGraph.from_edges([0, 0, 1, 2], [1, 2, 2, 0])
    >>> reports = compare_orders(g, {"a": [0, 1, 2], "b": [0, 2, 1]},
    ...                          settings=QualitySettings(slices=3, checkpoints=2))
    >>> sorted(reports)
    ['a', 'b']
    """
    settings = settings or QualitySettings()
    if scores is None:
        scores = final_pagerank(graph, remote_only=settings.remote_only,
                                alpha=settings.alpha, tol=settings.tol)
    times = fetch_times or {}

    def given(label: str) -> OrderJob:
        return lambda: (np.asarray(orders[label], dtype=np.int64), times.get(label))

    scored = score_jobs(graph, {label: given(label) for label in orders}, settings=settings,
                        scores=scores, workers=workers, progress=progress)
    return {label: result.report for label, result in scored.items()}


def compare_crawl(db_paths: str | Path | Sequence[str | Path], strategies: Sequence[str], *,
                  settings: CompareSettings | None = None,
                  progress: Progress | None = None) -> Comparison:
    """Compare crawl orderings on crawl databases (``webcrawl compare``).

    Parameters
    ----------
    db_paths : path or sequence of paths
        Virtual mode: exactly one crawl database.  Recorded mode: one database per
        strategy, in the same order as ``strategies``.
    strategies : sequence of str
        Registered strategy names (``bfs``, ``dfs``, ``random``, ``backlink``,
        ``pagerank``, ``opic``, ...).
    settings : CompareSettings, optional
    progress : callable, optional
        Called with one line of text per step (the CLI prints it on stderr).

    Returns
    -------
    Comparison

    Raises
    ------
    ConfigError
        Unknown strategy, no strategy, or the wrong number of databases.
    StoreError
        A database cannot be read (from :func:`webcrawl.analysis.graph.loader.load_graph`).
    """
    from webcrawl.analysis.graph.kept import load_source_graph
    from webcrawl.analysis.graph.loader import load_graph

    settings = settings or CompareSettings()
    names = _check_strategies(strategies)
    paths = [Path(db_paths)] if isinstance(db_paths, str | Path) else [Path(p) for p in db_paths]
    if settings.virtual:
        if len(paths) != 1:
            raise ConfigError(f"a virtual comparison replays strategies over ONE crawl "
                              f"database, got {len(paths)}")
        if progress:
            progress(f"loading {paths[0]}")
        full, source = load_source_graph(paths[0], graph="all",
                                         duplicates=settings.duplicates)
        measured, source = ((full, source) if settings.graph == "all"
                            else _pages_graph(source, full))
        durations = politeness = None
        if settings.timed:
            durations = settings.transfer_model().durations(full, db_path=paths[0])
            politeness = settings.politeness(recorded_politeness(paths[0]))
        comparison = virtual_comparison(full, names, measured=measured, settings=settings,
                                        progress=progress, durations=durations,
                                        politeness=politeness, source=source)
        return Comparison(comparison.reports,
                          f"virtual crawls over the crawl in {paths[0].name}; "
                          + comparison.method,
                          {paths[0].name: comparison.graphs["graph"]}, comparison.reach,
                          comparison.clock, comparison.timing)
    if len(paths) != len(names):
        raise ConfigError(f"comparing recorded crawls needs one --db per strategy "
                          f"({len(names)} strategies, {len(paths)} databases); "
                          f"or use --virtual to replay them over one crawl")
    reports: dict[str, QualityReport] = {}
    graphs: dict[str, dict[str, Any]] = {}
    for name, path in zip(names, paths, strict=True):
        if progress:
            progress(f"loading {path}")
        graph = load_graph(path, graph=settings.graph, duplicates=settings.duplicates)
        reports |= compare_orders(graph, {name: graph.fetch_order},
                                  settings=settings.quality,
                                  fetch_times={name: graph.fetch_times}, progress=progress)
        graphs[path.name] = graph.info()
    return Comparison(reports, "recorded crawl orders, each scored on its own final graph "
                      + ", ".join(f"{n}={p.name}" for n, p in zip(names, paths, strict=True)),
                      graphs)


def virtual_comparison(full: CapturedGraph, strategies: Sequence[str], *,
                       measured: CapturedGraph | None = None,
                       settings: CompareSettings | None = None,
                       progress: Progress | None = None,
                       durations: np.ndarray | None = None,
                       politeness: SimulatedPoliteness | None = None,
                       source: GraphSource | None = None) -> Comparison:
    """Replay orderings over a crawl's ``all`` graph and score them on the measured graph.

    The library function behind ``webcrawl compare --virtual``, the report's comparison
    section and the demo, so the three give the same numbers.

    Parameters
    ----------
    full : CapturedGraph
        The crawl's ``all`` graph (``load_graph(db, graph="all")``): replays need every
        discovered URL, the fetchable set and the redirects.  (A ``pages`` graph
        replays among its pages only.)
    strategies : sequence of str
        Registered strategy names.
    measured : CapturedGraph, optional
        The graph the orders are scored on, of kind ``settings.graph`` and from the
        same database (``load_graph(db, graph="pages")``); default ``full`` itself.
    settings : CompareSettings, optional
        ``graph`` names the measured graph (default ``pages``); ``max_pages`` caps
        each replay's fetches (default: the whole fetchable set).
    progress : callable, optional
    durations : ndarray, optional
        Fetch seconds of each node of ``full``, for timed replays (default: every node
        ``settings.fetch_seconds``).
    politeness : SimulatedPoliteness, optional
        For timed replays (``settings.timed``); default the crawler's defaults with the
        settings' overrides.
    source : GraphSource, optional
        Where ``measured`` was loaded from: its final PageRank is the one an earlier
        command kept, if any (:func:`webcrawl.analysis.graph.kept.source_pagerank`).

    Returns
    -------
    Comparison
        With ``reach`` (the fetchable set and what was excluded, and why),
        ``graphs["graph"]``, the measured graph's info, and for timed replays
        ``clock`` (each ordering's simulated duration and capture over time).

    Raises
    ------
    ConfigError
        Unknown or no strategy; ``measured`` is not the graph ``settings.graph`` names.

    Notes
    -----
    Each replay's order is projected onto the measured graph (fetches of URLs that
    are not nodes of it, such as redirects and error pages in the ``pages`` graph, are
    dropped from the order), then scored with :func:`compare_orders` against one
    PageRank of the measured graph.  The recorded order (``recorded``) is the
    measured graph's ``fetch_order``.
    """
    settings = settings or CompareSettings()
    names = _check_strategies(strategies)
    measured = full if measured is None else measured
    if measured.kind != settings.graph:
        raise ConfigError(f"the comparison measures the {settings.graph!r} graph, but the "
                          f"graph given is the {measured.kind!r} graph")
    # A measured graph holding the replayed graph's adjacency has its nodes (the pages
    # graph of a crawl whose every URL is a page, :func:`_pages_graph`): no map.
    same_nodes = measured.adjacency is full.adjacency
    pos = None if same_nodes else full.positions_in(measured)  # full -> measured (-1)
    reach = reach_summary(full)
    q = settings.quality
    if progress:
        progress("final PageRank")
    scores = final_pagerank(measured, remote_only=q.remote_only, alpha=q.alpha, tol=q.tol,
                            source=source)
    full_scores = scores if pos is None else np.where(pos >= 0, scores[np.maximum(pos, 0)],
                                                      0.0)
    polite: SimulatedPoliteness | None = None
    timing: dict[str, Any] = {}
    if settings.timed:
        polite = politeness or settings.politeness(recorded_politeness(None))
        model = settings.transfer_model()
        if durations is None:
            durations = model.durations(full)
        timing = {"politeness": polite.describe(), "transfer": model.to_dict()}
    jobs: dict[str, OrderJob] = {}
    if settings.include_recorded and measured.fetch_order.size:
        jobs[RECORDED] = lambda: (measured.fetch_order, measured.fetch_times)
    if settings.include_ideal:
        jobs[IDEAL] = lambda: (ideal_order(scores, np.asarray(measured.fetchable, bool)),
                               None)

    def replayed(name: str) -> OrderJob:
        def job() -> tuple[np.ndarray, np.ndarray | None]:
            order, ended = replayed_order(full, name, max_pages=settings.max_pages,
                                          seed=settings.seed, progress=progress,
                                          final_scores=full_scores, politeness=polite,
                                          durations=durations)
            if pos is None:
                return order, ended
            projected = pos[order]  # fetches of URLs that are not nodes measured: dropped
            kept = projected >= 0
            return projected[kept], None if ended is None else ended[kept]
        return job

    jobs |= {name: replayed(name) for name in names}
    # Timed replays are interpreted Python, which holds the GIL: one at a time.
    scored = score_jobs(measured, jobs, settings=q, scores=scores, nodes=full.n,
                        workers=1 if polite is not None else settings.workers,
                        keep_orders=polite is not None, progress=progress,
                        first=tuple(names))
    reports = {label: result.report for label, result in scored.items()}
    clock: dict[str, dict[str, Any]] = {}
    if polite is not None:
        orders = {label: result.order for label, result in scored.items()
                  if result.order is not None}
        times = {label: result.times for label, result in scored.items()
                 if result.times is not None}
        clock = _clock(orders, times, scores, settings, {RECORDED})
    for label, info in clock.items():
        reports[label].summary.update(info.pop("summary"))
    method = (f"replays inside the recorded crawl's reach ({reach.fetchable:,} fetchable "
              f"URLs), measured on the {measured.describe()}")
    if polite is not None:
        method += (f"; in simulated time: {polite.describe()}; "
                   f"{timing['transfer']['description']}")
    return Comparison(reports, method, {"graph": measured.info()}, reach, clock, timing)


#: Points of each timed capture curve in ``Comparison.clock``.
CLOCK_POINTS = 100


def _clock(orders: Mapping[str, np.ndarray], times: Mapping[str, np.ndarray],
           scores: np.ndarray, settings: CompareSettings,
           real: set[str]) -> dict[str, dict[str, Any]]:
    """Duration, capture at fractions of the longest duration and a capture curve per
    timed order (``real`` labels' times are wall clock, taken from their first fetch)."""
    clocks: dict[str, np.ndarray] = {}
    for label, order in orders.items():
        t = times.get(label)
        if t is None or t.size != order.size or not np.isfinite(t).all() or not t.size:
            continue
        clocks[label] = t - t.min() if label in real else t
    if not clocks:
        return {}
    longest = max(float(t.max()) for t in clocks.values()) or 1.0
    grid = np.linspace(0.0, longest, CLOCK_POINTS + 1)
    out: dict[str, dict[str, Any]] = {}
    for label, t in clocks.items():
        order = orders[label]
        at = capture_at_times(order, t, scores, np.asarray(settings.time_fractions) * longest)
        summary = {f"captured_at_{f * 100:g}pct_time": float(v)
                   for f, v in zip(settings.time_fractions, at, strict=True)}
        summary["simulated_hours"] = float(t.max()) / 3600.0
        out[label] = {"seconds": float(t.max()), "hours": (grid / 3600.0).tolist(),
                      "capture": capture_at_times(order, t, scores, grid).tolist(),
                      "summary": summary}
    return out


def _pages_graph(source: GraphSource, full: CapturedGraph) -> tuple[CapturedGraph,
                                                                     GraphSource]:
    """The ``pages`` graph of the crawl whose ``all`` graph is ``full``, loaded from
    ``source``, and where it came from.

    When every URL is a fetched page (an imported graph's default: no frontier, no
    redirect, no error page), the two graphs have the same nodes and links, so the
    pages graph is ``full`` itself under its name, sharing every array: the graph is
    held once (a second load would double the memory of the largest arrays).  It is
    then the graph ``load_graph(graph="pages")`` loads, and its source says so.
    """
    from webcrawl.analysis.graph.kept import load_source_graph

    if bool(np.all(full.crawled)):
        return replace(full, kind="pages"), source.with_options(graph="pages")
    return load_source_graph(source.db, graph="pages",
                             duplicates=source.options["duplicates"])


def _check_strategies(strategies: Sequence[str]) -> list[str]:
    """Strip, de-duplicate and check names against the registry (ConfigError lists them)."""
    import webcrawl.analysis.ordering.strategies  # noqa: F401  (registers the built-in strategies)
    from webcrawl.analysis.ordering.strategies.registry import get_strategy, parse_spec

    names = list(dict.fromkeys(s.strip() for s in strategies if s.strip()))
    if not names:
        raise ConfigError("no strategy to compare")
    for name in names:
        get_strategy(name).parse_options(parse_spec(name)[1])  # every option, checked now
    for reserved in (RECORDED, IDEAL):
        if reserved in names:
            raise ConfigError(f"{reserved!r} is reserved for a curve of the comparison")
    return names

