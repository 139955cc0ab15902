"""The crawl engine: a :class:`Crawler` decides what to fetch; its downloader fetches.

A crawl is a few parts around one downloader (:mod:`webcrawl.crawler.downloader`), each
a module of this package with its contract in its docstring:

* :mod:`~webcrawl.crawler.engine.dispatch`: which host's turn starts next, and when;
* :mod:`~webcrawl.crawler.engine.robots_turn`, :mod:`~webcrawl.crawler.engine.sitemap_turn`
  and :mod:`~webcrawl.crawler.engine.windows`: a host's robots.txt, sitemap and page turns;
* :mod:`~webcrawl.crawler.engine.recording`: what an answer writes;
* :mod:`~webcrawl.crawler.engine.discovery`: new URLs, through registry, scope and frontier;
* :mod:`~webcrawl.crawler.engine.feedback`: what a fetched page tells the ordering;
* :mod:`~webcrawl.crawler.engine.dead_hosts`: hosts that cannot be reached, named.

The engine holds the crawl's state -- URL registry, frontier, strategy, robots.txt
rules, scope, store -- and no clock: every request goes through the downloader, which
keeps each host's politeness clock and is asked when a host may be contacted again.

Every URL ends with exactly one :class:`~webcrawl.storage.records.Outcome`.  A stop
(Ctrl-C, SIGTERM, :meth:`Crawler.stop`) lets the requests under way answer for up to
``stop_grace`` seconds, cancels the rest (their URLs stay in the frontier) and flushes
the store; a resume rebuilds the frontier from the store and replays the strategy over
the stored fetch order and links (:mod:`webcrawl.crawler.resume`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from webcrawl.analysis.ordering.strategies import Strategy, StrategyContext, get_strategy
from webcrawl.crawler import eventloop
from webcrawl.crawler.budget import MemoryBudget
from webcrawl.crawler.config import META_SEEDS, META_SETTINGS, META_STRATEGY, resume_settings
from webcrawl.crawler.content_seen import ContentSeen
from webcrawl.crawler.downloader import Downloader, DownloaderLink, LocalDownloader
from webcrawl.crawler.engine.dead_hosts import DeadHosts
from webcrawl.crawler.engine.discovery import Discovery
from webcrawl.crawler.engine.dispatch import Dispatcher
from webcrawl.crawler.engine.feedback import StrategyFeedback
from webcrawl.crawler.engine.recording import PageRecorder
from webcrawl.crawler.engine.robots_turn import RobotsTurn
from webcrawl.crawler.engine.sitemap_turn import SitemapTurn
from webcrawl.crawler.engine.stats import CrawlStats
from webcrawl.crawler.engine.windows import HostWindows
from webcrawl.crawler.frontier import Frontier
from webcrawl.crawler.near_batch import NearBatch
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.crawler.resume import (
    merge_seeds,
    read_meta,
    refuse_imported_graph,
    restore,
    settings_json,
)
from webcrawl.crawler.robots import RobotsCache, RobotsState
from webcrawl.crawler.scope import Scope
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.tasks import FetchTasks
from webcrawl.crawler.urls import is_local_host, normalize_url
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.store import CrawlStore, ResumeState

__all__ = ["Crawler", "DownloaderFactory", "crawl", "default_downloader"]

log = logging.getLogger(__name__)

#: ``make(settings, seeds)``: the downloader a crawl fetches through
DownloaderFactory = Callable[[CrawlSettings, Sequence[str]], Downloader]


class Crawler:
    """A polite crawl writing one crawl database.

    Parameters
    ----------
    db : str or Path
        The crawl database (created; with ``resume=True`` it must hold a crawl).
    seeds : iterable of str
        Start URLs (optional on resume: the stored seeds are used).
    settings : CrawlSettings, optional
    resume : bool
        Continue the crawl stored in ``db``.
    strategy : Strategy, optional
        An instance overriding ``settings.frontier_strategy``.
    overrides : mapping of CrawlSettings field to value, optional
        Settings given one by one (the command line's options); they win over
        ``settings`` and, on resume, over the stored settings.
    downloader : callable, optional
        ``make(settings, seeds)``: the downloader to fetch through (default: worker
        processes for ``workers`` > 1, else this process; tests give a fake one).

    Notes
    -----
    On resume the crawl continues with its stored settings and strategy
    (:func:`webcrawl.crawler.config.resume_settings`): ``settings`` then replaces the stored
    values where it differs from them, ``overrides`` replace single values, each
    replacement is listed in :attr:`notes`, and a strategy other than the stored one
    is refused with a :class:`~webcrawl.storage.errors.ConfigError`.
    """

    def __init__(self, db: str | Path, seeds: Iterable[str] = (),
                 settings: CrawlSettings | None = None, *, resume: bool = False,
                 strategy: Strategy | None = None,
                 overrides: Mapping[str, Any] | None = None,
                 downloader: DownloaderFactory | None = None) -> None:
        self.db_path = Path(db)
        self.resume = resume
        self.seeds = [_seed(s) for s in seeds]
        if not self.seeds and not resume:
            raise ConfigError("at least one seed URL is needed")
        #: the stored meta table of a resumed crawl (read once)
        self._meta: dict[str, str] = read_meta(self.db_path) if resume else {}
        refuse_imported_graph(self.db_path, self._meta)
        layered = resume_settings(self._meta, settings, overrides, strategy)
        #: one line per stored setting replaced on resume
        self.notes: tuple[str, ...] = layered.notes
        self.settings = s = layered.settings
        self.strategy = strategy or get_strategy(s.frontier_strategy)(seed=s.frontier_seed)
        if self.strategy.name != s.frontier_strategy:  # stored as run
            self.settings = s = replace(s, frontier_strategy=self.strategy.name)
        if "final_scores" in self.strategy.needs:
            raise ConfigError(f"the {self.strategy.name} ordering needs the final graph's "
                              "PageRank: it runs in virtual crawls only "
                              "(webcrawl compare --virtual)")
        self.stats = CrawlStats()
        # URL strings go to a side file beside the database (not /tmp: often in memory).
        parent = self.db_path.absolute().parent
        spill = parent if parent.is_dir() else None
        #: every URL and host of the crawl (the store is write-only during a crawl)
        self.registry = CrawlRegistry(spill_dir=spill)
        #: body digest -> first page with that body (Mercator's content-seen test)
        self.content_seen = ContentSeen()
        #: the pages waiting for their sketch and test (with ``near_duplicates``)
        self.near_batch: NearBatch | None = None
        self.tasks = FetchTasks()
        self.robots = RobotsCache(s)
        self.frontier = Frontier(record_rank=s.frontier_record_rank,
                                 host_order=self.strategy.host_order, head=s.frontier_head,
                                 spill_dir=spill)
        self.budget = MemoryBudget(s.memory_budget, self.registry, self.frontier)
        #: the budget's message when the crawl state outgrew ``memory_limit`` (it stops)
        self.memory_full: str | None = None
        # A strategy that ranks URLs by their text (historical) reads them here.
        self.strategy.bind(StrategyContext(url_of=self.registry.url))
        self.scope: Scope | None = None
        self.store: CrawlStore | None = None
        self.downloader: Downloader = (downloader or default_downloader)(s, self.seeds)
        self._contact_checked = False
        # The parts (see the module docstring); each reads the state above.
        self.dispatch = Dispatcher(self)
        self.windows = HostWindows(self)
        self.robots_turn = RobotsTurn(self)
        self.sitemap_turn = SitemapTurn(self)
        self.recorder = PageRecorder(self)
        self.discovery = Discovery(self)
        self.feedback = StrategyFeedback(self)
        self.dead_hosts = DeadHosts(self)

    # -- public -------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the crawl to stop soon (safe from a signal handler).

        No new request starts; the answers of requests already under way are recorded
        for up to ``stop_grace`` seconds.  A second call stops at once.
        """
        self.tasks.stop()  # a second call is an abort (FetchTasks.aborted)

    async def run(self) -> CrawlStats:
        """Crawl until the frontier is empty, ``scope_max_pages`` or :meth:`stop`."""
        s = self.settings
        downloader = self.downloader
        # Bad TLS settings fail here, before the database exists.
        await downloader.open(DownloaderLink(
            host_allowed=self._host_allowed, sleep=self.dispatch.park,
            on_failed=self.windows.attempt_failed, wake=self.tasks.wake, meta=self._meta,
            set_meta=self.set_meta, resumed=self.resume))
        try:
            self.store = await CrawlStore.open(self.db_path, resume=self.resume,
                                               batch_size=s.store_batch_size,
                                               flush_interval=s.store_flush_interval,
                                               busy_wait=s.store_busy_wait)
            self.dispatch.open(asyncio.get_running_loop())
            try:
                if self.resume:
                    self._restore(await self.store.load_state())
                else:
                    self._start()
                if s.near_duplicates:  # from the stored groups when resumed
                    self.near_batch = NearBatch.open(self.store, s,
                                                     self.db_path if self.resume else None,
                                                     workers=s.workers)
                self.dead_hosts.open()
                self.over_budget(self.budget.check())
                await self.dispatch.run()
                if self.tasks.fatal is None and self.tasks.stopping:
                    await self.dispatch.drain()
                if self.tasks.fatal is not None:
                    raise self.tasks.fatal
            finally:
                self.dispatch.close()
                recompute = self.feedback.task
                await self.tasks.cancel([recompute] if recompute is not None else [])
                self.stats.ended = time.monotonic()
                self.update_stats()
                self.stats.state_bytes = max(self.budget.peak, self.budget.used())
                try:
                    await self.store.aclose()
                finally:
                    if self.near_batch is not None:
                        self.near_batch.close()
        finally:
            await downloader.aclose()
            self.stats.warc = downloader.warc_counts()
        return self.stats

    def set_meta(self, key: str, value: str) -> None:
        """Store one meta key with the crawl (once its database is open)."""
        if self.store is not None:
            self.store.set_meta(key, value)

    def stored_meta(self, key: str) -> str:
        """A meta key as a resumed crawl found it stored ("" if none)."""
        return self._meta.get(key, "")

    def _host_allowed(self, host: str) -> bool:
        """Whether the scope admits ``host`` (robots.txt redirects stay inside it)."""
        return self.scope is not None and self.scope.host_allowed(host)

    # -- setup --------------------------------------------------------------------
    def _start(self) -> None:
        self.scope = Scope(self.settings, self.seeds)
        self._save_meta()
        for url in self.seeds:
            self.discovery.register(url, 0, -1)

    def _restore(self, state: ResumeState) -> None:
        self.seeds, new_seeds = merge_seeds(state.meta, self.seeds)
        if not self.seeds:
            raise ConfigError(f"{self.db_path} holds no crawl to resume")
        self.scope = Scope(self.settings, self.seeds)
        restored = restore(state, registry=self.registry, robots=self.robots,
                           frontier=self.frontier, scope=self.scope, strategy=self.strategy)
        self.stats.outcomes.update(restored.outcomes)
        self.stats.resumed_pages = self.stats.pages
        self.stats.links_cut_pages = state.link_cuts  # cuts recorded before this run
        self.content_seen = ContentSeen.from_db(self.db_path)
        self.windows.taken, self.windows.next_seq = restored.taken, restored.next_seq
        # The crawl that stopped may have had requests in flight whose records were
        # never committed, so the database cannot tell a host's last contact: each
        # host first waits its full politeness delay (its Crawl-delay included).
        downloader, registry = self.downloader, self.registry
        downloader.contacts_unknown()
        for host_id in range(registry.host_count):
            delay = self.robots.rules(host_id).crawl_delay
            if delay:
                downloader.set_crawl_delay(registry.host_name(host_id), delay)
        self._save_meta()  # the seeds and settings of this run, for the next resume
        for url in new_seeds:
            self.discovery.register(url, 0, -1)

    def _save_meta(self) -> None:
        assert self.store is not None
        self.store.set_meta(META_SEEDS, json.dumps(self.seeds))
        self.store.set_meta(META_STRATEGY, self.strategy.name)
        self.store.set_meta(META_SETTINGS, settings_json(self.settings))

    def over_budget(self, message: str | None) -> None:
        """The crawl state cannot fit ``memory_limit`` even spilled: stop cleanly (the
        records under way are still written; a resume continues)."""
        if message is None or self.memory_full is not None:
            return
        self.memory_full = message
        log.info("%s: stopping", message)  # the CLI says it in its one error line
        self.stop()

    # -- a host's turn --------------------------------------------------------------
    def start_host(self, host_id: int, now: float) -> None:
        """Use a ready host's turn: robots.txt, its sitemaps, or its best URLs."""
        if not self._contact_checked:
            self._check_contact(host_id)
        if self.robots.needs_fetch(host_id, now):
            self.robots_turn.start(host_id)
            return
        # Sitemaps are asked for once per host, and read if robots.txt allows anything.
        if (self.settings.sitemaps_follow and self.sitemap_turn.due(host_id)
                and self.robots.rules(host_id).state in (RobotsState.PARSED,
                                                         RobotsState.ALLOW_ALL)):
            self.sitemap_turn.start(host_id)
            return
        self.windows.start(host_id)

    def _check_contact(self, host_id: int) -> None:
        """Warn once per crawl when a non-loopback host is crawled without a contact."""
        name = self.registry.host_name(host_id)
        if self.settings.fetch_contact is not None:
            self._contact_checked = True
        elif not is_local_host(name):
            self._contact_checked = True
            log.warning("webcrawl: warning: crawling %s without a contact: give --contact "
                        "URL-or-email so its operators can reach you", name)

    def update_stats(self) -> None:
        stats, frontier = self.stats, self.frontier
        stats.frontier = len(frontier)
        stats.busy_hosts = frontier.busy
        stats.queued_hosts = frontier.queued_hosts
        stats.hosts = self.registry.host_count
        stats.urls = len(self.registry)
        if self.scope is not None:
            stats.traps = self.scope.traps.fired


def _seed(url: str) -> str:
    norm = normalize_url(url)
    if norm is None:
        # 'example.org' is a host without a scheme: name the URL that was meant
        meant = (None if "://" in url or url.startswith("/")
                 else normalize_url(f"http://{url}"))
        hint = f" (did you mean {meant!r}?)" if meant else ""
        raise ConfigError(f"bad seed URL {url!r}: need an absolute http(s) URL{hint}")
    return norm


def default_downloader(settings: CrawlSettings, seeds: Sequence[str]) -> Downloader:
    """The downloader the settings ask for: ``workers`` > 1 worker processes
    (:class:`~webcrawl.crawler.shard.coordinator.ShardDownloader`), else this process."""
    if settings.workers > 1:
        from webcrawl.crawler.shard.coordinator import ShardDownloader

        return ShardDownloader(settings, seeds)
    return LocalDownloader(settings)


def crawl(seeds: Iterable[str], db: str | Path, settings: CrawlSettings | None = None,
          *, resume: bool = False, overrides: Mapping[str, Any] | None = None) -> CrawlStats:
    """Run a crawl to completion on the crawl's event loop; return its statistics.

    The blocking counterpart of ``await Crawler(db, seeds, settings, ...).run()``, on the
    loop every entry point uses (:func:`webcrawl.crawler.eventloop.run`: uvloop when
    installed).  ``settings.workers`` > 1 fetches in that many worker processes, as
    ``webcrawl crawl --workers N`` does.
    """
    crawler = Crawler(db, seeds, settings, resume=resume, overrides=overrides)
    return eventloop.run(crawler.run())
