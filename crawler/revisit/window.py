"""Cho and Garcia-Molina's page window: pages found while revisiting join the collection.

Their incremental crawler kept a window of pages per site: a page that appeared on a
site was added when a revisited page linked to it, so new pages' lifespans, births and
deaths could be measured.  :class:`PageWindow` decides, for the links of a revisited
HTML page, which URLs join: on a host already in the collection (the study's fixed set
of sites), allowed by robots.txt, not already in the collection.  A URL the crawl
discovered but never fetched (its frontier, or abandoned when it stopped) or found
missing (an HTTP error: a page not born yet is 404) joins under its stored id; an
unknown one is recorded through the revisit's URL registry
(:class:`webcrawl.crawler.revisit.link_history.LinkHistory`), so ids stay unique.  Links are
read from revisits that return a body (2xx): a 304 means the page, and so its links,
did not change.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "The evolution of the web and implications for an
   incremental crawler", VLDB 2000, section 2 (the page window) and 3.3 (lifespans).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from webcrawl.crawler.links import extract_links
from webcrawl.crawler.urls import host_key
from webcrawl.storage.records import Outcome
from webcrawl.storage.store import HostRow, UrlRow

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
    urls : iterable of UrlRow
        Every URL the store holds.
    hosts : iterable of HostRow
        The collection's hosts (``name`` is ``host[:port]``).
    in_collection : set of int
        URL ids already revisited (they never join twice).
    allowed : callable ``(host_id, url) -> bool``
        robots.txt check.
    url_id : callable ``(url, depth, seq) -> int``
        The id of a URL the store did not hold at start, recording it if needed
        (:meth:`webcrawl.crawler.revisit.link_history.LinkHistory.url_id`).
    """

    def __init__(self, urls: Iterable[UrlRow], hosts: Iterable[HostRow],
                 in_collection: set[int], allowed: Callable[[int, str], bool],
                 url_id: Callable[[str, int, int], int]) -> None:
        self._known = {r.url: r for r in urls}
        self._hosts = {h.name: h.id for h in hosts}
        self._members = set(in_collection)
        self._allowed = allowed
        self._url_id = url_id

    def new_pages(self, html: bytes, charset: str | None, page_url: str,
                  seq: int) -> list[NewPage]:
        """The pages a revisited HTML page (fetch ``seq``) adds to the collection."""
        text = html.decode(charset or "utf-8", errors="replace")
        out: list[NewPage] = []
        for url in extract_links(text, page_url).urls:
            host_id = self._hosts.get(host_key(url))
            if host_id is None:
                continue
            known = self._known.get(url)
            if known is not None:
                # Only the crawl's frontier joins (never fetched, abandoned when the
                # crawl stopped, or missing then): fetched pages already are members,
                # other outcomes (robots, scope, redirects) were judged by the crawl.
                if known.id in self._members or known.outcome not in _FRONTIER:
                    continue
                if not self._allowed(host_id, url):
                    continue
                self._members.add(known.id)
                out.append(NewPage(known.id, url, host_id))
                continue
            if not self._allowed(host_id, url):
                continue
            new_id = self._url_id(url, 1, seq)
            if new_id in self._members:
                continue
            self._members.add(new_id)
            out.append(NewPage(new_id, url, host_id))
        return out

