"""Cho and Garcia-Molina's page window: pages found while revisiting join the collection.

Their incremental crawler kept a window of pages per site: a page that appeared on a
site was added when a revisited page linked to it, so new pages' lifespans, births and
deaths could be measured.  :class:`PageWindow` decides, for the links of a revisited
HTML page (as :meth:`LinkHistory.extract
<webcrawl.crawler.revisit.link_history.LinkHistory.extract>` read them: the page is parsed
once), which URLs join: on a host already in the collection (the study's fixed set of
sites), allowed by robots.txt, not already in the collection.  A URL the crawl
discovered but never fetched (its frontier, or abandoned when it stopped) or found
missing (an HTTP error: a page not born yet is 404) joins under its stored id; an
unknown one is recorded through the revisit's one URL registry
(:class:`~webcrawl.crawler.revisit.link_history.LinkHistory`), so ids stay unique.  Links
are read from revisits that return a body (2xx): a 304 means the page, and so its links,
did not change.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "The evolution of the web and implications for an
   incremental crawler", VLDB 2000, section 2 (the page window) and 3.3 (lifespans).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from webcrawl.crawler.links import PageLinks
from webcrawl.crawler.revisit.link_history import LinkHistory
from webcrawl.crawler.urls import host_key
from webcrawl.storage.records import Outcome
from webcrawl.storage.store import UrlRow

__all__ = ["NewPage", "PageWindow"]

#: Stored outcomes of URLs the crawl discovered but did not fetch, or found missing
#: (an HTTP error such as 404: the page may be born since).
_FRONTIER = (None, Outcome.ABANDONED, Outcome.HTTP_ERROR)


@dataclass(frozen=True, slots=True)
class NewPage:
    """A URL joining the collection."""

    url_id: int
    url: str
    host_id: int


class PageWindow:
    """Which linked URLs join the collection (see the module docstring).

    Parameters
    ----------
    links : LinkHistory
        The revisit's URL registry (the stored URLs and hosts, and those met since).
    urls : iterable of UrlRow
        Every URL the store holds (only their outcomes are read).
    in_collection : set of int
        URL ids already revisited (they never join twice).
    allowed : callable ``(host_id, url) -> bool``
        robots.txt check.
    """

    def __init__(self, links: LinkHistory, urls: Iterable[UrlRow], in_collection: set[int],
                 allowed: Callable[[int, str], bool]) -> None:
        self._links = links
        #: stored URLs that may join (the crawl's frontier, or missing then)
        self._joinable = {r.id for r in urls if r.outcome in _FRONTIER}
        self._members = set(in_collection)
        self._allowed = allowed

    def new_pages(self, page: PageLinks, depth: int, seq: int) -> list[NewPage]:
        """The pages a revisited HTML page at link ``depth`` (fetch ``seq``) adds to the
        collection, from its links ``page``."""
        links = self._links
        registry = links.registry
        out: list[NewPage] = []
        for url in page.urls:
            host_id = registry.host_id(host_key(url))
            if host_id is None or host_id >= links.stored_hosts:
                continue  # not a collection host
            known = registry.id_of(url)
            if known is not None and known < links.stored_urls:
                # Only the crawl's frontier joins (never fetched, abandoned when the
                # crawl stopped, or missing then): fetched pages already are members,
                # other outcomes (robots, scope, redirects) were judged by the crawl.
                if known in self._members or known not in self._joinable:
                    continue
                if not self._allowed(host_id, url):
                    continue
                self._members.add(known)
                out.append(NewPage(known, url, host_id))
                continue
            if not self._allowed(host_id, url):
                continue
            new_id = links.url_id(url, depth + 1, seq)
            if new_id in self._members:
                continue
            self._members.add(new_id)
            out.append(NewPage(new_id, url, host_id))
        return out
