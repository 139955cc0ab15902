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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from webcrawl.analysis.ordering.strategies import Strategy, get_strategy
from webcrawl.crawler.config import META_SETTINGS, build_settings, settings_values
from webcrawl.crawler.fetcher import Fetcher, FetchResult
from webcrawl.crawler.frontier import Frontier, Taken
from webcrawl.crawler.links import PageLinks, extract_links
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
from webcrawl.crawler.retry import RetryPolicy, is_retryable_status
from webcrawl.crawler.robots import RobotsCache, RobotsState, fetch_robots_file
from webcrawl.crawler.scope import Scope
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.sitemaps import SitemapReader
from webcrawl.crawler.tasks import FetchTasks
from webcrawl.crawler.urls import host_key, is_local_host, normalize_url
from webcrawl.storage import _testhooks
from webcrawl.storage.errors import (
    ConfigError,
    FetchError,
    FetchTimeoutError,
    HTTPStatusError,
    NetworkError,
    StoreError,
)
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, ResumeState, UrlRow

__all__ = ["CrawlStats", "Crawler", "crawl"]

log = logging.getLogger(__name__)

_ERROR_OUTCOME: dict[type[FetchError], Outcome] = {
    FetchTimeoutError: Outcome.TIMEOUT,
    NetworkError: Outcome.NETWORK_ERROR,
    HTTPStatusError: Outcome.HTTP_ERROR,
}


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
    stopped: str = "running"   # 'done', 'max_pages', 'stopped'
    resumed_pages: int = 0     # pages of the crawl before this run (resume)
    links_cut_pages: int = 0   # pages whose links were cut at links_max_per_page
    sitemap_fetches: int = 0   # sitemap files requested (--sitemaps)

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
        return {"pages": self.pages, "seconds": round(self.elapsed, 3),
                "pages_per_second": round(self.rate, 1), "requests": self.requests,
                "robots_fetches": self.robots_fetches, "retries": self.retries,
                "urls": self.urls, "hosts": self.hosts, "frontier": self.frontier,
                "links_cut_pages": self.links_cut_pages,
                "sitemap_fetches": self.sitemap_fetches,
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
                 overrides: Mapping[str, Any] | None = None) -> None:
        self.db_path = Path(db)
        self.resume = resume
        self.seeds = [self._seed(s) for s in seeds]
        if not self.seeds and not resume:
            raise ConfigError("at least one seed URL is needed")
        #: one line per stored setting replaced on resume
        self.notes: tuple[str, ...] = ()
        if resume:
            restored = resume_settings(read_meta(self.db_path), settings, overrides, strategy)
            self.settings, self.notes = restored.settings, restored.notes
        else:
            self.settings = _with_overrides(settings or CrawlSettings(), overrides or {})
        self.strategy = strategy or get_strategy(self.settings.frontier_strategy)(
            seed=self.settings.frontier_seed)
        if self.strategy.name != self.settings.frontier_strategy:  # stored as run
            self.settings = replace(self.settings, frontier_strategy=self.strategy.name)
        self.stats = CrawlStats()
        #: every URL and host of the crawl (the store is write-only during a crawl)
        self.registry = CrawlRegistry()
        self._next_seq = 0
        self._taken = 0                              # URLs handed to fetch tasks
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
        s = self.settings
        self.politeness = PolitenessPolicy(s)
        self.robots = RobotsCache(s)
        self.retry = RetryPolicy(s)
        self.frontier = Frontier(record_rank=s.frontier_record_rank)
        self.scope: Scope | None = None
        self.store: CrawlStore | None = None
        self.fetcher: Fetcher | None = None

    @staticmethod
    def _seed(url: str) -> str:
        norm = normalize_url(url)
        if norm is None:
            raise ConfigError(f"bad seed URL {url!r}: need an absolute http(s) URL")
        return norm

    # -- public -------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the crawl to stop soon (safe from a signal handler)."""
        self._tasks.stop()

    async def run(self) -> CrawlStats:
        """Crawl until the frontier is empty, ``scope_max_pages`` or :meth:`stop`."""
        s = self.settings
        async with Fetcher(s) as fetcher:  # bad TLS settings fail before the db exists
            self.fetcher = fetcher
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
                await self._dispatch()
                if self._tasks.fatal is not None:
                    raise self._tasks.fatal
            finally:
                self._stop_timers()
                await self._tasks.cancel([self._recompute] if self._recompute else [])
                self.stats.ended = time.monotonic()
                self._update_stats()
                await self.store.aclose()
        return self.stats

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
        self._taken = restored.taken
        self._next_seq = restored.next_seq
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
        known = self.registry.id_of(url)
        if known is not None:
            return known
        assert self.store is not None and self.scope is not None
        new = self.registry.add(url, depth)
        if new.new_host:
            self.store.add_host(HostRow(new.host_id, new.hostport))
        priority = self.strategy.discovered(new.url_id, depth)
        if follow and self.scope.admit(url, new.hostport, depth):
            self.store.add_url(UrlRow(new.url_id, url, new.host_id, depth, found_by))
            self.frontier.add(new.url_id, new.host_id, priority)
        else:
            self.store.add_url(UrlRow(new.url_id, url, new.host_id, depth, found_by,
                                      Outcome.OUT_OF_SCOPE, None))
            self.stats.outcomes[Outcome.OUT_OF_SCOPE] += 1
        return new.url_id

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
            self.stats.stopped = "stopped"
            return
        # URLs left by a page limit stay in the frontier (no outcome): a resume with a
        # higher limit takes them.
        self.stats.stopped = "max_pages" if self._max_pages_reached() else "done"

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

    def _start_pages(self, host_id: int) -> None:
        """Fetch the best URL of a busy host (robots.txt known), or release the host."""
        got = self._take_allowed(host_id)
        if got is None:
            self.frontier.release(host_id, self.registry.slot(host_id).ready_at)
            return
        self._tasks.spawn(self._fetch_page(*got))

    def _take_allowed(self, host_id: int) -> tuple[Taken, int] | None:
        """The busy host's best URL robots.txt allows, with its seq (None: none left)."""
        while True:
            taken = self.frontier.take(host_id)
            if taken is None:
                return None
            seq = self._next_seq
            self._next_seq += 1
            if self.robots.allowed(host_id, self.registry.url(taken.url_id)):
                self._taken += 1
                return taken, seq
            # Excluded URLs cost no request: record and try the host's next URL.
            assert self.store is not None
            self.store.set_outcome(taken.url_id, Outcome.ROBOTS_EXCLUDED, seq)
            self.stats.outcomes[Outcome.ROBOTS_EXCLUDED] += 1

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
        assert self.fetcher is not None and self.scope is not None
        slot = self.registry.slot(host_id)
        await self._wait(slot.ready_at - time.monotonic())
        started = time.monotonic()
        status, body, requests = await fetch_robots_file(
            self.fetcher, self.registry.robots_url(host_id), slot.name, self.settings,
            self.scope.host_allowed)
        self.stats.requests += requests
        self._robots_learned(host_id, status, body, started, time.monotonic())

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
    def _record(self, taken: Taken, seq: int, attempt: int, started_at: float, ended_at: float,
                outcome: Outcome, result: FetchResult | None = None,
                error: str | None = None) -> None:
        assert self.store is not None
        record = FetchRecord(
            url_id=taken.url_id, seq=seq, started_at=started_at, ended_at=ended_at,
            outcome=outcome, error=error, attempt=attempt, strategy=self.strategy.name,
            priority=taken.priority, rank=taken.rank)
        if result is not None:
            record.status = result.status
            record.content_type = result.content_type or None
            record.size = result.size
            record.digest = result.digest if result.size else None
            record.etag = result.etag
            record.last_modified = result.last_modified
        self.store.add_fetch(record)

    async def _fetch_page(self, taken: Taken, seq: int) -> None:
        assert self.fetcher is not None and self.store is not None
        slot = self.registry.slot(taken.host_id)
        url = self.registry.url(taken.url_id)
        fetcher, politeness = self.fetcher, self.politeness
        attempt = 0
        # only after robots.txt left the host waiting
        await self._wait(slot.ready_at - time.monotonic())

        async def attempt_once() -> FetchResult:
            nonlocal attempt
            attempt += 1
            if attempt > 1:
                self.stats.retries += 1
            t0, wall0 = time.monotonic(), time.time()
            self.stats.requests += 1
            try:
                result = await fetcher.fetch(url)
            except FetchError as exc:
                t1 = time.monotonic()
                politeness.after_request(slot, t0, t1)
                await asyncio.sleep(0)  # as below
                self._record(taken, seq, attempt, wall0, wall0 + (t1 - t0),
                             _outcome_of(exc), error=type(exc).__name__)
                raise
            politeness.after_request(slot, t0, result.ended_mono, result.retry_after)
            # One event-loop turn before recording and parsing: requests that host
            # timers started in the turn this response arrived in go out first instead
            # of waiting behind its link extraction (~1 ms).  Every answer yields here,
            # so records keep the order in which the answers arrived.
            await asyncio.sleep(0)
            if is_retryable_status(result.status) and attempt < self.settings.retry_attempts:
                self._record(taken, seq, attempt, result.started_at, result.ended_at,
                             Outcome.HTTP_ERROR, result, error="HTTPStatusError")
                raise HTTPStatusError(result.status, result.retry_after)
            return result

        try:
            result = await self.retry.call(attempt_once, lambda: slot.ready_at - time.monotonic(),
                                           self._wait)
        except FetchError as exc:
            # Every attempt already has its row; the URL ends with the last error.
            self._finish(taken, seq, _outcome_of(exc))
        else:
            try:
                page = await self._parse_big_page(result, url)
                self._finish_result(taken, seq, attempt, result, page)
            except StoreError:
                raise
            except Exception as exc:  # a bug or a parser failure: never lose the URL
                log.exception("processing %s failed", url)
                self._record(taken, seq, attempt, result.started_at, result.ended_at,
                             Outcome.NETWORK_ERROR, result, error=type(exc).__name__)
                self._finish(taken, seq, Outcome.NETWORK_ERROR)
        finally:
            self.frontier.release(taken.host_id, slot.ready_at)

    def _finish(self, taken: Taken, seq: int, outcome: Outcome) -> None:
        assert self.store is not None
        self.store.set_outcome(taken.url_id, outcome, seq)
        self.stats.outcomes[outcome] += 1

    async def _parse_big_page(self, result: FetchResult, url: str) -> PageLinks | None:
        """Extract a big HTML page's links in a worker thread (None: not big, or not HTML).

        Parsing a multi-megabyte page takes seconds of pure Python (every anchor is
        normalised); in a thread the event loop keeps serving the other fetches.  It
        runs before any record of the fetch is enqueued, so they still land together.
        """
        s = self.settings
        if (result.size < s.links_thread_above or result.too_large
                or not 200 <= result.status < 300 or not result.is_html):
            return None
        return await asyncio.to_thread(extract_links, result.body, url,
                                       max_links=s.links_max_per_page,
                                       agent=s.fetch_robots_agent, charset=result.charset)

    def _finish_result(self, taken: Taken, seq: int, attempt: int, result: FetchResult,
                       page: PageLinks | None = None) -> None:
        """Classify a response and enqueue all its records (no await in here)."""
        status = result.status
        links: list[int] = []
        nofollow: list[int] = []
        if 300 <= status < 400 and status != 304 and result.location:
            outcome = Outcome.REDIRECT
            links = self._follow_redirect(taken.url_id, seq, result)
        elif status == 304:
            outcome = Outcome.NOT_MODIFIED
        elif not 200 <= status < 300:
            outcome = Outcome.HTTP_ERROR
        elif result.too_large:
            outcome = Outcome.TOO_LARGE
        elif not result.is_html:
            outcome = Outcome.NOT_HTML
        else:
            outcome = Outcome.FETCHED
            links, nofollow = self._page_links(taken.url_id, seq, result, page)
        self._record(taken, seq, attempt, result.started_at, result.ended_at, outcome, result)
        if outcome is Outcome.FETCHED or outcome is Outcome.REDIRECT:
            assert self.store is not None
            self.store.add_links(taken.url_id, links, nofollow)
            self._learn(taken.url_id, links)
        self._finish(taken, seq, outcome)

    def _follow_redirect(self, url_id: int, seq: int, result: FetchResult) -> list[int]:
        assert result.location is not None
        registry = self.registry
        target = normalize_url(result.location, registry.url(url_id))
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

    def _page_links(self, url_id: int, seq: int, result: FetchResult,
                    page: PageLinks | None = None) -> tuple[list[int], list[int]]:
        s = self.settings
        url = self.registry.url(url_id)
        if page is None:
            page = extract_links(result.body, url, max_links=s.links_max_per_page,
                                 agent=s.fetch_robots_agent, charset=result.charset)
        if page.cut:
            # Never a silent cap: the page is recorded as cut and counted.
            assert self.store is not None
            self.store.add_link_cut(url_id, len(page.urls), page.cut)
            self.stats.links_cut_pages += 1
            log.info("%s: %d links kept, %d more dropped (links_max_per_page)",
                     url, len(page.urls), page.cut)
        depth = self.registry.depth(url_id) + 1
        follow_none = page.meta_nofollow and s.links_obey_meta_nofollow
        ids: list[int] = []
        nofollow: list[int] = []
        for url in page.urls:
            flagged = url in page.nofollow
            follow = not (follow_none or (flagged and not s.links_follow_nofollow))
            target = self._register(url, depth, seq, follow=follow)
            ids.append(target)
            if flagged or follow_none:
                nofollow.append(target)
        return ids, nofollow

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


def _outcome_of(exc: FetchError) -> Outcome:
    for cls, outcome in _ERROR_OUTCOME.items():
        if isinstance(exc, cls):
            return outcome
    return Outcome.NETWORK_ERROR


def _with_overrides(settings: CrawlSettings, overrides: Mapping[str, Any]) -> CrawlSettings:
    values = settings_values(settings)
    unknown = sorted(set(overrides) - set(values))
    if unknown:
        raise ConfigError(f"unknown crawl setting {unknown[0]!r}")
    return build_settings(values, overrides) if overrides else settings


def crawl(seeds: Iterable[str], db: str | Path, settings: CrawlSettings | None = None,
          *, resume: bool = False) -> CrawlStats:
    """Run a crawl to completion in a new event loop; return its statistics.

    The blocking counterpart of ``await Crawler(db, seeds, settings, resume=resume).run()``.
    """
    crawler = Crawler(db, seeds, settings, resume=resume)
    return asyncio.run(crawler.run())
