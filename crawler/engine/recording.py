"""Page recording: what a page's answer writes, and what it teaches the crawl.

Every URL ends with exactly one :class:`~webcrawl.storage.records.Outcome`.  Each fetch
attempt is a ``fetches`` row; the records of one fetch (attempt rows, new URLs, links,
outcome) are enqueued with no ``await`` in between, so a kill never splits them.
Redirects are recorded as the page's one link and followed within scope for at most
``fetch_max_redirects`` hops.  A fetched page whose body repeats an earlier page's is
recorded as its duplicate (Mercator's content-seen test), and its links are read only
with ``links_from_duplicates``.  With ``near_duplicates``, the page's text waits for its
sketch and the near-duplicate test with the other pages of the store's next commit
(:mod:`~webcrawl.crawler.near_batch`).  The new URLs are registered
(:mod:`~webcrawl.crawler.engine.discovery`) and the strategy hears of the page's links
(:mod:`~webcrawl.crawler.engine.feedback`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from webcrawl.crawler.frontier import Taken
from webcrawl.crawler.links import PageLinks, page_link_ids
from webcrawl.crawler.orders import Attempt, PageDone
from webcrawl.crawler.outcomes import response_outcome
from webcrawl.crawler.urls import normalize_url
from webcrawl.storage import _testhooks
from webcrawl.storage.records import FetchRecord, Outcome

if TYPE_CHECKING:
    from webcrawl.crawler.engine.core import Crawler

__all__ = ["PageRecorder"]

log = logging.getLogger(__name__)


class PageRecorder:
    """Turns the downloader's answers into the crawl's records (see the module docstring)."""

    def __init__(self, crawl: Crawler) -> None:
        self.crawl = crawl

    def apply(self, taken: Taken, seq: int, done: PageDone, recorded: int = 0) -> None:
        """Record the downloader's answer for a URL: every attempt (but the first
        ``recorded``, already written as they happened), the new URLs, the links and the
        outcome, all enqueued with no ``await`` in between (a kill never splits them)."""
        stats = self.crawl.stats
        requests = done.requests
        stats.requests += requests
        stats.retries += max(0, requests - 1)
        for n, a in enumerate(done.failed[recorded:], recorded + 1):
            assert a.outcome is not None
            self.record(taken, seq, n, a, a.outcome)
        if done.result is None:
            failed = done.failed[-1]
            assert failed.outcome is not None
            self.crawl.dead_hosts.page_failed(taken.url_id, failed)
            self.finish(taken, seq, failed.outcome)
        else:
            self._finish_result(taken, seq, len(done.failed) + 1, done.result, done.links)
        _testhooks.kill_at("shard_page")

    def record(self, taken: Taken, seq: int, attempt: int, a: Attempt,
               outcome: Outcome) -> int:
        """One attempt's ``fetches`` row; its id."""
        crawl = self.crawl
        assert crawl.store is not None
        record = FetchRecord(
            url_id=taken.url_id, seq=seq, started_at=a.started_at, ended_at=a.ended_at,
            outcome=outcome, error=a.error, attempt=attempt, strategy=crawl.strategy.name,
            priority=taken.priority, rank=taken.rank)
        if a.status is not None:
            record.status = a.status
            record.content_type = a.content_type or None
            record.size = a.size
            record.digest = a.digest if a.size else None
            record.etag = a.etag
            record.last_modified = a.last_modified
        return crawl.store.add_fetch(record)

    def finish(self, taken: Taken, seq: int, outcome: Outcome) -> None:
        """The URL's one outcome."""
        crawl = self.crawl
        assert crawl.store is not None
        crawl.store.set_outcome(taken.url_id, outcome, seq)
        crawl.stats.outcomes[outcome] += 1

    def _finish_result(self, taken: Taken, seq: int, attempt: int, result: Attempt,
                       page: PageLinks | None) -> None:
        """Classify a response and enqueue all its records (no await in here)."""
        crawl = self.crawl
        outcome = response_outcome(result.status, location=result.location,
                                   too_large=result.too_large, is_html=result.is_html)
        links: list[int] = []
        nofollow: list[int] = []
        read_links = True
        duplicate = False
        if outcome is Outcome.REDIRECT:
            assert result.location is not None
            links = self._follow_redirect(taken.url_id, seq, result.location)
        elif outcome is Outcome.FETCHED:
            # A copy of an earlier page's body is not read again (content-seen test).
            duplicate = self._duplicate(taken.url_id, result.digest if result.size else None)
            read_links = not duplicate or crawl.settings.links_from_duplicates
            if page is not None and read_links:
                links, nofollow = self._page_links(taken.url_id, seq, page)
        fetch_id = self.record(taken, seq, attempt, result, outcome)
        if outcome is Outcome.FETCHED and crawl.near_batch is not None:
            crawl.near_batch.add(taken.url_id, fetch_id, page, tested=not duplicate)
        if outcome is Outcome.FETCHED or outcome is Outcome.REDIRECT:
            assert crawl.store is not None
            if read_links:
                crawl.store.add_links(taken.url_id, links, nofollow)
            crawl.feedback.learn(taken.url_id, links)
        self.finish(taken, seq, outcome)

    def _duplicate(self, url_id: int, digest: str | None) -> bool:
        """Whether the page's body repeats an earlier page's (recorded either way)."""
        crawl = self.crawl
        assert crawl.store is not None
        for page_id, original in crawl.content_seen.see(url_id, digest):
            crawl.store.set_duplicate(page_id, original)
        return crawl.content_seen.original(url_id) is not None

    def _follow_redirect(self, url_id: int, seq: int, location: str) -> list[int]:
        crawl = self.crawl
        registry = crawl.registry
        target = normalize_url(location, registry.url(url_id))
        if target is None:
            return []
        hops = registry.hops(url_id) + 1
        known = target in registry
        # A target beyond the hop limit is recorded out of scope (unless already known).
        target_id = crawl.discovery.register(target, registry.depth(url_id), seq,
                                             follow=hops <= crawl.settings.fetch_max_redirects)
        if not known:
            registry.set_hops(target_id, hops)
        return [target_id]

    def _page_links(self, url_id: int, seq: int, page: PageLinks) -> tuple[list[int], list[int]]:
        crawl = self.crawl
        s = crawl.settings
        if page.cut:
            # Never a silent cap: the page is recorded as cut and counted.
            assert crawl.store is not None
            crawl.store.add_link_cut(url_id, len(page.urls), page.cut)
            crawl.stats.links_cut_pages += 1
            log.info("%s: %d links kept, %d more dropped (links_max_per_page)",
                     crawl.registry.url(url_id), len(page.urls), page.cut)
        depth = crawl.registry.depth(url_id) + 1
        register_many = crawl.discovery.register_many
        return page_link_ids(
            page, lambda urls, follow: register_many(urls, depth, seq, follow).tolist(),
            obey_meta_nofollow=s.links_obey_meta_nofollow,
            follow_nofollow=s.links_follow_nofollow)
