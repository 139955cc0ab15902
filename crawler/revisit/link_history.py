"""Link history on revisits: a changed page's links, read once, recorded as its latest version.

A revisit that fetches a page's HTML again (a change, or a change it cannot rule out)
reads its links once (:meth:`LinkHistory.extract`: the crawler's own extractor and
normaliser, with the crawl's link cap and robots agent, the page decoded by its
charset as in a crawl: the ``Content-Type`` label if WHATWG knows it, ``<meta
charset>``, a byte-order mark, else UTF-8 or windows-1252).  The links go to the store,
which keeps the previous link set as an earlier version with the fetch it came from
(``link_versions`` in ``schema.sql``) when they differ, and to the page window
(:mod:`webcrawl.crawler.revisit.window`).  Targets never seen before are recorded as new
URLs (discovered by this fetch, depth + 1, not fetched: a later ``crawl --resume`` may
fetch them), on new hosts when needed.
"""

from __future__ import annotations

from webcrawl.crawler.fetcher import FetchResult
from webcrawl.crawler.links import PageLinks, extract_links, link_ids
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.store import CrawlStore, ResumeState

__all__ = ["LinkHistory"]


class LinkHistory:
    """URL and host ids of a stored crawl, extended as revisits discover links.

    The ids are the crawl's own :class:`~webcrawl.crawler.registry.CrawlRegistry`, loaded
    from the stored rows, so a URL a revisit meets is registered exactly as the crawl
    would have registered it; it is the revisit's one URL registry.
    """

    def __init__(self, store: CrawlStore, state: ResumeState, settings: CrawlSettings) -> None:
        self.store = store
        self.settings = settings
        self.registry = CrawlRegistry()
        self.registry.load(state.hosts, state.urls)
        #: URLs and hosts the store held at the start (ids below these are stored ones)
        self.stored_urls = len(self.registry)
        self.stored_hosts = self.registry.host_count
        self.new_urls = 0

    def extract(self, url: str, result: FetchResult, *, text: bool = False) -> PageLinks:
        """A fetched page's links, parsed as the crawl parses them (the one parse);
        ``text`` also takes its text (for its sketch), as the crawl does."""
        s = self.settings
        return extract_links(result.body, url, max_links=s.links_max_per_page,
                             agent=s.fetch_robots_agent, charset=result.charset, text=text)

    def record_links(self, url_id: int, page: PageLinks, seq: int) -> None:
        """Enqueue a page's extracted links as its latest link set."""
        depth = self.registry.depth(url_id) + 1
        ids, nofollow = link_ids(page, lambda target, _follow: self.url_id(target, depth, seq),
                                 obey_meta_nofollow=self.settings.links_obey_meta_nofollow)
        self.store.add_links(url_id, ids, nofollow)

    def url_id(self, url: str, depth: int, seq: int) -> int:
        """The id of ``url``, recorded first as a new URL (found by fetch ``seq``) if unseen."""
        known = self.registry.id_of(url)
        if known is not None:
            return known
        self.new_urls += 1
        return self.registry.register(self.store, url, depth, seq)
