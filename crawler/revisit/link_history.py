"""Link history on revisits: a changed page's new out-links, recorded as its latest version.

A revisit that fetches a page's HTML again (a change, or a change it cannot rule out)
extracts its links with the crawler's extractor and normaliser and hands them to the
store, which keeps the previous link set as an earlier version with the fetch it came
from (``link_versions`` in ``schema.sql``) when they differ.  Targets never seen before
are recorded as new URLs (discovered by this fetch, depth + 1, not fetched: a later
``crawl --resume`` may fetch them), on new hosts when needed.
"""

from __future__ import annotations

from webcrawl.crawler.links import PageLinks, extract_links, link_ids
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.store import CrawlStore, ResumeState

__all__ = ["LinkHistory"]


class LinkHistory:
    """URL and host ids of a stored crawl, extended as revisits discover links.

    The ids are the crawl's own :class:`~webcrawl.crawler.registry.CrawlRegistry`, loaded
    from the stored rows, so a URL a revisit meets is registered exactly as the crawl
    would have registered it.
    """

    def __init__(self, store: CrawlStore, state: ResumeState, settings: CrawlSettings) -> None:
        self.store = store
        self.settings = settings
        self.registry = CrawlRegistry()
        self.registry.load(state.hosts, state.urls)
        self.new_urls = 0

    def record(self, url_id: int, url: str, html: str | bytes, seq: int,
               charset: str | None = None) -> None:
        """Extract ``html``'s links and enqueue them as the page's latest link set."""
        s = self.settings
        page = extract_links(html, url, max_links=s.links_max_per_page,
                             agent=s.fetch_robots_agent, charset=charset)
        self.record_links(url_id, page, seq)

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
