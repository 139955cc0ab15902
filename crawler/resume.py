"""Resuming a crawl: its stored settings, then its in-memory state, from the crawl database.

The store is the crawl's only durable state.  A crawl stores its seeds, its strategy
and its whole :class:`~webcrawl.crawler.settings.CrawlSettings` (meta keys ``seeds``,
``strategy``, ``settings``).  A resume:

1. :func:`webcrawl.crawler.config.resume_settings` (before anything is built): the stored
   settings come back
   -- scope, ``resolve`` rules, TLS, delays, limits, User-Agent, strategy and its
   seed; the fields given again override them (one layering for every entry point:
   :func:`webcrawl.crawler.config.layer_settings`), with a one-line note; a strategy
   other than the stored one is refused (:class:`~webcrawl.storage.errors.ConfigError`): the
   stored fetch order was made by the stored strategy, and the frontier is ranked by
   replaying it.  A graph imported from an edge list holds no crawl and is refused
   (:func:`refuse_imported_graph`).
2. :func:`merge_seeds`: the stored seeds first, new ones appended.
3. :func:`restore` (once the store is open): the URL and host tables
   (:class:`~webcrawl.crawler.registry.CrawlRegistry`), per-host robots.txt state, the
   scope's per-host counts, the outcome counters, and the frontier (URLs without an
   outcome, and URLs an older version marked ``abandoned`` at a page limit).
   :func:`replay` drives the strategy over the stored fetch order and links,
   announcing each URL to it no later than the fetch that discovered it, so that a
   resumed crawl ranks its frontier as the uninterrupted crawl would have.  The hosts'
   politeness clocks are the downloader's: every host counts as contacted at the
   resume (:meth:`webcrawl.crawler.downloader.Downloader.contacts_unknown`).

A URL whose outcome was committed is never taken again; a URL whose fetch was in
flight (or whose records were not yet committed) at a kill is fetched again: the
records of one fetch are committed together or not at all (see
:mod:`webcrawl.storage.store`).  This module reads and fills the crawl's parts through their
public methods; it knows nothing of the engine.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from webcrawl.analysis.ordering.strategies import Strategy
from webcrawl.crawler.config import META_SEEDS, settings_dict
from webcrawl.crawler.frontier import Frontier
from webcrawl.crawler.outcomes import NOT_REQUESTED
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.crawler.robots import RobotsCache
from webcrawl.crawler.scope import Scope
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.urls import host_key
from webcrawl.storage import _testhooks
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.records import Outcome
from webcrawl.storage.store import ResumeState

__all__ = [
    "Restored",
    "merge_seeds",
    "read_meta",
    "refuse_imported_graph",
    "replay",
    "restore",
    "settings_json",
]

log = logging.getLogger(__name__)




# -- settings -----------------------------------------------------------------------

def settings_json(settings: CrawlSettings) -> str:
    """The settings as stored in meta ``settings`` (:func:`crawler.config.settings_dict`)."""
    return json.dumps(settings_dict(settings))


def merge_seeds(meta: Mapping[str, str], given: list[str]) -> tuple[list[str], list[str]]:
    """All seeds of a resumed crawl (stored first) and the new ones among ``given``."""
    stored = list(json.loads(meta.get(META_SEEDS, "[]")))
    new = [u for u in given if u not in stored]
    return stored + new, new


# -- state --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Restored:
    """The counters of a resumed crawl (the tables went into the parts themselves)."""

    outcomes: Counter[str]
    #: URLs already taken (each a request): they count against ``scope_max_pages``
    taken: int
    #: the next fetch sequence number
    next_seq: int


def restore(state: ResumeState, *, registry: CrawlRegistry, robots: RobotsCache,
            frontier: Frontier, scope: Scope, strategy: Strategy) -> Restored:
    """Fill empty crawl parts from ``state``; return the counters."""
    registry.load(state.hosts, state.urls)
    for h in state.hosts:
        robots.restore(h.id, h.robots_status, h.robots_body, h.crawl_delay)
    outcomes: Counter[str] = Counter()
    taken = 0
    queued: list[int] = []
    for u in state.urls:
        if u.outcome is not Outcome.OUT_OF_SCOPE:
            scope.count(host_key(u.url), u.url)
        if u.outcome is None or u.outcome is Outcome.ABANDONED:
            queued.append(u.id)  # a page limit abandons nothing for good
            continue
        outcomes[u.outcome] += 1
        if u.outcome not in NOT_REQUESTED:  # not requested: no page limit counts them
            taken += 1
    priority = replay(strategy, state)
    for url_id in queued:
        frontier.add(url_id, registry.host_of(url_id), priority[url_id])
    log.info("resumed: %d URLs known, %d in the frontier, next seq %d",
             len(registry), len(frontier), state.next_seq)
    return Restored(outcomes, taken, state.next_seq)


def replay(strategy: Strategy, state: ResumeState) -> dict[int, float]:
    """Drive ``strategy`` over the stored crawl; return every URL's last priority."""
    priority: dict[int, float] = {}
    urls = state.urls
    by_seq = {u.id: u.seq for u in urls}
    announced = 0

    def announce(upto: int) -> None:
        nonlocal announced
        while announced <= upto and announced < len(urls):
            u = urls[announced]
            priority[u.id] = strategy.discovered(u.id, u.depth)
            announced += 1

    discovered_by: dict[int, int] = {}
    for u in urls:
        if u.discovered_seq >= 0:
            discovered_by[u.discovered_seq] = max(discovered_by.get(u.discovered_seq, -1), u.id)
    announce(max((u.id for u in urls if u.discovered_seq < 0), default=-1))
    # A strategy recomputing at fetch counts alone (batch-pagerank, partial-pagerank)
    # is replayed with its recomputations where the crawl made them; one that also
    # recomputes on a clock (pagerank) gets one recomputation at the end instead.
    scheduled = strategy.fetch_scheduled
    since = 0
    for src, dsts in state.fetched_links:
        seq = by_seq.get(src)
        upto = max(discovered_by.get(seq, -1) if seq is not None else -1,
                   max(dsts, default=-1))
        announce(upto)
        for url_id, prio in strategy.fetched(src, list(dsts)):
            priority[url_id] = prio
        since += 1
        if scheduled and strategy.wants_recompute(since, 0.0):
            since = 0
            for url_id, prio in type(strategy).recompute(strategy.snapshot()):
                priority[url_id] = prio
    announce(len(urls))
    if not scheduled:
        _testhooks.reached("recompute")  # test-only: lets a kill land mid-recomputation
        for url_id, prio in type(strategy).recompute(strategy.snapshot()):
            priority[url_id] = prio
    return priority


def refuse_imported_graph(db: Path, meta: Mapping[str, str]) -> None:
    """A graph imported from an edge list holds no crawl to resume: its nodes are
    integer ids or names, or URLs without seeds, fetches or link depths."""
    if meta.get("source") != "edges":
        return
    names = meta.get("names")
    if names in ("ids", "names"):
        kind = "integer ids" if names == "ids" else "names"
        raise ConfigError(f"{db} holds a graph imported from an edge list whose nodes are "
                          f"{kind}, not URLs: there is no crawl to resume (simulate runs "
                          "virtual crawls over it)")
    raise ConfigError(f"{db} holds a graph imported from an edge list of URLs, not a crawl: "
                      "there is no crawl to resume (crawl its URLs with webcrawl crawl "
                      "--input-file FILE --db NEW.db, or run virtual crawls over it with "
                      "webcrawl simulate)")


def read_meta(db: Path) -> dict[str, str]:
    """The meta table of the crawl database to resume (ConfigError if there is none)."""
    from webcrawl.storage.reader import CrawlReader

    if not db.exists():
        raise ConfigError(f"nothing to resume: no crawl database at {db}")
    with CrawlReader(db) as reader:
        return reader.meta()
