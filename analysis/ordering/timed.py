"""Virtual crawls in simulated time, under the politeness a live crawl obeys.

Baeza-Yates et al. judge an ordering by *when*, in time, it captures the important
pages, in a simulator that models a limited number of simultaneous connections, a
wait between two requests to one site and each page's transfer time [1]_.  This module
is that simulator for our strategies, with the live crawler's rules:

* at most ``connections`` requests in flight, and at most one per site (a host, or
  hosts serving the same documents: ``graph.sites``, see
  :mod:`webcrawl.analysis.graph.sites`; a page merged from copies on mirrored hosts
  is fetched once, from its site);
* after a request that took ``t`` seconds its host waits
  ``min(max_delay, max(min_delay, delay_factor * t))`` (Mercator's rule, as
  :class:`webcrawl.crawler.politeness.PolitenessPolicy` computes it live);
* a page's fetch takes the time the caller's transfer-time model gives it
  (:class:`webcrawl.analysis.ordering.transfer.TransferModel`: the recorded duration,
  :func:`recorded_durations`; a constant; or latency + size / bandwidth per site);
* whenever a connection is free, the frontier takes, among the hosts that may be
  contacted now, the host the strategy's :attr:`~Strategy.host_order` picks (the host
  holding the best-ranked URL, or for ``larger-sites-first`` the host with the most
  pending URLs), and its best URL -- the live frontier's rule
  (:class:`webcrawl.crawler.frontier.Frontier`).

A page's links become known when its fetch ends: the strategy is then told
(``discovered`` for new targets, ``fetched``), its updates applied, and a due
recomputation run at once, exactly as in :func:`webcrawl.analysis.ordering.virtual.replay`
(which is this simulation with one connection and no waits: both give the same order,
tested).  Simultaneous events are processed in a fixed order (ends by time, then by
when they were taken), so a simulation is deterministic.

References
----------
.. [1] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country:
   better strategies than breadth-first for web page ordering", WWW 2005.
.. [2] A. Heydon, M. Najork, "Mercator: a scalable, extensible web crawler", World
   Wide Web 2(4), 1999 (the wait proportional to the last fetch time).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.hosts import replay_hosts
from webcrawl.analysis.ordering.strategies import Strategy
from webcrawl.analysis.ordering.virtual import VirtualCrawl, prepare_replay
from webcrawl.storage.errors import ConfigError

__all__ = [
    "DEFAULT_FETCH_SECONDS",
    "SimulatedPoliteness",
    "TimedCrawl",
    "fill_by_site",
    "recorded_durations",
    "recorded_per_node",
    "recorded_politeness",
    "timed_crawl",
]

#: Fetch time of every page of a graph without recorded durations (an imported edge
#: list), in seconds.
DEFAULT_FETCH_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class SimulatedPoliteness:
    """The politeness of a simulated crawl (defaults: one connection, no waits).

    Attributes
    ----------
    connections : int
        Requests in flight at once over all hosts (always one per host).
    min_delay, delay_factor, max_delay : float
        A host waits ``min(max_delay, max(min_delay, delay_factor * t))`` after a
        request that took ``t`` seconds.
    """

    connections: int = 1
    min_delay: float = 0.0
    delay_factor: float = 0.0
    max_delay: float = float("inf")

    def __post_init__(self) -> None:
        if self.connections < 1:
            raise ConfigError(f"connections must be >= 1, got {self.connections}")
        for name in ("min_delay", "delay_factor", "max_delay"):
            value = getattr(self, name)
            if not value >= 0:
                raise ConfigError(f"{name} must be >= 0, got {value}")
        if self.min_delay > self.max_delay:
            raise ConfigError(f"min_delay ({self.min_delay}) exceeds max_delay "
                              f"({self.max_delay})")

    def waits(self, seconds: np.ndarray) -> np.ndarray:
        """The wait after each fetch duration in ``seconds`` (vectorised)."""
        return np.minimum(self.max_delay, np.maximum(self.min_delay,
                                                     self.delay_factor * seconds))

    def describe(self) -> str:
        return (f"{self.connections} connection{'s' if self.connections != 1 else ''}, "
                f"wait max({self.min_delay:g} s, {self.delay_factor:g} x fetch time)"
                + (f" up to {self.max_delay:g} s" if np.isfinite(self.max_delay) else ""))


@dataclass(frozen=True)
class TimedCrawl(VirtualCrawl):
    """A simulated crawl: a :class:`~webcrawl.analysis.ordering.virtual.VirtualCrawl`
    (``order`` is the order pages were taken, a live crawl's ``seq`` order) with its clock.

    Attributes
    ----------
    started, ended : ndarray of float64
        Simulated seconds at which each fetch of ``order`` started and ended.
    politeness : SimulatedPoliteness
    """

    started: np.ndarray
    ended: np.ndarray
    politeness: SimulatedPoliteness

    @property
    def duration(self) -> float:
        """Simulated seconds from the first request to the last page in hand."""
        return float(self.ended.max()) if self.ended.size else 0.0


def timed_crawl(
    graph: CapturedGraph,
    strategy: str | Strategy,
    politeness: SimulatedPoliteness | None = None,
    durations: np.ndarray | None = None,
    *,
    seeds: Sequence[int] | np.ndarray | None = None,
    max_pages: int | None = None,
    seed: int = 0,
    final_scores: np.ndarray | None = None,
) -> TimedCrawl:
    """Replay a crawl ordering over a captured graph in simulated time.

    The page set and the rules of :func:`webcrawl.analysis.ordering.virtual.virtual_crawl`
    (only fetchable nodes are taken), in time under ``politeness``.

    Parameters
    ----------
    graph : CapturedGraph
    strategy : str or Strategy
        A strategy spec or a fresh instance.
    politeness : SimulatedPoliteness, optional
        Default: one connection, no waits.
    durations : ndarray, optional
        Fetch seconds per node (:func:`recorded_durations`); default
        :data:`DEFAULT_FETCH_SECONDS` for every node.
    seeds, max_pages, seed, final_scores
        As for :func:`~webcrawl.analysis.ordering.virtual.virtual_crawl`.

    Returns
    -------
    TimedCrawl

    Examples
    --------
    Node 1 shares the seed's host, node 2 has its own; fetches take 1 s, a host then
    waits 2 s: node 2 goes first, node 1 when its host's wait ends.

    >>> g = CapturedGraph.from_edges([0, 0], [1, 2], hosts=[0, 0, 1])
    >>> t = timed_crawl(g, "bfs", SimulatedPoliteness(2, min_delay=2.0), np.ones(3))
    >>> t.order.tolist(), t.started.tolist(), t.duration
    ([0, 2, 1], [0.0, 1.0, 3.0], 4.0)
    """
    instance, start, out_links, skip = prepare_replay(
        graph, strategy, seeds=seeds, max_pages=max_pages, seed=seed,
        final_scores=final_scores)
    dur = (np.full(graph.n, DEFAULT_FETCH_SECONDS) if durations is None
           else np.asarray(durations, dtype=np.float64))
    polite = politeness or SimulatedPoliteness()
    run = replay_hosts(instance, graph.n, start, out_links, graph.sites, dur,
                       polite.waits(dur), polite.connections, max_pages=max_pages,
                       never_taken=skip)
    return TimedCrawl(instance.name, run.order, run.priorities, run.depths, run.discovery,
                      run.recomputations, run.started, run.ended, polite)


# ---------------------------------------------------------------- recorded timings


def recorded_durations(db_path: str | Path, graph: CapturedGraph, *,
                       default: float = DEFAULT_FETCH_SECONDS) -> np.ndarray:
    """Fetch time of each node of ``graph`` as the crawl in ``db_path`` measured it.

    A node's time is the duration (``ended_at - started_at``) of its final crawl
    fetch (a merged node's: its canonical copy's, ``graph.store_ids``); a node without
    one (never fetched, or an imported graph) gets its site's median, else the median
    of every measured fetch, else ``default``.

    Parameters
    ----------
    db_path : path
        The crawl database ``graph`` was loaded from.
    graph : CapturedGraph
    default : float
        Seconds for every node when nothing was measured.

    Returns
    -------
    ndarray of float64, length ``graph.n``
    """
    return fill_by_site(recorded_per_node(db_path, graph, "seconds"),
                        np.asarray(graph.sites, dtype=np.int64), default)


def recorded_per_node(db_path: str | Path, graph: CapturedGraph,
                      what: str = "seconds") -> np.ndarray:
    """Each node's final crawl fetch as the crawl in ``db_path`` recorded it: its
    duration (``what="seconds"``) or body bytes (``"size"``); NaN where none.

    A merged node has its canonical copy's (``graph.store_ids``).
    """
    from webcrawl.storage.reader import CrawlReader

    if what not in ("seconds", "size"):
        raise ConfigError(f"recorded_per_node: 'seconds' or 'size', got {what!r}")
    with CrawlReader(db_path) as reader:
        table = reader.fetches(kind="crawl")
    per_node = np.full(graph.n, np.nan)
    if table.url_id.size and graph.n:
        ids = np.asarray(graph.store_ids, dtype=np.int64)
        top = int(max(ids.max(initial=-1), table.url_id.max())) + 1
        node_of = np.full(top, -1, dtype=np.int64)
        node_of[ids[ids >= 0]] = np.flatnonzero(ids >= 0)
        nodes = node_of[table.url_id]
        keep = nodes >= 0
        values = (table.ended_at - table.started_at if what == "seconds"
                  else table.size.astype(np.float64))  # size -1: not recorded
        # rows come in insertion order: the last row of a URL is its final attempt
        per_node[nodes[keep]] = values[keep]
        per_node = np.where(per_node >= 0, per_node, np.nan)
    return per_node


def fill_by_site(values: np.ndarray, sites: np.ndarray, default: float) -> np.ndarray:
    """NaNs replaced by their site's median, then the overall median, then ``default``."""
    out = np.asarray(values, dtype=np.float64).copy()
    missing = np.isnan(out)
    if not missing.any():
        return out
    known = ~missing
    if known.any():
        order = np.lexsort((out[known], sites[known]))
        k_sites, k_vals = sites[known][order], out[known][order]
        uniq, start, count = np.unique(k_sites, return_index=True, return_counts=True)
        lo = start + (count - 1) // 2
        hi = start + count // 2
        medians = (k_vals[lo] + k_vals[hi]) / 2
        site_median = np.full(int(sites.max(initial=-1)) + 1, np.nan)
        site_median[uniq] = medians
        out[missing] = site_median[sites[missing]]
        still = np.isnan(out)
        out[still] = float(np.median(out[known]))
    else:
        out[:] = default
    return out


def recorded_politeness(db_path: str | Path | None) -> SimulatedPoliteness:
    """The politeness a recorded crawl ran with (its stored settings).

    Connections are the crawl's ``concurrency``, the waits its ``polite_min_delay``,
    ``polite_delay_factor`` and ``polite_max_delay``; a database without stored
    settings (an imported graph) gets the crawler's defaults.
    """
    from webcrawl.storage.reader import CrawlReader

    stored: dict[str, object] = {}
    if db_path is not None:
        with CrawlReader(db_path) as reader:
            raw = reader.meta().get("settings")
        stored = json.loads(raw) if raw else {}
    values = {**_CRAWLER_DEFAULTS, **{k: stored[k] for k in _CRAWLER_DEFAULTS if k in stored}}
    return SimulatedPoliteness(connections=int(values["concurrency"]),  # type: ignore[call-overload]
                               min_delay=float(values["polite_min_delay"]),  # type: ignore[arg-type]
                               delay_factor=float(values["polite_delay_factor"]),  # type: ignore[arg-type]
                               max_delay=float(values["polite_max_delay"]))  # type: ignore[arg-type]


#: The live crawler's defaults (``webcrawl.crawler.settings.CrawlSettings``), for
#: graphs without stored settings; a test checks they match.
_CRAWLER_DEFAULTS: dict[str, object] = {"concurrency": 64, "polite_min_delay": 1.0,
                                        "polite_delay_factor": 10.0, "polite_max_delay": 30.0}
