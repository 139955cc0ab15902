"""The crawl engine: a dispatcher handing ready hosts to fetch tasks.

Whenever a slot may be free or a host may be ready, :meth:`Crawler._fill` takes, while
fewer than ``concurrency`` requests are in flight, the ready host whose best URL the
strategy ranks best (:class:`~webcrawl.crawler.frontier.Frontier`), and starts one task for it:
the host's robots.txt if it is unknown or expired, else its best URL.  A host is busy
until its task ends and then waits out its politeness delay; so at most one request per
host is ever in flight, over one kept-alive connection.

Scheduling is event-driven: a host that starts waiting gets a timer
(``loop.call_at``) at the end of its wait, whose callback runs :meth:`Crawler._fill`
at once, so the request starts in the event-loop turn the wait ends in (no polling, no
dispatcher round trip).  The dispatcher coroutine (:meth:`Crawler._dispatch`) only
reacts to task ends, stops, parked tasks and recomputations, and never waits for the
store: the store writes in the background, and while it is :attr:`backlogged
<webcrawl.storage.store.CrawlStore.backlogged>` no new fetch starts (back-pressure without
blocking), until its next commit.

A task that must wait inside its turn (a retry's backoff, ``Retry-After``, a
Crawl-delay after robots.txt) does not hold one of the ``concurrency`` slots while it
waits: it *parks* (:meth:`Crawler._wait`), giving its slot back, and the dispatcher
resumes it once its time has come and a slot is free, before starting new hosts.  So
hosts answering 429 with ``Retry-After: 600`` never starve the others.

Every URL ends with exactly one :class:`~webcrawl.storage.records.Outcome`.  Each fetch attempt
is a ``fetches`` row; the records of one fetch (attempt rows, new URLs, links,
outcome) are enqueued with no ``await`` in between, so a kill never splits them.
Redirects are recorded as the page's one link and followed within scope for at most
``fetch_max_redirects`` hops.  A stop (Ctrl-C, SIGTERM, :meth:`Crawler.stop`) cancels
requests in flight (their URLs stay in the frontier) and flushes the store; a resume
rebuilds the frontier from the store and replays the strategy over the stored fetch
order and links (:mod:`webcrawl.crawler.resume`).

Orderings are reproducible: a strategy's bulk recomputation (PageRank) is applied
before the next URL is taken, never whenever its thread happens to finish, so a seeded
crawl of one host fetches in the same order every run.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from webcrawl.analysis.ordering.strategies import Strategy, StrategyContext, get_strategy
from webcrawl.crawler import eventloop
from webcrawl.crawler.budget import MemoryBudget
from webcrawl.crawler.config import META_SETTINGS
from webcrawl.crawler.content_seen import ContentSeen
from webcrawl.crawler.downloader import Downloader, DownloaderLink, LocalDownloader
from webcrawl.crawler.fetcher import Fetcher
from webcrawl.crawler.frontier import Frontier, Taken
from webcrawl.crawler.links import PageLinks, page_link_ids
from webcrawl.crawler.orders import (
    Attempt,
    FetchedAnswer,
    FetchPage,
    FetchRobots,
    PageDone,
    RobotsDone,
    await_answer,
)
from webcrawl.crawler.outcomes import response_outcome
from webcrawl.crawler.politeness import PolitenessPolicy, sleep_until
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.crawler.resume import (
    META_SEEDS,
    META_STRATEGY,
    merge_seeds,
    read_meta,
    restore,
    resume_settings,
    settings_json,
)
from webcrawl.crawler.robots import RobotsCache, RobotsState
from webcrawl.crawler.scope import Scope
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.sitemaps import SitemapReader
from webcrawl.crawler.tasks import FetchTasks
from webcrawl.crawler.urls import host_key, is_local_host, normalize_url
from webcrawl.storage import _testhooks
from webcrawl.storage.errors import ConfigError, FetchError
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, ResumeState

__all__ = ["CrawlStats", "Crawler", "DownloaderFactory", "crawl"]

log = logging.getLogger(__name__)

#: ``make(settings, seeds)``: the downloader a crawl fetches through
DownloaderFactory = Callable[[CrawlSettings, Sequence[str]], Downloader]


@dataclass(slots=True)
class CrawlStats:
    """Live counters (read by :mod:`webcrawl.crawler.progress`) and the final summary."""

    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    outcomes: Counter[str] = field(default_factory=Counter)
    #: URLs kept out by each trap bound of :mod:`webcrawl.crawler.traps` (this run)
    traps: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    robots_fetches: int = 0
    retries: int = 0
    frontier: int = 0
    busy_hosts: int = 0
    queued_hosts: int = 0      # hosts holding URLs in the frontier
    hosts: int = 0
    urls: int = 0
    stopped: str = "running"   # 'done', 'max_fetches', 'memory_limit', 'stopped'
    resumed_pages: int = 0     # pages of the crawl before this run (resume)
    links_cut_pages: int = 0   # pages whose links were cut at links_max_per_page
    sitemap_fetches: int = 0   # sitemap files requested (--sitemaps)
    state_bytes: int = 0       # largest crawl state seen (crawler.budget), bytes

    @property
    def pages(self) -> int:
        """URLs that were requested and ended (any HTTP answer or error)."""
        o = self.outcomes
        return sum(o[k] for k in (Outcome.FETCHED, Outcome.NOT_HTML, Outcome.REDIRECT,
                                  Outcome.NOT_MODIFIED, Outcome.HTTP_ERROR,
                                  Outcome.NETWORK_ERROR, Outcome.TIMEOUT, Outcome.TOO_LARGE))

    @property
    def errors(self) -> int:
        o = self.outcomes
        return o[Outcome.HTTP_ERROR] + o[Outcome.NETWORK_ERROR] + o[Outcome.TIMEOUT]

    @property
    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    @property
    def rate(self) -> float:
        """Pages per second of this run (a resumed crawl's earlier pages excluded)."""
        done = self.pages - self.resumed_pages
        return done / self.elapsed if self.elapsed > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"fetches": self.pages, "seconds": round(self.elapsed, 3),
                "fetches_per_second": round(self.rate, 1), "requests": self.requests,
                "robots_fetches": self.robots_fetches, "retries": self.retries,
                "urls": self.urls, "hosts": self.hosts, "frontier": self.frontier,
                "links_cut_pages": self.links_cut_pages,
                "sitemap_fetches": self.sitemap_fetches, "state_bytes": self.state_bytes,
                "stopped": self.stopped, "outcomes": dict(sorted(self.outcomes.items())),
                "traps": dict(sorted(self.traps.items()))}


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

    Notes
    -----
    On resume the crawl continues with its stored settings and strategy
    (:func:`webcrawl.crawler.resume.resume_settings`): ``settings`` then replaces the stored
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
        self.seeds = [self._seed(s) for s in seeds]
        if not self.seeds and not resume:
            raise ConfigError("at least one seed URL is needed")
        #: the stored meta table of a resumed crawl (read once)
        self._meta: dict[str, str] = read_meta(self.db_path) if resume else {}
        _refuse_imported_graph(self.db_path, self._meta)
        layered = resume_settings(self._meta, settings, overrides, strategy)
        #: one line per stored setting replaced on resume
        self.notes: tuple[str, ...] = layered.notes
        self.settings = layered.settings
        self.strategy = strategy or get_strategy(self.settings.frontier_strategy)(
            seed=self.settings.frontier_seed)
        if self.strategy.name != self.settings.frontier_strategy:  # stored as run
            self.settings = replace(self.settings, frontier_strategy=self.strategy.name)
        if "final_scores" in self.strategy.needs:
            raise ConfigError(f"the {self.strategy.name} ordering needs the final graph's "
                              "PageRank: it runs in virtual crawls only "
                              "(webcrawl compare --virtual)")
        self.stats = CrawlStats()
        #: every URL and host of the crawl (the store is write-only during a crawl)
        # URL strings go to a side file beside the database (not /tmp: often in memory).
        parent = self.db_path.absolute().parent
        self.registry = CrawlRegistry(spill_dir=parent if parent.is_dir() else None)
        #: body digest -> first page with that body (Mercator's content-seen test)
        self.content_seen = ContentSeen()
        self._next_seq = 0
        self._taken = 0                              # URLs handed to the downloader
        self._tasks = FetchTasks()
        # Tasks waiting without a slot: (resume time, tie-break, future), see _wait.
        self._parked: list[tuple[float, int, asyncio.Future[None]]] = []
        self._n_parked = 0                           # of _tasks, parked (not in flight)
        self._park_seq = itertools.count()
        self._recompute: asyncio.Task[Any] | None = None
        self._fetches_since = 0
        self._recomputed_at = time.monotonic()
        self._contact_checked = False
        #: per-host politeness timers (see _on_wait); live while _dispatch runs
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sitemaps_read: set[int] = set()        # hosts whose sitemaps were read
        #: hosts whose turn has URLs in the downloader's hands (one window per host)
        self._windows: dict[int, _Window] = {}
        self._abort = False                          # a second stop: no grace
        s = self.settings
        self.politeness = PolitenessPolicy(s)
        self.robots = RobotsCache(s)
        self.frontier = Frontier(record_rank=s.frontier_record_rank,
                                 host_order=self.strategy.host_order, head=s.frontier_head,
                                 spill_dir=parent if parent.is_dir() else None)
        self.budget = MemoryBudget(s.memory_budget, self.registry, self.frontier)
        #: the budget's message when the crawl state outgrew ``memory_limit`` (it stops)
        self.memory_full: str | None = None
        # A strategy that ranks URLs by their text (historical) reads them here.
        self.strategy.bind(StrategyContext(url_of=self.registry.url))
        self.scope: Scope | None = None
        self.store: CrawlStore | None = None
        self.downloader: Downloader = (downloader or default_downloader)(s, self.seeds)
        self._window_size = max(1, self.downloader.window)
        self.fetcher: Fetcher | None = None          # sitemaps only (sitemaps_follow)

    @staticmethod
    def _seed(url: str) -> str:
        norm = normalize_url(url)
        if norm is None:
            # 'example.org' is a host without a scheme: name the URL that was meant
            meant = (None if "://" in url or url.startswith("/")
                     else normalize_url(f"http://{url}"))
            hint = f" (did you mean {meant!r}?)" if meant else ""
            raise ConfigError(f"bad seed URL {url!r}: need an absolute http(s) URL{hint}")
        return norm

    # -- public -------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the crawl to stop soon (safe from a signal handler).

        No new request starts; the answers of requests already under way are recorded
        for up to ``stop_grace`` seconds.  A second call stops at once.
        """
        if self._tasks.stopping:
            self._abort = True
        self._tasks.stop()

    async def run(self) -> CrawlStats:
        """Crawl until the frontier is empty, ``scope_max_pages`` or :meth:`stop`."""
        s = self.settings
        downloader = self.downloader
        # Bad TLS settings fail here, before the database exists.
        await downloader.open(DownloaderLink(
            host_allowed=self._host_allowed, sleep=self._wait, on_failed=self._attempt_failed,
            rewait=self._rewait, wake=self._tasks.wake, meta=self._meta,
            set_meta=self._set_meta))
        try:
            if s.sitemaps_follow:
                self.fetcher = await Fetcher(s).__aenter__()
            self.store = await CrawlStore.open(self.db_path, resume=self.resume,
                                               batch_size=s.store_batch_size,
                                               flush_interval=s.store_flush_interval)
            # Every host that starts waiting from now on gets its timer (_on_wait).
            self._loop = asyncio.get_running_loop()
            self.frontier.on_wait = self._on_wait
            try:
                if self.resume:
                    self._restore(await self.store.load_state())
                else:
                    self._start()
                self._over_budget(self.budget.check())
                await self._dispatch()
                if self._tasks.fatal is None and self._tasks.stopping:
                    await self._drain()
                if self._tasks.fatal is not None:
                    raise self._tasks.fatal
            finally:
                self._stop_timers()
                await self._tasks.cancel([self._recompute] if self._recompute else [])
                self.stats.ended = time.monotonic()
                self._update_stats()
                self.stats.state_bytes = max(self.budget.peak, self.budget.used())
                await self.store.aclose()
        finally:
            await downloader.aclose()
            if self.fetcher is not None:
                await self.fetcher.aclose()
        return self.stats

    def _set_meta(self, key: str, value: str) -> None:
        if self.store is not None:
            self.store.set_meta(key, value)

    def _host_allowed(self, host: str) -> bool:
        """Whether the scope admits ``host`` (robots.txt redirects stay inside it)."""
        return self.scope is not None and self.scope.host_allowed(host)

    def _rewait(self, host: str) -> float:
        """A host whose orders are sent again counts as contacted now: its wait."""
        host_id = self.registry.host_id(host)
        if host_id is None:
            return 0.0
        slot = self.registry.slot(host_id)
        now = time.monotonic()
        self.politeness.after_request(slot, now, now)
        return slot.ready_at - now

    # -- setup --------------------------------------------------------------------
    def _start(self) -> None:
        self.scope = Scope(self.settings, self.seeds)
        self._save_meta()
        for url in self.seeds:
            self._register(url, 0, -1)

    def _restore(self, state: ResumeState) -> None:
        self.seeds, new_seeds = merge_seeds(state.meta, self.seeds)
        if not self.seeds:
            raise ConfigError(f"{self.db_path} holds no crawl to resume")
        self.scope = Scope(self.settings, self.seeds)
        restored = restore(state, registry=self.registry, robots=self.robots,
                           politeness=self.politeness, frontier=self.frontier,
                           scope=self.scope, strategy=self.strategy)
        self.stats.outcomes.update(restored.outcomes)
        self.stats.resumed_pages = self.stats.pages
        self.stats.links_cut_pages = state.link_cuts  # cuts recorded before this run
        self.content_seen = ContentSeen.from_db(self.db_path)
        self._taken = restored.taken
        self._next_seq = restored.next_seq
        # The crawl that stopped may have had requests in flight whose records were
        # never committed, so the database cannot tell a host's last contact: each
        # host first waits its full politeness delay.
        now = time.monotonic()
        for slot in self.registry.slots():
            slot.ready_at = max(slot.ready_at,
                                now + self.politeness.delay(0.0, slot.crawl_delay))
        self._save_meta()  # the seeds and settings of this run, for the next resume
        for url in new_seeds:
            self._register(url, 0, -1)

    def _save_meta(self) -> None:
        assert self.store is not None
        self.store.set_meta(META_SEEDS, json.dumps(self.seeds))
        self.store.set_meta(META_STRATEGY, self.strategy.name)
        self.store.set_meta(META_SETTINGS, settings_json(self.settings))

    # -- registering URLs -----------------------------------------------------------
    def _register(self, url: str, depth: int, found_by: int, *, follow: bool = True) -> int:
        """The id of ``url``; a new URL is recorded, announced to the strategy, and
        enqueued if ``follow`` and the scope admits it (else it is ``out_of_scope``)."""
        return int(self._register_many([url], depth, found_by, [follow])[0])

    def _register_many(self, urls: Sequence[str], depth: int, found_by: int,
                       follow: Sequence[bool]) -> np.ndarray:
        """:meth:`_register` for each of ``urls`` in order (``follow`` per URL), at once:
        the ids (``int64``), new ones in order of first occurrence.

        The registry looks the batch up and adds the new URLs in one vectorised step,
        the strategy announces them together, and the frontier takes the admitted ones
        together; the budget is ticked once for the page; the scope and the rows still
        see each new URL in order.
        """
        assert self.store is not None and self.scope is not None
        batch = self.registry.add_many(urls, depth)
        if not batch.new:
            return batch.ids
        new_ids = np.arange(batch.first_id, batch.first_id + len(batch.new))
        priorities = self.strategy.discovered_many(new_ids, depth)
        admitted: list[int] = []
        store, scope, registry = self.store, self.scope, self.registry
        self._over_budget(self.budget.tick(len(batch.new)))
        for j, k in enumerate(batch.new):
            new = batch.registered(j)
            if follow[k] and scope.admit(urls[k], new.hostport, depth):
                registry.record(store, new, found_by)
                admitted.append(j)
            else:
                registry.record(store, new, found_by, Outcome.OUT_OF_SCOPE)
                self.stats.outcomes[Outcome.OUT_OF_SCOPE] += 1
        if admitted:
            take = np.array(admitted)
            self.frontier.add_many(new_ids[take], batch.host_ids[take], priorities[take])
        return batch.ids

    def _over_budget(self, message: str | None) -> None:
        """The crawl state cannot fit ``memory_limit`` even spilled: stop cleanly (the
        records under way are still written; a resume continues)."""
        if message is None or self.memory_full is not None:
            return
        self.memory_full = message
        log.info("%s: stopping", message)  # the CLI says it in its one error line
        self.stop()

    # -- the dispatcher -----------------------------------------------------------
    def _max_pages_reached(self) -> bool:
        cap = self.settings.scope_max_pages
        return cap is not None and self._taken >= cap

    async def _dispatch(self) -> None:
        concurrency = self.settings.concurrency
        frontier, store = self.frontier, self.store
        assert store is not None
        store.on_commit(self._tasks.wake)  # a backlogged store caught up
        while not self._tasks.stopping:
            self._fill()
            if not self._tasks and (not frontier or self._max_pages_reached()):
                break
            self._update_stats()
            if store.backlogged and not self._in_flight():
                await store.flush()  # nothing else would make it commit sooner
                continue
            # Hosts wake by their own timers; this loop waits for task ends, stops,
            # recomputations and the earliest parked task.
            wake_at = self._parked[0][0] if self._parked else None
            await self._tasks.wait(wake_at if self._in_flight() < concurrency else None)
        if self._tasks.stopping:
            self.stats.stopped = "memory_limit" if self.memory_full else "stopped"
            return
        # URLs left by a page limit stay in the frontier (no outcome): a resume with a
        # higher limit takes them.
        self.stats.stopped = "max_fetches" if self._max_pages_reached() else "done"

    async def _drain(self) -> None:
        """A stop: let the requests under way answer (and be recorded) for up to
        ``stop_grace`` seconds.  Nothing new is taken (``_fill`` and window refills
        check the stop); tasks parked in a wait (a retry's backoff) are not under way
        and are cancelled with the rest."""
        deadline = time.monotonic() + self.settings.stop_grace
        while self._in_flight() > 0 and not self._abort and self._tasks.fatal is None:
            if time.monotonic() >= deadline:
                log.info("stop: %d requests still under way after %.0f s: dropped",
                         self._in_flight(), self.settings.stop_grace)
                return
            await self._tasks.wait(deadline)

    def _fill(self) -> None:
        """Resume parked tasks, then start ready hosts, while slots are free.

        Synchronous: host timers, the dispatcher and task ends call it.  A pending
        recomputation holds new takes back: its result then always lands at the fetch
        count it was due at, as in a virtual crawl (deterministic).
        """
        if self._tasks.stopping or self._loop is None:
            return
        store = self.store
        assert store is not None
        concurrency = self.settings.concurrency
        now = time.monotonic()
        self._resume_parked(now, concurrency)
        frontier = self.frontier
        while (self._in_flight() < concurrency and self._recompute is None
               and not self._max_pages_reached() and not store.backlogged):
            host_id = frontier.pop_ready(now)
            if host_id is None:
                break
            self._start_host(host_id, now)

    def _on_wait(self, host_id: int, ready_at: float) -> None:
        """A host waits until monotonic ``ready_at``: (re)arm its timer."""
        loop = self._loop
        if loop is None:
            return
        old = self._timers.pop(host_id, None)
        if old is not None:
            old.cancel()
        self._timers[host_id] = loop.call_at(ready_at, self._host_ready, host_id, ready_at)

    def _host_ready(self, host_id: int, ready_at: float) -> None:
        """Timer callback: the host's wait is over; start it (and whatever else is ready)."""
        self._timers.pop(host_id, None)
        if time.monotonic() < ready_at:
            # asyncio may run a timer up to its clock resolution early: never early here.
            self._on_wait(host_id, ready_at)
            return
        try:
            self._fill()
        except Exception as error:  # re-raised by run()
            # A timer callback has no caller: an error here (the store's write error
            # above all) would only be logged by asyncio, with a traceback on stderr.
            self._tasks.fail(error)
            return
        if not self._tasks:
            self._tasks.wake()  # nothing runs: the dispatcher checks whether it is done

    def _stop_timers(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._loop = None
        self.frontier.on_wait = None

    def _in_flight(self) -> int:
        """Tasks holding a slot (started and not parked)."""
        return len(self._tasks) - self._n_parked

    def _resume_parked(self, now: float, concurrency: int) -> None:
        """Give free slots to parked tasks whose wait is over (oldest deadline first)."""
        parked = self._parked
        while parked and parked[0][0] <= now and self._in_flight() < concurrency:
            fut = heapq.heappop(parked)[2]
            if fut.done():  # its task was cancelled while parked (already uncounted)
                continue
            self._n_parked -= 1
            fut.set_result(None)

    async def _wait(self, seconds: float) -> None:
        """Sleep ``seconds`` without holding a slot; the dispatcher resumes the task."""
        if seconds <= 0:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._parked, (time.monotonic() + seconds, next(self._park_seq), fut))
        self._n_parked += 1
        self._tasks.wake()  # a slot is free now
        try:
            await fut
        except asyncio.CancelledError:
            if fut.cancelled():  # cancelled while parked: the dispatcher never counted it
                self._n_parked -= 1
            raise

    def _check_contact(self, host_id: int) -> None:
        """Warn once per crawl when a non-loopback host is crawled without a contact."""
        name = self.registry.slot(host_id).name
        if self.settings.fetch_contact is not None:
            self._contact_checked = True
        elif not is_local_host(name):
            self._contact_checked = True
            log.warning("webcrawl: warning: crawling %s without a contact: give --contact "
                        "URL-or-email so its operators can reach you", name)

    def _start_host(self, host_id: int, now: float) -> None:
        """Use a ready host's turn: robots.txt, or its best URL."""
        if not self._contact_checked:
            self._check_contact(host_id)
        if self.robots.needs_fetch(host_id, now):
            self._tasks.spawn(self._fetch_robots(host_id))
            return
        if self.settings.sitemaps_follow and host_id not in self._sitemaps_read:
            self._sitemaps_read.add(host_id)
            if self.robots.rules(host_id).state in (RobotsState.PARSED, RobotsState.ALLOW_ALL):
                self._tasks.spawn(self._fetch_sitemaps(host_id))
                return
        self._start_pages(host_id)

    # -- a host's window of URLs ------------------------------------------------------
    def _start_pages(self, host_id: int) -> None:
        """A host's turn: hand the downloader a window of its best URLs.

        The window holds up to ``downloader.window`` URLs (1 in process; a sharded
        crawl's ``shard_window``), refilled one for one as answers come back while no
        other host waits for a slot: the downloader fetches them one at a time on the
        host's politeness clock.  The turn ends, and the host is released, when the
        window is empty.
        """
        loop = self._loop
        assert loop is not None
        window = _Window(host_id, loop.create_future())
        self._refill(window)
        if not window.out:
            self.frontier.release(host_id, self.registry.slot(host_id).ready_at)
            return
        self._windows[host_id] = window
        self._tasks.spawn(self._run_window(window))

    def _may_take(self, host_id: int, first: bool) -> bool:
        """Whether a host's window may take one more URL now: the dispatcher's rules for
        a take, a robots.txt still fresh, and (beyond the first) no other host waiting
        for a slot."""
        store = self.store
        assert store is not None
        if first:
            return True  # _fill checked the rules before it started the host
        if (self._tasks.stopping or self._recompute is not None
                or self._max_pages_reached() or store.backlogged
                or self.robots.needs_fetch(host_id, time.monotonic())):
            return False
        return self._in_flight() < self.settings.concurrency or not self.frontier.has_ready()

    def _refill(self, window: _Window) -> None:
        """Top the window up to the downloader's window size while the host may take."""
        host_id = window.host_id
        size = self._window_size
        registry, downloader = self.registry, self.downloader
        slot = registry.slot(host_id)
        while len(window.out) < size and self._may_take(host_id, not window.out
                                                        and not window.answered):
            got = self._take_allowed(host_id)
            if got is None:
                return
            order = got[0].url_id
            window.out[order] = got
            downloader.submit(FetchPage(order, registry.url(order), slot.name,
                                        slot.ready_at - time.monotonic(), slot.crawl_delay),
                              partial(self._page_done, window, order))

    def _page_done(self, window: _Window, order: int,
                   done: FetchedAnswer | BaseException) -> None:
        """The downloader's answer for a URL of ``window``."""
        if window.closed:
            return
        try:
            if isinstance(done, BaseException):
                raise done
            taken, seq = window.out.pop(order)
            window.answered += 1
            assert isinstance(done, PageDone)
            slot = self.registry.slot(window.host_id)
            slot.ready_at = max(slot.ready_at, time.monotonic() + done.ready_in)
            self._apply(taken, seq, done, window.recorded.pop(order, 0))
            if self._window_size > 1:  # a window of one ends with its answer
                self._refill(window)
        except BaseException as error:  # raised by the window's task
            window.closed = True
            if not window.ended.done():
                window.ended.set_exception(error)
            return
        if not window.out and not window.ended.done():
            window.ended.set_result(None)

    async def _run_window(self, window: _Window) -> None:
        """Hold the host's slot until its window is answered; then release the host."""
        slot = self.registry.slot(window.host_id)
        try:
            await window.ended
        finally:
            window.closed = True
            del self._windows[window.host_id]
            for order in window.out:  # cancelled: their answers are ignored
                self.downloader.forget(slot.name, order)
            # A windowed downloader (shards) gets the host's next order up to
            # DISPATCH_LEAD early and waits out the rest: the order's trip overlaps
            # the politeness wait.
            lead = DISPATCH_LEAD if self._window_size > 1 else 0.0
            self.frontier.release(window.host_id, slot.ready_at - lead)

    def _take_allowed(self, host_id: int) -> tuple[Taken, int] | None:
        """The busy host's best URL with its seq, if robots.txt allows it (None: the host
        has none left, or its best was excluded).

        An excluded URL costs no request: it is recorded, and the take ends there, so
        the next take is again the best URL among the ready hosts (the host is still
        ready: no request was made).  Taking the same host's next URL instead would
        depend on the turn being under way, which a crawl killed right after the
        exclusion and resumed cannot know: its order would differ."""
        taken = self.frontier.take(host_id)
        if taken is None:
            return None
        seq = self._next_seq
        self._next_seq += 1
        if self.robots.allowed(host_id, self.registry.url(taken.url_id)):
            self._taken += 1
            return taken, seq
        assert self.store is not None
        self.store.set_outcome(taken.url_id, Outcome.ROBOTS_EXCLUDED, seq)
        self.stats.outcomes[Outcome.ROBOTS_EXCLUDED] += 1
        return None

    def _update_stats(self) -> None:
        self.stats.frontier = len(self.frontier)
        self.stats.busy_hosts = self.frontier.busy
        self.stats.queued_hosts = self.frontier.queued_hosts
        self.stats.hosts = self.registry.host_count
        self.stats.urls = len(self.registry)
        if self.scope is not None:
            self.stats.traps = self.scope.traps.fired

    # -- robots.txt ---------------------------------------------------------------
    async def _fetch_robots(self, host_id: int) -> None:
        slot = self.registry.slot(host_id)
        done = await await_answer(self.downloader.submit, FetchRobots(
            -1 - host_id, self.registry.robots_url(host_id), slot.name,
            slot.ready_at - time.monotonic()))
        assert isinstance(done, RobotsDone)
        self.stats.requests += done.requests
        ended = time.monotonic()
        self._robots_learned(host_id, done.status, done.body, ended - done.elapsed, ended)

    def _robots_learned(self, host_id: int, status: int | None, body: str | None,
                        started: float, ended: float) -> None:
        """Apply a fetched robots.txt (``status`` None: unreachable) and free the host."""
        assert self.store is not None
        slot = self.registry.slot(host_id)
        if status is not None and 300 <= status < 400:
            status = None
        if status == 429:
            status = 503  # a rate limit on robots.txt: unavailable, retry later
        rules = self.robots.learn(host_id, status, body, ended)
        self.stats.robots_fetches += 1
        slot.crawl_delay = self.politeness.clamp_crawl_delay(rules.crawl_delay)
        ready_at = self.politeness.after_request(slot, started, ended)
        if rules.state is RobotsState.UNAVAILABLE:
            ready_at = slot.ready_at = max(ready_at, rules.retry_at)
        self.store.update_host(host_id, robots_status=status, robots_body=body,
                               robots_fetched_at=time.time(), crawl_delay=rules.crawl_delay)
        self.frontier.release(host_id, ready_at)

    # -- sitemaps -----------------------------------------------------------------
    async def _fetch_sitemaps(self, host_id: int) -> None:
        """Use a host's turn to read its sitemaps (one polite request at a time)."""
        assert self.fetcher is not None and self.store is not None
        s, slot, fetcher = self.settings, self.registry.slot(host_id), self.fetcher
        origin = self.registry.origin(host_id)
        rules = self.robots.rules(host_id)

        async def fetch(url: str) -> tuple[int, bytes] | None:
            await sleep_until(slot.ready_at)
            started = time.monotonic()
            self.stats.requests += 1
            self.stats.sitemap_fetches += 1
            try:
                result = await fetcher.fetch(url, max_body=s.sitemaps_max_bytes)
            except FetchError as exc:
                log.info("sitemap %s unreachable: %s", url, exc)
                self.politeness.after_request(slot, started, time.monotonic())
                return None
            self.politeness.after_request(slot, started, result.ended_mono, result.retry_after)
            return result.status, result.body

        reader = SitemapReader(
            fetch, lambda u: self.robots.allowed(host_id, u),
            lambda u: host_key(u) == slot.name and u.startswith(origin),
            max_files=s.sitemaps_max_files, max_urls=s.sitemaps_max_urls,
            max_bytes=s.sitemaps_max_bytes)
        listed = [u for u in (normalize_url(x) for x in rules.sitemaps) if u is not None]
        try:
            for url, via in await reader.read(listed or [f"{origin}/sitemap.xml"]):
                if url not in self.registry:
                    url_id = self._register(url, 0, SITEMAP_SEQ)
                    self.store.add_url_source(url_id, "sitemap", via)
        finally:
            self.frontier.release(host_id, slot.ready_at)

    # -- pages --------------------------------------------------------------------
    def _attempt_failed(self, order: int, attempt: Attempt) -> None:
        """A failed attempt, reported as it happens (in process): its row goes in now,
        so rows keep the order in which requests were made."""
        window = self._windows.get(self.registry.host_of(order))
        got = None if window is None else window.out.get(order)
        if window is None or got is None or window.closed:
            return
        recorded = window.recorded[order] = window.recorded.get(order, 0) + 1
        assert attempt.outcome is not None
        self._record(got[0], got[1], recorded, attempt, attempt.outcome)

    def _apply(self, taken: Taken, seq: int, done: PageDone, recorded: int = 0) -> None:
        """Record the downloader's answer for a URL: every attempt, the new URLs, the
        links and the outcome, all enqueued with no ``await`` in between (a kill never
        splits them)."""
        requests = done.requests
        self.stats.requests += requests
        self.stats.retries += max(0, requests - 1)
        self.registry.slot(taken.host_id).requests += requests
        for n, a in enumerate(done.failed[recorded:], recorded + 1):
            assert a.outcome is not None
            self._record(taken, seq, n, a, a.outcome)
        if done.result is None:
            outcome = done.failed[-1].outcome
            assert outcome is not None
            self._finish(taken, seq, outcome)
        else:
            self._finish_result(taken, seq, len(done.failed) + 1, done.result, done.links)
        _testhooks.kill_at("shard_page")

    def _record(self, taken: Taken, seq: int, attempt: int, a: Attempt,
                outcome: Outcome) -> None:
        assert self.store is not None
        record = FetchRecord(
            url_id=taken.url_id, seq=seq, started_at=a.started_at, ended_at=a.ended_at,
            outcome=outcome, error=a.error, attempt=attempt, strategy=self.strategy.name,
            priority=taken.priority, rank=taken.rank)
        if a.status is not None:
            record.status = a.status
            record.content_type = a.content_type or None
            record.size = a.size
            record.digest = a.digest if a.size else None
            record.etag = a.etag
            record.last_modified = a.last_modified
        self.store.add_fetch(record)

    def _finish(self, taken: Taken, seq: int, outcome: Outcome) -> None:
        assert self.store is not None
        self.store.set_outcome(taken.url_id, outcome, seq)
        self.stats.outcomes[outcome] += 1

    def _finish_result(self, taken: Taken, seq: int, attempt: int, result: Attempt,
                       page: PageLinks | None) -> None:
        """Classify a response and enqueue all its records (no await in here)."""
        outcome = response_outcome(result.status, location=result.location,
                                   too_large=result.too_large, is_html=result.is_html)
        links: list[int] = []
        nofollow: list[int] = []
        read_links = True
        if outcome is Outcome.REDIRECT:
            assert result.location is not None
            links = self._follow_redirect(taken.url_id, seq, result.location)
        elif outcome is Outcome.FETCHED:
            # A copy of an earlier page's body is not read again (content-seen test).
            read_links = (not self._duplicate(taken.url_id, result.digest if result.size
                                              else None)
                          or self.settings.links_from_duplicates)
            if page is not None and read_links:
                links, nofollow = self._page_links(taken.url_id, seq, page)
        self._record(taken, seq, attempt, result, outcome)
        if outcome is Outcome.FETCHED or outcome is Outcome.REDIRECT:
            assert self.store is not None
            if read_links:
                self.store.add_links(taken.url_id, links, nofollow)
            self._learn(taken.url_id, links)
        self._finish(taken, seq, outcome)

    def _duplicate(self, url_id: int, digest: str | None) -> bool:
        """Whether the page's body repeats an earlier page's (recorded either way)."""
        assert self.store is not None
        for page_id, original in self.content_seen.see(url_id, digest):
            self.store.set_duplicate(page_id, original)
        return self.content_seen.original(url_id) is not None

    def _follow_redirect(self, url_id: int, seq: int, location: str) -> list[int]:
        registry = self.registry
        target = normalize_url(location, registry.url(url_id))
        if target is None:
            return []
        hops = registry.hops(url_id) + 1
        known = target in registry
        # A target beyond the hop limit is recorded out of scope (unless already known).
        target_id = self._register(target, registry.depth(url_id), seq,
                                   follow=hops <= self.settings.fetch_max_redirects)
        if not known:
            registry.set_hops(target_id, hops)
        return [target_id]

    def _page_links(self, url_id: int, seq: int, page: PageLinks) -> tuple[list[int], list[int]]:
        s = self.settings
        if page.cut:
            # Never a silent cap: the page is recorded as cut and counted.
            assert self.store is not None
            self.store.add_link_cut(url_id, len(page.urls), page.cut)
            self.stats.links_cut_pages += 1
            log.info("%s: %d links kept, %d more dropped (links_max_per_page)",
                     self.registry.url(url_id), len(page.urls), page.cut)
        depth = self.registry.depth(url_id) + 1
        return page_link_ids(
            page, lambda urls, follow: self._register_many(urls, depth, seq, follow).tolist(),
            obey_meta_nofollow=s.links_obey_meta_nofollow,
            follow_nofollow=s.links_follow_nofollow)

    # -- strategy feedback --------------------------------------------------------
    def _learn(self, url_id: int, out_links: Sequence[int]) -> None:
        frontier = self.frontier
        for target, priority in self.strategy.fetched(url_id, out_links):
            frontier.update(target, priority)
        self._fetches_since += 1
        if self._recompute is None and self.strategy.wants_recompute(
                self._fetches_since, time.monotonic() - self._recomputed_at):
            snapshot = self.strategy.snapshot()
            self._fetches_since = 0
            self._recomputed_at = time.monotonic()
            self._recompute = asyncio.get_running_loop().create_task(
                self._run_recompute(snapshot))
            self._recompute.add_done_callback(self._recomputed)

    async def _run_recompute(self, snapshot: Any) -> None:
        """Recompute in a worker thread, then apply the updates.

        The dispatcher takes no new URL meanwhile (fetches in flight go on), so the
        result is applied at the fetch count the recomputation was due at, whatever
        the thread's speed: a seeded crawl's order is the same every run, and the same
        as a virtual crawl's (:func:`webcrawl.analysis.ordering.virtual.virtual_crawl`).  The
        pause is the recomputation's time: PageRank recomputes at geometric growth
        steps on large crawls, so it stays a small share of the crawl.

        A recomputation usually re-scores the whole frontier: :meth:`Frontier.update_many`
        then rebuilds the frontier's structures in one go, several times cheaper than
        per-URL updates (it holds the event loop for about 1 s per million frontier
        URLs).  A smaller batch is applied incrementally in chunks of
        :data:`UPDATE_CHUNK`, yielding to the event loop in between (requests in flight
        keep being served).
        """
        updates = await asyncio.to_thread(_materialise, type(self.strategy).recompute,
                                          snapshot)
        frontier = self.frontier
        if frontier.rebuilds(len(updates)):
            frontier.update_many(updates)
        else:
            for start in range(0, len(updates), UPDATE_CHUNK):
                if start:
                    await asyncio.sleep(0)
                frontier.update_many(updates[start:start + UPDATE_CHUNK])

    def _recomputed(self, task: asyncio.Task[None]) -> None:
        self._recompute = None
        self._tasks.wake()  # the dispatcher waits for this
        if not task.cancelled() and task.exception() is not None:
            log.error("strategy recompute failed", exc_info=task.exception())


#: ``urls.discovered_seq`` of a URL first listed in a sitemap (seeds have -1).
SITEMAP_SEQ = -2

#: Incremental priority updates applied between two yields to the event loop (see
#: _run_recompute).
UPDATE_CHUNK = 5000


def _materialise(fn: Any, snapshot: Any) -> list[tuple[int, float]]:
    """Run a recomputation and materialise its updates (still in the worker thread)."""
    _testhooks.reached("recompute")  # test-only: lets a kill land mid-recomputation
    return [(int(u), float(p)) for u, p in fn(snapshot)]


def _refuse_imported_graph(db: Path, meta: Mapping[str, str]) -> None:
    """An edge list imported with integer ids or plain names holds no URL to crawl."""
    if meta.get("source") == "edges" and meta.get("names") in ("ids", "names"):
        kind = "integer ids" if meta["names"] == "ids" else "names"
        raise ConfigError(f"{db} holds a graph imported from an edge list whose nodes are "
                          f"{kind}, not URLs: there is no crawl to resume (simulate runs "
                          "virtual crawls over it)")


@dataclass(slots=True, eq=False)
class _Window:
    """A host's turn: the URLs handed to the downloader and not answered yet."""

    host_id: int
    #: resolved when the window is empty and not refilled (or with the error to raise)
    ended: asyncio.Future[None]
    #: order (URL id) -> (taken, seq) of the URLs in the downloader's hands
    out: dict[int, tuple[Taken, int]] = field(default_factory=dict)
    #: order -> failed attempts already recorded as they happened
    recorded: dict[int, int] = field(default_factory=dict)
    answered: int = 0
    closed: bool = False


#: Seconds before a host's politeness wait ends at which a windowed downloader gets its
#: next order (it waits the rest on its own clock): it hides the order's trip to a
#: worker process.  Small, because a waiting order holds one of the ``concurrency`` slots.
DISPATCH_LEAD = 0.05


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
