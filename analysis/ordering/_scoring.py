"""Crawl orders made and scored side by side (private): the engine of
:func:`webcrawl.analysis.ordering.compare.compare_orders` and
:func:`~webcrawl.analysis.ordering.compare.virtual_comparison`.

Each order is a *job*: make the order (a replay, the recorded order, the ``ideal``
ceiling), then score it with :func:`~webcrawl.analysis.ordering.quality.crawl_quality`
against one final PageRank and one ranking of it, shared by every job.  Jobs run on
threads over the one graph in memory (nothing is copied per job): the compiled
replays and the compiled pass over the links release the GIL, and so does most of
numpy's work, so two jobs use two cores.  As many jobs run at once as there are CPUs
and memory for (:func:`webcrawl.analysis._compiled.parallel_slots`), each costing
about :data:`JOB_BYTES_PER_NODE` bytes a node of the graph; a job's order is dropped
once it is scored unless the caller keeps it.

Results do not depend on how many jobs run at once or in what order they end: each
job reads shared arrays and writes only its own (tested against one job at a time).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from webcrawl.analysis._compiled import parallel_slots
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.quality import QualityReport, QualitySettings, crawl_quality
from webcrawl.analysis.ordering.quality_order import rank_positions
from webcrawl.analysis.ordering.timed import SimulatedPoliteness

__all__ = [
    "JOB_BYTES_PER_NODE",
    "OrderJob",
    "Scored",
    "replayed_order",
    "score_jobs",
    "virtual_orders",
]

Progress = Callable[[str], None]

#: A job's order and its fetch times (None: none), made when the job runs.
OrderJob = Callable[[], tuple[np.ndarray, np.ndarray | None]]

#: Bytes a node of the replayed graph that one job holds at its peak, beyond the graph
#: and the shared PageRank: the random replay's state (44 bytes a node: depths,
#: discovery, order, priorities, its heap's keys and sequence numbers, its draws),
#: then the scoring's (the order's PageRank and ranks gathered, their sums, the
#: pass over the links' three arrays of the nodes, the capture curve kept).
JOB_BYTES_PER_NODE = 80


@dataclass(frozen=True, eq=False)
class Scored:
    """One job's report, and its order and fetch times when they were kept."""

    report: QualityReport
    order: np.ndarray | None = None
    times: np.ndarray | None = None


def score_jobs(graph: CapturedGraph, jobs: Mapping[str, OrderJob], *,
               settings: QualitySettings, scores: np.ndarray, nodes: int | None = None,
               workers: int | None = None, keep_orders: bool = False,
               progress: Callable[[str], None] | None = None,
               first: tuple[str, ...] = ()) -> dict[str, Scored]:
    """Run every job and score its order on ``graph``; results in the order of ``jobs``.

    Parameters
    ----------
    graph : CapturedGraph
        The measured graph the orders are scored on.
    jobs : mapping
        Label -> the job that makes the order (see :data:`OrderJob`).
    settings : QualitySettings
    scores : ndarray
        The measured graph's final PageRank.
    nodes : int, optional
        Nodes of the graph the jobs replay over (default ``graph.n``): sets the memory
        a job needs.
    workers : int, optional
        Jobs at once (default: as CPUs and memory allow).
    keep_orders : bool
        Keep each order and its times in the result (default False: dropped once
        scored).
    progress : callable, optional
        Called with one line per step; the calls from the threads are serialised.
    first : tuple of str
        Labels to start first (the long replays), the others after them.
    """
    rank = rank_positions(np.asarray(scores, dtype=np.float64))
    lock = threading.Lock()

    def say(line: str) -> None:
        if progress is not None:
            with lock:
                progress(line)

    def run(label: str) -> Scored:
        order, times = jobs[label]()
        say(f"quality metrics: {label}")
        report = crawl_quality(graph, order, settings=settings, scores=scores, rank=rank,
                               fetch_times=times)
        return Scored(report, order, times) if keep_orders else Scored(report)

    size = graph.n if nodes is None else nodes
    slots = parallel_slots(len(jobs), JOB_BYTES_PER_NODE * max(size, 1), workers=workers)
    start = [label for label in first if label in jobs]
    start += [label for label in jobs if label not in start]
    if slots == 1:
        done = {label: run(label) for label in start}
        return {label: done[label] for label in jobs}
    with ThreadPoolExecutor(max_workers=slots) as pool:
        futures: dict[str, Future[Scored]] = {label: pool.submit(run, label)
                                              for label in start}
        return {label: futures[label].result() for label in jobs}


def virtual_orders(graph: CapturedGraph, strategies: Sequence[str], *,
                   max_pages: int | None = None, seed: int = 0,
                   progress: Progress | None = None,
                   final_scores: np.ndarray | None = None,
                   politeness: SimulatedPoliteness | None = None,
                   durations: np.ndarray | None = None,
                   ended: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Replay each named strategy over ``graph`` and return its fetch order.

    Replays fetch only ``graph.fetchable`` nodes (see
    :func:`webcrawl.analysis.ordering.virtual.virtual_crawl`).  ``final_scores`` (by node)
    feeds the strategies that need the final PageRank (``omniscient``).  With
    ``politeness`` the replays run in simulated time
    (:func:`webcrawl.analysis.ordering.timed.timed_crawl`, ``durations`` per node) and, if
    ``ended`` is given, each order's end times are stored in it by strategy.
    """
    orders = {}
    for name in strategies:
        order, times = replayed_order(graph, name, max_pages=max_pages, seed=seed,
                                      progress=progress, final_scores=final_scores,
                                      politeness=politeness, durations=durations)
        if ended is not None and times is not None:
            ended[name] = times
        orders[name] = np.asarray(order, dtype=np.int64)
    return orders


def replayed_order(graph: CapturedGraph, name: str, *, max_pages: int | None, seed: int,
                   progress: Progress | None, final_scores: np.ndarray | None,
                   politeness: SimulatedPoliteness | None,
                   durations: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """One strategy's replay: its order, and with ``politeness`` when each fetch ended."""
    from webcrawl.analysis.ordering.timed import timed_crawl
    from webcrawl.analysis.ordering.virtual import virtual_order

    if progress:
        progress(f"virtual crawl: {name}")
    if politeness is None:
        return virtual_order(graph, name, max_pages=max_pages, seed=seed,
                             final_scores=final_scores), None
    timed = timed_crawl(graph, name, politeness, durations, max_pages=max_pages,
                        seed=seed, final_scores=final_scores)
    return timed.order, timed.ended
