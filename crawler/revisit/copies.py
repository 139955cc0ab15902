"""The crawl's copy tests on revisits: byte-for-byte copies and near copies of a page.

A revisit that fetches a page whose body may have changed runs the crawl's own tests
on it, from the stored state (:meth:`RevisitCopies.load`):

* the content-seen test (:mod:`webcrawl.crawler.content_seen`) on the raw body: the
  page may have become a copy of another page (``urls.duplicate_of``), or stopped
  being one;
* with the crawl's ``near_duplicates``, the near-duplicate test
  (:mod:`webcrawl.crawler.near_seen`) on the text's sketch, the text taken from the
  same parse as the page's links: the page may join a group (``urls.near_of``), leave
  one, or, a leader, hand its group on.  A page that is now a byte-for-byte copy leaves
  its group (the test runs on pages that are no copy, as in the crawl).  As in the
  crawl, the texts wait for the store's next commit and are sketched and tested
  together, written in the same transaction as the visits
  (:mod:`webcrawl.crawler.near_batch`).

The content-seen updates go to the store as they come (no await).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from webcrawl.crawler.content_seen import ContentSeen
from webcrawl.crawler.links import PageLinks
from webcrawl.crawler.near_batch import NearBatch
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.store import CrawlStore

__all__ = ["RevisitCopies"]


class RevisitCopies:
    """The content-seen test and, if the crawl ran it, the near-duplicate test."""

    __slots__ = ("near", "seen")

    def __init__(self, seen: ContentSeen | None = None, near: NearBatch | None = None) -> None:
        self.seen = seen if seen is not None else ContentSeen()
        #: the near-duplicate test's waiting pages (None: the crawl runs without it)
        self.near = near

    @classmethod
    async def load(cls, db: Path, settings: CrawlSettings, store: CrawlStore) -> RevisitCopies:
        """The tests' state for the crawl database ``db`` (read in a thread), whose
        updates go to ``store`` (``db``'s writer)."""
        seen = await asyncio.to_thread(ContentSeen.from_db, db)
        near = None
        if settings.near_duplicates:
            # In this thread: the test's process is killed when the thread that started
            # it ends (Linux), and the loop's thread ends last.
            near = NearBatch.open(store, settings, db)
        return cls(seen, near)

    def see(self, store: CrawlStore, url_id: int, raw_digest: str | None, fetch_id: int,
            page: PageLinks | None) -> None:
        """Test page ``url_id``'s new body (``raw_digest``: its raw body's digest, None
        for an empty body) and text (``page``'s, None: no HTML page), fetched in fetch
        row ``fetch_id``, and store the updates."""
        for page_id, original in self.seen.see(url_id, raw_digest):
            store.set_duplicate(page_id, original)
        if self.near is None:
            return
        copy = self.seen.original(url_id) is not None
        self.near.add(url_id, fetch_id, page, tested=not copy)
