"""Compare crawl orderings: which one finds the important pages first?

Two ways to get the orders, both scored on a final captured graph with
:func:`analysis.ordering.quality.crawl_quality`:

* **virtual** (``webcrawl compare --virtual``): crawl once, then replay each strategy
  over the captured graph with :func:`analysis.ordering.virtual.virtual_crawl` (no network);
  every order is scored against the same graph and the same PageRank, and the crawl's
  own recorded order is added as the curve ``recorded``;
* **recorded**: one crawl database per strategy (for instance the same site crawled
  with ``--strategy bfs`` and ``--strategy random``); each recorded order is scored
  against its own final graph.

:func:`compare_crawl` is the library function behind ``webcrawl compare``;
:func:`compare_orders` scores orders you already have;
:func:`analysis.report.comparison_files.write_comparison` writes
one PNG per metric and ``comparison.json``.

References
----------
.. [1] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality pages",
   WWW 2001 (breadth-first, backlink, PageRank and random orderings, virtual crawls).
.. [2] T. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007 (BFS, DFS, DEG,
   RND and PageRank capture).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from analysis.graph.captured import CapturedGraph
from analysis.ordering.quality import (
    QualityReport,
    QualitySettings,
    crawl_quality,
    final_pagerank,
    summary_label,
)
from storage.errors import ConfigError

__all__ = [
    "RECORDED",
    "CompareSettings",
    "Comparison",
    "compare_crawl",
    "compare_orders",
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
        Stop virtual crawls after this many pages (default None: as many pages as the
        recorded crawl fetched, the same budget; frontier URLs can be fetched
        virtually but reveal no links).
    seed : int
        Random seed of randomised strategies in virtual crawls (default 0).
    """

    quality: QualitySettings = field(default_factory=QualitySettings)
    virtual: bool = True
    include_recorded: bool = True
    max_pages: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_pages is not None and self.max_pages < 1:
            raise ConfigError(f"max_pages must be >= 1, got {self.max_pages}")


@dataclass(frozen=True, eq=False)
class Comparison:
    """Quality reports of several crawl orders, with how they were made."""

    reports: dict[str, QualityReport]
    method: str
    graphs: dict[str, dict[str, int]] = field(default_factory=dict)

    def summary_table(self) -> tuple[list[str], list[list[Any]]]:
        """Headers and rows (one per order) of the summary figures."""
        keys = list(dict.fromkeys(k for r in self.reports.values() for k in r.summary))
        headers = ["strategy", "pages", *(summary_label(k) for k in keys)]
        rows = [[name, r.pages, *(r.summary.get(k, float("nan")) for k in keys)]
                for name, r in self.reports.items()]
        return headers, rows

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: method, graphs, summary table and every curve."""
        return {
            "method": self.method,
            "graphs": self.graphs,
            "summary": {name: r.to_dict()["summary"] | {"pages": r.pages}
                        for name, r in self.reports.items()},
            "reports": {name: r.to_dict() for name, r in self.reports.items()},
        }


def virtual_orders(graph: CapturedGraph, strategies: Sequence[str], *,
                   max_pages: int | None = None, seed: int = 0,
                   progress: Progress | None = None) -> dict[str, np.ndarray]:
    """Replay each named strategy over ``graph`` and return its fetch order."""
    from analysis.ordering.virtual import virtual_crawl

    orders = {}
    for name in strategies:
        if progress:
            progress(f"virtual crawl: {name}")
        crawl = virtual_crawl(graph, name, max_pages=max_pages, seed=seed)
        orders[name] = np.asarray(crawl.order, dtype=np.int64)
    return orders


def compare_orders(graph: CapturedGraph, orders: Mapping[str, np.ndarray | Sequence[int]],
                   *, settings: QualitySettings | None = None,
                   fetch_times: Mapping[str, np.ndarray] | None = None,
                   progress: Progress | None = None) -> dict[str, QualityReport]:
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

    Returns
    -------
    dict
        Label -> :class:`~analysis.ordering.quality.QualityReport`, in the order given.

    Examples
    --------
    >>> g = CapturedGraph.from_edges([0, 0, 1, 2], [1, 2, 2, 0])
    >>> reports = compare_orders(g, {"a": [0, 1, 2], "b": [0, 2, 1]},
    ...                          settings=QualitySettings(slices=3, checkpoints=2))
    >>> sorted(reports)
    ['a', 'b']
    """
    settings = settings or QualitySettings()
    scores = final_pagerank(graph, remote_only=settings.remote_only, alpha=settings.alpha,
                            tol=settings.tol)
    times = fetch_times or {}
    reports = {}
    for label, order in orders.items():
        if progress:
            progress(f"quality metrics: {label}")
        reports[label] = crawl_quality(graph, np.asarray(order, dtype=np.int64),
                                       settings=settings, scores=scores,
                                       fetch_times=times.get(label))
    return reports


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
        A database cannot be read (from :func:`analysis.graph.loader.load_graph`).
    """
    from analysis.graph.loader import load_graph

    settings = settings or CompareSettings()
    names = _check_strategies(strategies)
    paths = [Path(db_paths)] if isinstance(db_paths, str | Path) else [Path(p) for p in db_paths]
    if settings.virtual:
        if len(paths) != 1:
            raise ConfigError(f"a virtual comparison replays strategies over ONE crawl "
                              f"database, got {len(paths)}")
        if progress:
            progress(f"loading {paths[0]}")
        graph = load_graph(paths[0])
        orders: dict[str, np.ndarray] = {}
        times: dict[str, np.ndarray] = {}
        if settings.include_recorded and graph.fetch_order.size:
            orders[RECORDED] = graph.fetch_order
            times[RECORDED] = graph.fetch_times
        budget = settings.max_pages or int(np.count_nonzero(graph.crawled)) or None
        orders |= virtual_orders(graph, names, max_pages=budget,
                                 seed=settings.seed, progress=progress)
        reports = compare_orders(graph, orders, settings=settings.quality,
                                 fetch_times=times, progress=progress)
        method = (f"virtual crawls over the graph captured in {paths[0].name} "
                  f"({graph.n} URLs, {int(graph.crawled.sum())} crawled, {graph.m} links)")
        return Comparison(reports, method, {paths[0].name: _graph_info(graph)})
    if len(paths) != len(names):
        raise ConfigError(f"comparing recorded crawls needs one --db per strategy "
                          f"({len(names)} strategies, {len(paths)} databases); "
                          f"or use --virtual to replay them over one crawl")
    reports, graphs = {}, {}
    for name, path in zip(names, paths, strict=True):
        if progress:
            progress(f"loading {path}")
        graph = load_graph(path)
        reports |= compare_orders(graph, {name: graph.fetch_order},
                                  settings=settings.quality,
                                  fetch_times={name: graph.fetch_times}, progress=progress)
        graphs[path.name] = _graph_info(graph)
    return Comparison(reports, "recorded crawl orders, each scored on its own final graph "
                      + ", ".join(f"{n}={p.name}" for n, p in zip(names, paths, strict=True)),
                      graphs)


def _check_strategies(strategies: Sequence[str]) -> list[str]:
    """Strip, de-duplicate and check names against the registry (ConfigError lists them)."""
    import analysis.ordering.strategies  # noqa: F401  (registers the built-in strategies)
    from analysis.ordering.strategies.registry import get_strategy

    names = list(dict.fromkeys(s.strip() for s in strategies if s.strip()))
    if not names:
        raise ConfigError("no strategy to compare")
    for name in names:
        get_strategy(name)
    if RECORDED in names:
        raise ConfigError(f"{RECORDED!r} is reserved for the crawl's own order")
    return names


def _graph_info(graph: CapturedGraph) -> dict[str, int]:
    return {"urls": graph.n, "crawled": int(np.count_nonzero(graph.crawled)),
            "links": graph.m}
