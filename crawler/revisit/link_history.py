"""Link history on revisits: a changed page's new out-links, recorded as its latest version.

A revisit that fetches a page's HTML again (a change, or a change it cannot rule out)
extracts its links with the crawler's extractor and normaliser and hands them to the
store, which keeps the previous link set as an earlier version with the fetch it came
from (``link_versions`` in ``schema.sql``) when they differ.  Targets never seen before
are recorded as new URLs (discovered by this fetch, depth + 1, not fetched: a later
``crawl --resume`` may fetch them), on new hosts when needed.
"""

from __future__ import annotations

from webcrawl.crawler.links import extract_links, link_ids
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.urls import host_key
from webcrawl.storage.store import CrawlStore, HostRow, ResumeState, UrlRow

__all__ = ["LinkHistory"]


class LinkHistory:
    """URL and host ids of a stored crawl, extended as revisits discover links."""

    def __init__(self, store: CrawlStore, state: ResumeState, settings: CrawlSettings) -> None:
        self.store = store
        self.settings = settings
        self._url_id = {u.url: u.id for u in state.urls}
        self._depth = {u.id: u.depth for u in state.urls}
        self._next_url = state.next_url_id
        self._host_id = {h.name: h.id for h in state.hosts}
        self._next_host = state.next_host_id
        self.new_urls = 0

    def record(self, url_id: int, url: str, html: str, seq: int) -> None:
        """Extract ``html``'s links and enqueue them as the page's latest link set."""
        s = self.settings
        page = extract_links(html, url, max_links=s.links_max_per_page,
                             agent=s.fetch_robots_agent)
        depth = self._depth.get(url_id, 0) + 1
        ids, nofollow = link_ids(page, lambda target: self.url_id(target, depth, seq),
                                 obey_meta_nofollow=s.links_obey_meta_nofollow)
        self.store.add_links(url_id, ids, nofollow)

    def url_id(self, url: str, depth: int, seq: int) -> int:
        """The id of ``url``, recorded first as a new URL (found by fetch ``seq``) if unseen."""
        known = self._url_id.get(url)
        return self._add_url(url, depth, seq) if known is None else known

    def _add_url(self, url: str, depth: int, seq: int) -> int:
        name = host_key(url)
        host = self._host_id.get(name)
        if host is None:
            host = self._host_id[name] = self._next_host
            self._next_host += 1
            self.store.add_host(HostRow(host, name))
        uid = self._url_id[url] = self._next_url
        self._next_url += 1
        self._depth[uid] = depth
        self.store.add_url(UrlRow(uid, url, host, depth, seq))
        self.new_urls += 1
        return uid
