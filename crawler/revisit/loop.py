"""The revisit loop: keep a crawled collection fresh within a fetch budget (incremental crawl).

:class:`RevisitCrawler` takes the pages a crawl fetched as HTML (``urls.outcome =
'fetched'``), feeds their stored visit history (the crawl fetch, then earlier revisit
rows) to an :class:`analysis.change.refresh.RevisitPlanner`, and revisits whatever the planner
says is due, forever or for ``duration`` seconds:

* **Budget**: a token bucket allows at most ``budget`` fetch starts per second overall
  (``burst`` tokens at most saved up; the default 1 means no burst at all).  The planner
  allocates ``budget * day_seconds`` fetches per planner day.
* **Politeness**: the crawl's rules, kept by the crawl's downloader
  (:class:`~webcrawl.crawler.downloader.LocalDownloader`, on the loop's clock: the one
  politeness clock of each host, which the loop asks before it picks a page): one
  request in flight per host, the Mercator delay after each request, robots.txt
  ``Crawl-delay`` and ``Retry-After``.  robots.txt rules come from the bodies the crawl
  stored (not refetched); a page they disallow is dropped from the collection at start.
* **Time**: the planner works in days; crawler day = wall seconds / ``day_seconds``
  (86400 by default; pass the fixture's ``day_seconds`` against an accelerated fixture
  web).  A visit's time is the midpoint of its request.  Every time is read from the
  ``clock`` (:mod:`webcrawl.crawler.revisit.clock`): the wall clock by default, or a
  simulated clock under which a run does not depend on the machine's speed.
* **Conditional GET**: ``If-None-Match`` with the stored ETag and ``If-Modified-Since``
  with the stored Last-Modified.  A 304 is an observed *no change* (outcome
  ``not_modified``, ``changed = 0``).  A 2xx is compared by content digest:
  blake2b-128 of the body after deleting every match of the ``volatile`` regex (default
  none: the raw body, the crawl's own digest), against the page's previous digest.
* **Last-Modified**: on a changed 2xx, the time since the last change is ``Date -
  Last-Modified`` (both HTTP dates on the server's clock, so client clock skew and the
  fixture's simulated clock do not matter) / 86400 days, and the planner is told the
  change happened that long before the visit.  The schema keeps no ``Date``, so history
  replayed at start uses the changed flags only.
* **Links** (:class:`~webcrawl.crawler.revisit.link_history.LinkHistory`): a page fetched
  again whose body may have changed is parsed once, as the crawl parses it (its
  charset, the link cap), and its links recorded as its latest version.
* **New pages** (``add_new``, Cho's page window): a page linked from a revisited page
  on a collection host, not yet in the collection, joins it
  (:class:`~webcrawl.crawler.revisit.window.PageWindow`, from the same parse): due at once,
  recorded with its outcome so the next run loads it.
* **Copies** (the crawl's content-seen test and, when the crawl ran it, its
  near-duplicate test: :mod:`webcrawl.crawler.revisit.copies`): a changed page whose
  raw body now equals another page's is recorded as its duplicate
  (``urls.duplicate_of``); one that no longer does stops being one; its text's sketch
  (from the same parse as its links, stored as the visit's ``fetches.sketch``) is
  tested again (``urls.near_of``).  The stored digest of a visit under a ``volatile``
  rule is the rule's, so a later run tests those pages against their last raw-body
  digest only once they are revisited again.
* **Gone pages** (404/410): recorded (outcome ``http_error``, ``changed`` NULL) and
  retired: the copy is gone, the page is not revisited again (in this run the planner
  parks it at ``t = inf``; a later run leaves it out).  Its share of the allocation is
  not redistributed until the next run.
* **Errors** (network, timeout, other statuses, redirects): recorded with their outcome,
  no observation; the planner's clock for the page restarts at the failed attempt (so
  the next try is one planned interval later) and the next successful visit only
  re-registers the page, because its "changed since" would span an unknown interval.
  No retries within a visit: the next due time is the retry.

Every revisit is a ``fetches`` row with ``kind = 'revisit'``, the next ``seq``, the
policy name as ``strategy``, and ``changed``.  A stop (Ctrl-C, SIGTERM, :meth:`stop`)
starts no new visit and records the requests under way as they answer, for up to
``stop_grace`` seconds, as a crawl does; a second stop, the grace's end or the end of
``duration`` cancels them (not recorded: they did not complete).  The store is flushed;
a killed run loses at most the last uncommitted batch, and a new run continues from the
stored history with no completed fetch repeated early.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from webcrawl.analysis.change.fetch_history import META_DAY_SECONDS, http_date_seconds
from webcrawl.crawler import eventloop
from webcrawl.crawler.downloader import DownloaderLink, LocalDownloader
from webcrawl.crawler.fetcher import FetchResult
from webcrawl.crawler.links import PageLinks
from webcrawl.crawler.orders import FetchedAnswer, FetchPage, PageDone
from webcrawl.crawler.outcomes import response_outcome
from webcrawl.crawler.revisit.clock import RevisitClock, WallClock
from webcrawl.crawler.revisit.copies import RevisitCopies
from webcrawl.crawler.revisit.history import GONE_STATUSES, Page, load_history
from webcrawl.crawler.revisit.link_history import LinkHistory
from webcrawl.crawler.revisit.planning import configure_planner
from webcrawl.crawler.revisit.progress import RevisitStats, run_with_progress
from webcrawl.crawler.revisit.settings import (
    REVISIT_POLICIES,
    RevisitSettings,
    body_digest,
    volatile_pattern,
)
from webcrawl.crawler.revisit.sitemap_reads import SitemapReads
from webcrawl.crawler.revisit.window import PageWindow
from webcrawl.crawler.robots import RobotsCache
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.tasks import FetchTasks
from webcrawl.crawler.token_bucket import TokenBucket
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome

if TYPE_CHECKING:
    from webcrawl.analysis.change.refresh import RevisitPlanner
    from webcrawl.storage.store import CrawlStore

__all__ = [
    "REVISIT_POLICIES",
    "RevisitCrawler",
    "RevisitSettings",
    "RevisitStats",
    "TokenBucket",
    "body_digest",
    "revisit",
    "run_with_progress",
    "volatile_pattern",
]

log = logging.getLogger(__name__)

#: Meta keys written by the revisit loop.
META_VOLATILE = "revisit_volatile"
META_VOLATILE_SINCE = "revisit_volatile_since_seq"
_HTTP_DAY = 86400.0


#: ``make(settings, clock)``: the downloader a revisit fetches through
DownloaderMaker = Callable[[CrawlSettings, Callable[[], float]], LocalDownloader]


def _local_downloader(settings: CrawlSettings, clock: Callable[[], float]) -> LocalDownloader:
    return LocalDownloader(settings, clock=clock)


class RevisitCrawler:
    """Revisit a crawl's collection under a budget (see the module docstring).

    Parameters
    ----------
    db : str or Path
        A crawl database (it must exist and hold fetched pages).
    settings : RevisitSettings, optional
    crawl_settings : CrawlSettings, optional
        Fetching, politeness, robots, TLS and ``resolve`` settings, layered over the
        ones the crawl stored (:func:`webcrawl.crawler.config.revisit_base_settings`) as every
        entry point layers them (:func:`webcrawl.crawler.config.layer_settings`: the fields
        it gives replace the stored ones), so the revisit connects as the crawl did.
    overrides : mapping of CrawlSettings field to value, optional
        Settings given one by one (the command line's); they win over ``crawl_settings``.
    true_rates : mapping of URL to rate per day, optional
        Known change rates (an oracle for benchmarks): the planner allocates with
        these instead of its estimates.  Every collection URL needs one.
    clock : RevisitClock, optional
        What the loop reads the time from (:mod:`webcrawl.crawler.revisit.clock`).
    downloader : callable, optional
        ``make(settings, clock)``: the :class:`LocalDownloader` to fetch through
        (default: the crawl's own, on ``clock.monotonic``; a test passes one over a fake
        web).
    """

    def __init__(self, db: str | Path, settings: RevisitSettings | None = None,
                 crawl_settings: CrawlSettings | None = None, *,
                 true_rates: Mapping[str, float] | None = None,
                 overrides: Mapping[str, Any] | None = None,
                 clock: RevisitClock | None = None,
                 downloader: DownloaderMaker | None = None) -> None:
        from webcrawl.crawler.config import layer_settings, revisit_base_settings

        self.db_path = Path(db)
        self.clock: RevisitClock = clock or WallClock()
        self.settings = settings or RevisitSettings()
        layered = layer_settings(crawl_settings, overrides,
                                 stored=revisit_base_settings(self.db_path))
        #: one line per stored crawl setting the given ones replaced
        self.notes = layered.notes
        self.crawl_settings = layered.settings
        self.true_rates = true_rates
        self.stats = RevisitStats(budget=self.settings.budget)
        self.robots = RobotsCache(self.crawl_settings)
        self.planner: RevisitPlanner | None = None
        #: revisits per planner day each host allows (its politeness), by host id
        self.host_limits: dict[int, float] = {}
        self._pattern = volatile_pattern(self.settings.volatile)
        self._pages: dict[int, Page] = {}
        self._links: LinkHistory | None = None
        self._copies = RevisitCopies()
        self._busy: set[int] = set()
        self._tasks = FetchTasks()
        self._closing = False  # the downloader is closing: answers are not recorded
        self._origin = 0.0
        self._next_seq = 0
        self._window: PageWindow | None = None
        self.store: CrawlStore | None = None
        self.downloader: LocalDownloader | None = None
        self._make_downloader = downloader or _local_downloader
        #: the run's sitemap reads (None: ``sitemaps`` off)
        self.sitemaps: SitemapReads | None = None

    # -- public -------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the run to stop soon (safe from a signal handler; see the module
        docstring); a second call stops at once."""
        self._tasks.stop()

    def day(self, wall: float) -> float:
        """Planner day of a wall-clock time."""
        return (wall - self._origin) / self.settings.day_seconds

    async def run(self) -> RevisitStats:
        """Revisit until ``duration`` ends or :meth:`stop`; return the statistics."""
        from webcrawl.storage.store import CrawlStore

        cs = self.crawl_settings
        downloader = self._make_downloader(cs, self.clock.monotonic)
        # A revisit run continues the crawl: with --warc-dedup-repeats its WARC archive
        # first reads back the bodies the folder's earlier files of the crawl hold.
        await downloader.open(DownloaderLink(resumed=True))
        try:
            self.downloader = downloader
            self.store = await CrawlStore.open(self.db_path, resume=True,
                                               batch_size=cs.store_batch_size,
                                               flush_interval=cs.store_flush_interval,
                                               busy_wait=cs.store_busy_wait)
            try:
                await self._setup(self.store)
                self.stats.started = time.monotonic()
                await self._loop()
                if self.stats.stopped == "stopped":  # answers under way are recorded
                    await self._tasks.drain(cs.stop_grace)
                if self._tasks.fatal is not None:
                    raise self._tasks.fatal
            finally:
                # Requests in flight are dropped first (no answer arrives after this),
                # then the visits waiting for them: nothing is half recorded.  Closing
                # answers them "client closed": that is no answer of the server's, so it
                # is not recorded (it was recorded as a network error at a run's end).
                self._closing = True
                await downloader.aclose()
                self.stats.warc = downloader.warc_counts()
                await self._tasks.cancel()
                self.stats.ended = time.monotonic()
                try:
                    await self.store.aclose()
                finally:
                    if self._copies.near is not None:
                        self._copies.near.close()
        finally:
            await downloader.aclose()  # idempotent: closed above unless the store failed
        return self.stats

    # -- setup --------------------------------------------------------------------
    async def _setup(self, store: CrawlStore) -> None:
        s = self.settings
        state = await store.load_state()
        rule = s.volatile or ""
        since = int(state.meta.get(META_VOLATILE_SINCE, state.next_seq))
        if state.meta.get(META_VOLATILE) != rule:
            since = state.next_seq
            store.set_meta(META_VOLATILE, rule)
            store.set_meta(META_VOLATILE_SINCE, str(since))
        store.set_meta("revisit_policy", s.policy)
        store.set_meta("revisit_objective", s.objective)
        store.set_meta("revisit_importance", s.importance)
        store.set_meta(META_DAY_SECONDS, repr(s.day_seconds))  # read back by the analyses
        hist = await asyncio.to_thread(load_history, self.db_path, since, rule == "")
        self._links = LinkHistory(store, state, self.crawl_settings)
        self._copies = await RevisitCopies.load(self.db_path, self.crawl_settings, store)
        self._next_seq = state.next_seq
        self._origin = hist.origin
        for h in state.hosts:
            self.robots.restore(h.id, h.robots_status, h.robots_body, h.crawl_delay)
        allowed = {i: p for i, p in hist.pages.items()
                   if not p.gone and self.robots.allowed(p.host_id, p.url)}
        self._pages = allowed
        self.stats.pages = len(allowed)
        self.stats.excluded = len(hist.pages) - len(allowed)
        if not allowed:
            raise ConfigError(f"no page of {self.db_path} may be revisited "
                              "(all gone or excluded by robots.txt)")
        self.planner = self._planner(len(allowed))
        keep = [k for k, p in enumerate(hist.visit_page) if p in allowed]
        self.planner.update_many([hist.visit_page[k] for k in keep],
                                 [self.day(hist.visit_time[k]) for k in keep],
                                 [hist.visit_changed[k] for k in keep])
        assert self.downloader is not None
        policy = self.downloader.slots.policy  # the hosts' one politeness clock's rule
        delays = {h.id: policy.clamp_crawl_delay(self.robots.rules(h.id).crawl_delay)
                  for h in state.hosts}
        collection = {i: (p.url, p.host_id) for i, p in allowed.items()}
        sitemaps = self.crawl_settings.sitemaps_follow if s.sitemaps is None else s.sitemaps
        self.host_limits = await asyncio.to_thread(
            configure_planner, self.planner, self.db_path, s, collection, delays, policy,
            1.0 / s.sitemap_interval if sitemaps else 0.0)
        if sitemaps:
            self.sitemaps = SitemapReads(collection, self._links.registry, self.robots,
                                         self.crawl_settings,
                                         s.sitemap_interval * s.day_seconds,
                                         self.clock.monotonic())
        if s.add_new:
            self._window = PageWindow(self._links, state.urls, set(hist.pages),
                                      self.robots.allowed)
        log.info("revisit: %d pages, %d stored visits, next seq %d", len(allowed), len(keep),
                 self._next_seq)

    def _planner(self, n_pages: int) -> RevisitPlanner:
        from webcrawl.analysis.change.refresh import PlannerSettings, RevisitPlanner

        s = self.settings
        every = s.recompute_every or int(np.clip(n_pages // 20, 1, 1000))
        planner = RevisitPlanner(PlannerSettings(
            policy=s.policy, objective=s.objective, budget_per_day=s.budget_per_day,
            prior_changes=s.prior_changes,
            prior_days=s.prior_days, recompute_every=every, min_frequency=s.min_frequency))
        if self.true_rates is not None:
            known = self.true_rates
            missing = [p.url for p in self._pages.values() if p.url not in known]
            if missing:
                raise ConfigError(f"the true rates lack {len(missing)} of the "
                                  f"{len(self._pages)} pages (e.g. {missing[0]})")
            by_id = {i: float(known[p.url]) for i, p in self._pages.items()}

            def oracle(keys: Any) -> np.ndarray:
                return np.fromiter((by_id[k] for k in keys), dtype=np.float64, count=len(keys))

            planner.rate_oracle = oracle
        return planner

    # -- the loop -----------------------------------------------------------------
    async def _loop(self) -> None:
        s = self.settings
        concurrency = self.crawl_settings.concurrency
        clock = self.clock
        bucket = TokenBucket(s.budget, s.burst, now=clock.monotonic())
        end = None if s.duration is None else clock.monotonic() + s.duration
        started = 0
        assert self.store is not None
        while not self._tasks.stopping:
            now = clock.monotonic()
            if end is not None and now >= end:
                self.stats.stopped = "duration"
                return
            if s.max_visits is not None and started >= s.max_visits:
                # Let the last revisits finish (and be recorded) rather than cancel them.
                while len(self._tasks) and not self._tasks.stopping:
                    await clock.wait(self._tasks, end)
                    if end is not None and clock.monotonic() >= end:
                        self.stats.stopped = "duration"
                        return
                self.stats.stopped = "max_visits"
                return
            wake = math.inf if end is None else end
            if len(self._tasks) < concurrency and self.sitemaps is not None:
                host_id, at = self.sitemaps.pick(now, self._busy, self._host_ready_at)
                if host_id is not None:  # on the host's clock, outside the budget
                    self._spawn_sitemap(host_id, now)
                    continue
                wake = min(wake, at)
            if len(self._tasks) < concurrency:  # else: a task's end wakes us
                token_wait = bucket.wait(now)
                # A wait shorter than the clock can tell (a token all but refilled on an
                # exact simulated clock) is no wait: else the loop would spin in place.
                if now + token_wait > now:
                    wake = min(wake, now + token_wait)
                else:
                    page, ready_at = self._pick(now, clock.time())
                    if page is not None:
                        bucket.take(now)
                        self._spawn(page)
                        started += 1
                        continue
                    wake = min(wake, ready_at)
            await self.store.drain()
            await clock.wait(self._tasks, wake if math.isfinite(wake) else None)
        self.stats.stopped = "stopped"

    def _pick(self, now: float, wall: float) -> tuple[int | None, float]:
        """The most overdue page whose host is free and ready, else None and when to look
        again (monotonic): a busy host's end wakes the loop by itself; a waiting host or a
        page not yet due gives a time."""
        assert self.planner is not None and self.downloader is not None
        assert self._links is not None
        ready, host_name = self.downloader.ready_at, self._links.registry.host_name
        today = self.day(wall)
        due = self.planner.due_times()
        keys = self.planner.pages
        # A page due within the wall clock's resolution is due now: else the wait for
        # it could be shorter than a tick of the clock, and the loop would spin in place.
        today += float(np.spacing(wall)) / self.settings.day_seconds
        now_due = np.flatnonzero(due <= today)
        later = due[due > today]
        # No wait shorter than a tick of the wall clock either: the days are read from
        # it, so a shorter one would not move them (and a simulated clock would creep).
        ready_at = (now + max((float(later.min()) - today) * self.settings.day_seconds,
                              float(np.spacing(wall)))
                    if later.size else math.inf)
        for i in now_due[np.argsort(due[now_due], kind="stable")].tolist():
            page = self._pages[int(keys[i])]
            if page.host_id in self._busy:
                continue
            host_at = ready(host_name(page.host_id))
            if host_at > now:
                ready_at = min(ready_at, host_at)
                continue
            return page.url_id, ready_at
        return None, ready_at

    def _host_ready_at(self, host_id: int) -> float:
        """When the host's politeness clock lets it be asked again (monotonic)."""
        assert self.downloader is not None and self._links is not None
        return self.downloader.ready_at(self._links.registry.host_name(host_id))

    def _spawn_sitemap(self, host_id: int, now: float) -> None:
        self._busy.add(host_id)
        self._tasks.spawn(self._read_sitemap(host_id, now))

    async def _read_sitemap(self, host_id: int, now: float) -> None:
        """One sitemap file of the host (:mod:`webcrawl.crawler.revisit.sitemap_reads`)."""
        assert self.sitemaps is not None and self.downloader is not None
        assert self.planner is not None
        try:
            await self.sitemaps.fetch(host_id, self.downloader, now,
                                      self.day(self.clock.time()), self.planner)
        finally:
            self._busy.discard(host_id)

    def _spawn(self, url_id: int) -> None:
        page = self._pages[url_id]
        self._busy.add(page.host_id)
        seq = self._next_seq
        self._next_seq += 1
        self._tasks.spawn(self._visit(page, seq))

    # -- one visit ------------------------------------------------------------------
    async def _visit(self, page: Page, seq: int) -> None:
        """One conditional GET through the crawl's downloader (no retries: the next due
        time is the retry).  The answer is recorded by the downloader's callback, in the
        event-loop turn the response arrived in: a stop can never fall between a
        response (and its WARC record) and its row."""
        downloader, links = self.downloader, self._links
        assert downloader is not None and links is not None
        host = links.registry.host_name(page.host_id)
        answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        mono, wall = self.clock.monotonic(), self.clock.time()

        def done(answer: FetchedAnswer | BaseException) -> None:
            if answered.done() or self._closing:  # stopped meanwhile: nothing recorded
                return
            try:
                if isinstance(answer, BaseException):
                    raise answer
                assert isinstance(answer, PageDone)
                self._answered(page, seq, answer, mono, wall)
            except BaseException as error:
                answered.set_exception(error)
            else:
                answered.set_result(None)

        downloader.submit(FetchPage(
            page.url_id, page.url, host, downloader.ready_at(host) - mono,
            self.robots.rules(page.host_id).crawl_delay or 0.0, page.etag, page.last_modified,
            attempts=1, keep_body=True), done)
        try:
            await answered
        finally:
            if not answered.done():
                answered.cancel()
            self._busy.discard(page.host_id)

    def _answered(self, page: Page, seq: int, done: PageDone, mono: float,
                  wall: float) -> None:
        """``mono``, ``wall``: the clock when the visit started (what a simulated clock
        dates the answer by)."""
        if done.response is None:
            failed = done.failed[-1]
            assert failed.outcome is not None
            started, ended = self.clock.span(failed.started_at, failed.ended_at, wall)
            self._failed(page, FetchRecord(
                url_id=page.url_id, seq=seq, started_at=started,
                ended_at=ended, outcome=failed.outcome, error=failed.error,
                kind=FetchKind.REVISIT, strategy=self.settings.policy))
            return
        self._handle(page, seq, self.clock.stamp(done.response, wall, mono))

    def _record(self, page: Page, seq: int, result: FetchResult, outcome: Outcome,
                digest: str | None, changed: bool | None, error: str | None = None) -> int:
        """The visit's ``fetches`` row; its id."""
        assert self.store is not None
        fetch_id = self.store.add_fetch(FetchRecord(
            url_id=page.url_id, seq=seq, started_at=result.started_at,
            ended_at=result.ended_at, outcome=outcome, status=result.status,
            content_type=result.content_type or None, size=result.size, digest=digest,
            etag=result.etag or page.etag, last_modified=result.last_modified or page.last_modified,
            error=error, kind=FetchKind.REVISIT, strategy=self.settings.policy, changed=changed))
        self.stats.fetches += 1
        self.stats.outcomes[str(outcome)] += 1
        if page.joined:  # a page-window page's first answer decides its outcome
            self.store.set_outcome(page.url_id, outcome, seq)
            page.joined = False
        return fetch_id

    def _add_new(self, page: Page, seq: int, links: PageLinks) -> None:
        """Cho's page window: the pages this one links to that join the collection."""
        assert self._window is not None and self._links is not None
        assert self.planner is not None
        depth = self._links.registry.depth(page.url_id)
        for new in self._window.new_pages(links, depth, seq):
            self._pages[new.url_id] = Page(new.url_id, new.url, new.host_id, joined=True)
            self.planner.update(new.url_id, -math.inf)  # due at once
            self.planner.set_hosts([new.url_id], [new.host_id])
            self.stats.added += 1

    def _handle(self, page: Page, seq: int, result: FetchResult) -> None:
        """Classify a response (the crawl's outcome rule), record it and tell the planner
        (no await in here)."""
        assert self.planner is not None
        status = result.status
        outcome = response_outcome(status, location=result.location,
                                   too_large=result.too_large, is_html=result.is_html)
        if status in GONE_STATUSES:
            self._record(page, seq, result, Outcome.HTTP_ERROR, None, None, "gone")
            page.gone = True
            self.stats.gone += 1
            self.planner.update(page.url_id, math.inf)  # parked: never due again
            return
        changed: bool | None
        if outcome is Outcome.NOT_MODIFIED:
            digest, changed = None, False
            self.stats.not_modified += 1
        elif 200 <= status < 300:
            digest = body_digest(result.body, self._pattern)
            changed = (digest != page.digest) if page.digest_ok and page.digest else None
            page.digest, page.digest_ok = digest, True
        else:
            self._record(page, seq, result, outcome, None, None, f"HTTP {status}")
            self._broken(page, result.started_at, result.ended_at)
            return
        joining = page.joined
        links = None
        if outcome is Outcome.FETCHED and self._links is not None and (
                changed is not False or self._window is not None):
            # the page's one parse (and its text, for its sketch, if it may have changed)
            text = self._copies.near is not None and changed is not False
            links = self._links.extract(page.url, result, text=text)
        fetch_id = self._record(page, seq, result, outcome, digest, changed)
        if outcome is Outcome.FETCHED and changed is not False and digest is not None:
            self._content_seen(page.url_id, result.body, digest, fetch_id, links)
        if joining and outcome is not Outcome.FETCHED:
            self.planner.update(page.url_id, math.inf)  # not an HTML page: leaves again
            return
        if links is not None:
            assert self._links is not None
            if changed is not False:
                # The page may link elsewhere now: its links become the latest version.
                self._links.record_links(page.url_id, links, seq)
            if self._window is not None:
                self._add_new(page, seq, links)
        page.etag = result.etag or page.etag
        page.last_modified = result.last_modified or page.last_modified
        self._count(changed)
        t_day = self.day(0.5 * (result.started_at + result.ended_at))
        observed = None if page.resync else changed
        page.resync = False
        self.planner.update(page.url_id, t_day, observed,
                            self._modified_day(result, t_day) if observed else None)

    def _content_seen(self, url_id: int, body: bytes, digest: str, fetch_id: int,
                      page: PageLinks | None) -> None:
        """The crawl's copy tests on the raw body and the text: the page may have become
        a copy or near copy of another page, or stopped being one."""
        assert self.store is not None
        raw = digest if self._pattern is None else body_digest(body)
        self._copies.see(self.store, url_id, raw if body else None, fetch_id, page)

    def _count(self, changed: bool | None) -> None:
        if changed is None:
            self.stats.unknown += 1
        elif changed:
            self.stats.changed += 1
        else:
            self.stats.unchanged += 1

    def _modified_day(self, result: FetchResult, t_day: float) -> float | None:
        """Planner day of the last change: visit day - (Date - Last-Modified) in days."""
        date, modified = http_date_seconds(result.date), http_date_seconds(result.last_modified)
        if date is None or modified is None or modified > date:
            return None
        return t_day - (date - modified) / _HTTP_DAY

    def _failed(self, page: Page, record: FetchRecord) -> None:
        assert self.store is not None
        self.store.add_fetch(record)
        self.stats.fetches += 1
        self.stats.outcomes[str(record.outcome)] += 1
        self._broken(page, record.started_at, record.ended_at)

    def _broken(self, page: Page, started_at: float, ended_at: float) -> None:
        """An error: no observation; the page's clock restarts, the next visit resyncs."""
        assert self.planner is not None
        self.stats.errors += 1
        page.resync = True
        self.planner.update(page.url_id, self.day(0.5 * (started_at + ended_at)))


def revisit(db: str | Path, settings: RevisitSettings | None = None,
            crawl_settings: CrawlSettings | None = None, *,
            true_rates: Mapping[str, float] | None = None,
            overrides: Mapping[str, Any] | None = None) -> RevisitStats:
    """Run a revisit to its end (``settings.duration``) on the crawl's event loop
    (:func:`webcrawl.crawler.eventloop.run`, as every entry point)."""
    return eventloop.run(RevisitCrawler(db, settings, crawl_settings,
                                        true_rates=true_rates, overrides=overrides).run())
