"""Sitemaps in a revisit run (``RevisitSettings.sitemaps``): change signals for the planner.

Each collection host's sitemaps are read at the start of the run and again every
``sitemap_interval`` planner days, by the crawl's own reader
(:class:`~webcrawl.crawler.sitemaps.SitemapReader`: the ``Sitemap:`` lines of the stored
robots.txt on the same host, else ``/sitemap.xml``; an index and the sitemaps it lists).
Each file is one :class:`~webcrawl.crawler.orders.FetchFile` order to the run's
downloader, placed by the loop like a revisit: only when the host is free and its one
politeness clock says it may be asked, so a sitemap request waits and is waited for like
any other.  It takes no token of the revisit budget; the planner plans the host's
politeness limit minus one request per read (``reserved`` in
:func:`~webcrawl.crawler.revisit.host_limits.host_limits`).

When a host's read ends, the collection pages it lists are told to the planner
(:meth:`~webcrawl.analysis.change.refresh.RevisitPlanner.read_sitemap`): ``lastmod`` as
a planner day, ``read day - (Date - lastmod) / 86400`` (both on the server's clock, as
Last-Modified is read; a file answered without ``Date`` gives no ``lastmod``), with the
resolution it is written to; and ``changefreq`` as the centre of the page's prior
(:meth:`~webcrawl.analysis.change.refresh.RevisitPlanner.set_changefreq`).  Whether a
host's ``lastmod`` is believed is the planner's business
(:mod:`webcrawl.analysis.change.signals`).  A read that fails (network error, non-2xx)
gives nothing and is tried again an interval later; listed pages outside the collection
are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from webcrawl.analysis.change.fetch_history import http_date_seconds
from webcrawl.analysis.change.signals import changefreq_rate
from webcrawl.crawler.engine.sitemap_turn import sitemap_order
from webcrawl.crawler.orders import FetchFile, FileDone, await_answer
from webcrawl.crawler.sitemaps import SitemapReader, host_sitemap_urls, w3c_datetime
from webcrawl.crawler.urls import host_key

if TYPE_CHECKING:
    from webcrawl.analysis.change.refresh import RevisitPlanner
    from webcrawl.crawler.downloader import LocalDownloader
    from webcrawl.crawler.registry import CrawlRegistry
    from webcrawl.crawler.robots import RobotsCache
    from webcrawl.crawler.settings import CrawlSettings

__all__ = ["SitemapReads"]

_HTTP_DAY = 86400.0


@dataclass(slots=True)
class _HostRead:
    """One host's sitemap reads: when the next is due, and the one under way."""

    due: float                               # monotonic
    reader: SitemapReader | None = None
    pending: str | None = None               # the next file to fetch
    #: per file fetched: (planner day of the read, the answer's Date in seconds)
    files: dict[str, tuple[float, float | None]] = field(default_factory=dict)


class SitemapReads:
    """The sitemap reads of a revisit run (see the module docstring).

    Parameters
    ----------
    pages : mapping of url id to (url, host id)
        The collection.
    registry, robots, settings
        The run's URL registry, robots.txt rules and crawl settings (the ``sitemaps_``
        limits).
    interval : float
        Seconds (on the loop's clock) between two reads of a host.
    start : float
        The loop's clock now: every host's first read is due.
    """

    def __init__(self, pages: Mapping[int, tuple[str, int]], registry: CrawlRegistry,
                 robots: RobotsCache, settings: CrawlSettings, interval: float,
                 start: float) -> None:
        self._ids = {url: url_id for url_id, (url, _host) in pages.items()}
        self._registry, self._robots, self._settings = registry, robots, settings
        self._interval = interval
        self._hosts = {host: _HostRead(start) for _url, host in pages.values()}
        #: every sitemap file fetched: (host id, planner day of the request)
        self.fetched: list[tuple[int, float]] = []

    def pick(self, now: float, busy: set[int],
             ready_at: Callable[[int], float]) -> tuple[int | None, float]:
        """A host whose sitemap request may start now (its read begun), else None; and
        when to look again (``inf``: a busy host's end wakes the loop)."""
        wake = math.inf
        for host_id, read in self._hosts.items():
            if read.pending is None and read.due > now:
                wake = min(wake, read.due)
                continue
            if host_id in busy:
                continue
            host_at = ready_at(host_id)
            if host_at > now:
                wake = min(wake, host_at)
                continue
            if read.pending is None and not self._begin(host_id, read):
                read.due = now + self._interval
                wake = min(wake, read.due)
                continue
            return host_id, wake
        return None, wake

    def _begin(self, host_id: int, read: _HostRead) -> bool:
        """Start a read of the host's sitemaps; False when there is nothing to fetch."""
        host, origin = self._registry.host_name(host_id), self._registry.origin(host_id)
        s = self._settings
        read.reader = SitemapReader(
            None, lambda u: self._robots.allowed(host_id, u),
            lambda u: host_key(u) == host and u.startswith(origin),
            max_files=s.sitemaps_max_files, max_urls=s.sitemaps_max_urls,
            max_bytes=s.sitemaps_max_bytes)
        read.reader.start(host_sitemap_urls(self._robots.rules(host_id).sitemaps, origin))
        read.files = {}
        read.pending = read.reader.next_url()
        return read.pending is not None

    async def fetch(self, host_id: int, downloader: LocalDownloader, now: float, day: float,
                    planner: RevisitPlanner) -> None:
        """Fetch the host's next sitemap file (``now`` on the loop's clock, ``day`` the
        planner's); when it was the last, tell the planner what the read says."""
        read = self._hosts[host_id]
        url, reader = read.pending, read.reader
        assert url is not None and reader is not None
        host = self._registry.host_name(host_id)
        done = await await_answer(downloader.submit, FetchFile(
            sitemap_order(host_id), url, host, downloader.ready_at(host) - now,
            self._robots.rules(host_id).crawl_delay or 0.0, self._settings.sitemaps_max_bytes))
        assert isinstance(done, FileDone)
        self.fetched.append((host_id, day))
        read.files[url] = (day, http_date_seconds(done.date))
        reader.take(url, None if done.status is None else (done.status, done.body))
        read.pending = reader.next_url()
        if read.pending is None:
            self._tell(reader, read.files, planner)
            read.reader, read.due = None, now + self._interval

    def _tell(self, reader: SitemapReader, files: Mapping[str, tuple[float, float | None]],
              planner: RevisitPlanner) -> None:
        """The collection pages a finished read lists: their lastmod (per file, at the
        file's read day) and changefreq."""
        by_file: dict[str, list[tuple[int, float, float]]] = {}
        freq_ids, freq_words = [], []
        for target, via in reader.found():
            url_id = self._ids.get(target)
            if url_id is None:
                continue
            lastmod, changefreq = reader.stated[target]
            day, date = files[via]
            stamp = None if lastmod is None else w3c_datetime(lastmod)
            if stamp is None or date is None:
                by_file.setdefault(via, []).append((url_id, math.nan, 1.0 / _HTTP_DAY))
            else:
                since = max(date - stamp[0], 0.0) / _HTTP_DAY
                by_file.setdefault(via, []).append((url_id, day - since, stamp[1] / _HTTP_DAY))
            if changefreq:
                freq_ids.append(url_id)
                freq_words.append(changefreq)
        for via, rows in by_file.items():
            ids, lastmods, resolution = zip(*rows, strict=True)
            planner.read_sitemap(list(ids), files[via][0], np.array(lastmods),
                                 resolution=np.array(resolution))
        if freq_ids:
            planner.set_changefreq(freq_ids, changefreq_rate(freq_words))
