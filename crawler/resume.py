"""Resuming a crawl: rebuild the engine's in-memory state from the crawl database.

The store is the crawl's only durable state; :func:`restore` reads it back into a
:class:`~crawler.engine.Crawler` before its dispatcher starts: the seeds (stored ones
first, new ones appended), the id maps, per-host politeness and robots.txt state, the
scope's per-host counts, the outcome counters, and the frontier (URLs without an
outcome).  :func:`replay` drives the strategy over the stored fetch order and links,
announcing each URL to it no later than the fetch that discovered it, so that a
resumed crawl ranks its frontier as the uninterrupted crawl would have.

A URL whose outcome was committed is never taken again; a URL whose fetch was in
flight (or whose records were not yet committed) at a kill is fetched again: the
records of one fetch are committed together or not at all (see
:mod:`storage.store`).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from crawler.politeness import HostSlot
from crawler.scope import Scope
from crawler.urls import host_key
from storage import _testhooks
from storage.errors import ConfigError
from storage.records import Outcome
from storage.store import ResumeState

if TYPE_CHECKING:
    from analysis.ordering.strategies import Strategy
    from crawler.engine import Crawler

__all__ = ["replay", "restore"]

log = logging.getLogger(__name__)

#: Outcomes given without a request: they do not count against ``scope_max_pages``.
_NOT_TAKEN = (Outcome.OUT_OF_SCOPE, Outcome.ROBOTS_EXCLUDED, Outcome.ABANDONED)


def restore(crawler: Crawler, state: ResumeState) -> None:
    """Rebuild id maps, host state, scope counts, the strategy and the frontier."""
    store = crawler.store
    assert store is not None
    stored_seeds = json.loads(state.meta.get("seeds", "[]"))
    new_seeds = [u for u in crawler.seeds if u not in stored_seeds]
    crawler.seeds = stored_seeds + new_seeds
    if new_seeds:
        store.set_meta("seeds", json.dumps(crawler.seeds))
    if not crawler.seeds:
        raise ConfigError(f"{crawler.db_path} holds no crawl to resume")
    scope = crawler.scope = Scope(crawler.settings, crawler.seeds)
    _restore_hosts(crawler, state)
    scheme_known = [False] * len(crawler._slots)
    for u in state.urls:
        assert u.id == len(crawler._urls), "URL ids must be dense"
        crawler._url_id[u.url] = u.id
        crawler._urls.append(u.url)
        crawler._depth.append(u.depth)
        crawler._url_host.append(u.host_id)
        if not scheme_known[u.host_id]:
            scheme_known[u.host_id] = True
            crawler._scheme[u.host_id] = u.url.split(":", 1)[0]
        if u.outcome is not Outcome.OUT_OF_SCOPE:
            scope.count(host_key(u.url), u.url)
        if u.outcome is not None:
            crawler.stats.outcomes[u.outcome] += 1
            if u.outcome not in _NOT_TAKEN:
                crawler._taken += 1
    crawler._next_seq = state.next_seq
    crawler.stats.resumed_pages = crawler.stats.pages
    crawler.stats.links_cut_pages = state.link_cuts
    priority = replay(crawler.strategy, state)
    for u in state.urls:
        if u.outcome is None:
            crawler.frontier.add(u.id, u.host_id, priority[u.id])
    for url in new_seeds:
        crawler._discover(url, 0, -1)
    log.info("resumed: %d URLs known, %d in the frontier, next seq %d",
             len(crawler._urls), len(crawler.frontier), crawler._next_seq)


def _restore_hosts(crawler: Crawler, state: ResumeState) -> None:
    for h in sorted(state.hosts, key=lambda h: h.id):
        assert h.id == len(crawler._slots), "host ids must be dense"
        crawler._host_id[h.name] = h.id
        crawler._slots.append(HostSlot(h.id, h.name))
        crawler._scheme.append("http")
        crawler.robots.restore(h.id, h.robots_status, h.robots_body, h.crawl_delay)
        rules = crawler.robots.rules(h.id)
        crawler._slots[h.id].crawl_delay = crawler.politeness.clamp_crawl_delay(
            rules.crawl_delay)


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
    for src, dsts in state.fetched_links:
        seq = by_seq.get(src)
        upto = max(discovered_by.get(seq, -1) if seq is not None else -1,
                   max(dsts, default=-1))
        announce(upto)
        for url_id, prio in strategy.fetched(src, list(dsts)):
            priority[url_id] = prio
    announce(len(urls))
    _testhooks.reached("recompute")  # test-only: lets a kill land mid-recomputation
    for url_id, prio in type(strategy).recompute(strategy.snapshot()):
        priority[url_id] = prio
    return priority
