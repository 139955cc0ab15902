"""The crawl's URL and host tables: one owner for every per-URL and per-host field.

A :class:`CrawlRegistry` gives each URL the crawl meets a dense id (0, 1, 2, ... in
discovery order) and each host (``host[:port]``, :func:`webcrawl.crawler.urls.host_key`) a
dense id.  It keeps, per URL: the URL, its link depth, its host and the redirect hops
that led to it; per host: the name and the scheme its robots.txt is fetched with (a
host's politeness clock is its downloader's, :mod:`webcrawl.crawler.politeness`).

Every path that meets URLs registers them here -- the crawl engine, the revisit loop's
link history and the WARC import -- and writes their ``urls`` and ``hosts`` rows with
:meth:`CrawlRegistry.record`, so ids are given and rows written one way.  A resume (or
a revisit of a stored crawl) loads the stored rows back with :meth:`CrawlRegistry.load`.
Memory per URL is a few compact array slots (:mod:`webcrawl.crawler.seen`,
:mod:`~webcrawl.crawler.url_texts`, :mod:`~webcrawl.crawler.columns`): the URL-seen
test on 64-bit fingerprints (about 12 bytes), the URL text's offset in a side file (4),
the depth (2; at most :data:`MAX_DEPTH`) and the host (4); the URL strings themselves
are in the side file and the database, not in memory.  :meth:`CrawlRegistry.id_of` is
a dict probe, a binary search per sorted run and, on a fingerprint hit, one ``pread``
that confirms it (none for a URL confirmed lately: :mod:`~webcrawl.crawler.seen`);
:meth:`url` one ``pread``.  :meth:`CrawlRegistry.add_many` looks up and registers a
page's link targets at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from pathlib import Path

import numpy as np
from webcrawl.crawler.columns import Column
from webcrawl.crawler.seen import UrlSeen
from webcrawl.crawler.url_texts import UrlTexts
from webcrawl.crawler.urls import host_key
from webcrawl.storage.records import Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

__all__ = ["CrawlRegistry", "Registered", "RegisteredBatch"]

#: Deepest link depth a URL can have (its depth is held in 2 bytes).
MAX_DEPTH = (1 << 16) - 1


@dataclass(frozen=True, slots=True)
class Registered:
    """A URL just added by :meth:`CrawlRegistry.add`."""

    url_id: int
    host_id: int
    hostport: str
    #: the URL's host was met for the first time
    new_host: bool


@dataclass(slots=True)
class RegisteredBatch:
    """A page's link targets just looked up and registered by :meth:`CrawlRegistry.add_many`."""

    #: the id of every given URL, in the given order (``int64``)
    ids: np.ndarray
    #: positions (in the given URLs) of the new ones; they got ids ``first_id``, ``+1``...
    new: list[int]
    first_id: int
    #: host id of each new URL (``int32``), its ``host[:port]``, and whether the host
    #: was met for the first time with it
    host_ids: np.ndarray
    hostports: list[str]
    new_hosts: list[bool]
    #: the new URLs, in the order of their ids
    urls: list[str]

    def registered(self, k: int) -> Registered:
        """The :class:`Registered` of the ``k``-th new URL."""
        return Registered(self.first_id + k, int(self.host_ids[k]), self.hostports[k],
                          self.new_hosts[k])


class CrawlRegistry:
    """Every URL and host of one crawl, by dense id (see the module docstring)."""

    def __init__(self, spill_dir: str | Path | None = None) -> None:
        #: URL strings, in a side file in ``spill_dir`` (None: the temporary directory)
        self._urls = UrlTexts(spill_dir)
        self._url_id = UrlSeen(self._urls.__getitem__)
        self._depth = Column(np.uint16)
        self._url_host = Column(np.int32)
        self._hops: dict[int, int] = {}  # only URLs reached through redirects
        self._host_id: dict[str, int] = {}
        self._names: list[str] = []
        self._scheme: list[str] = []

    # -- URLs ---------------------------------------------------------------------
    def __len__(self) -> int:
        """Number of URLs."""
        return len(self._urls)

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self._url_id.get(url) is not None

    def id_of(self, url: str) -> int | None:
        """The id of a known URL, else None."""
        return self._url_id.get(url)

    def url(self, url_id: int) -> str:
        return self._urls[url_id]

    def depth(self, url_id: int) -> int:
        return int(self._depth[url_id])

    def host_of(self, url_id: int) -> int:
        return int(self._url_host[url_id])

    def hops(self, url_id: int) -> int:
        """Redirect hops that led to ``url_id`` (0 unless it is a redirect target)."""
        return self._hops.get(url_id, 0)

    def set_hops(self, url_id: int, hops: int) -> None:
        self._hops[url_id] = hops

    def add(self, url: str, depth: int) -> Registered:
        """Give a new (normalised, absolute) URL the next id; its host too if new."""
        _check_depth(depth)
        hostport = host_key(url)
        host_id = self._host_id.get(hostport)
        new_host = host_id is None
        if host_id is None:
            host_id = self._add_host(hostport, url[: url.index(":")])
        url_id = len(self._urls)
        self._url_id.add(url, url_id)
        self._urls.append(url)
        self._depth.append(depth)
        self._url_host.append(host_id)
        return Registered(url_id, host_id, hostport, new_host)

    def add_many(self, urls: Sequence[str], depth: int) -> RegisteredBatch:
        """The ids of a page's link targets (normalised, absolute), the unknown ones
        added at ``depth`` as :meth:`add` would, one after another in the given order
        (a URL given twice is added once, at its first place).

        One fingerprint pass and one vectorised search per sorted run for the batch
        (:meth:`UrlSeen.add_batch`), then the new URLs' texts, depths and hosts
        appended at once.
        """
        _check_depth(depth)
        first_id = len(self._urls)
        ids, new = self._url_id.add_batch(urls, first_id)
        fresh = list(urls) if len(new) == len(urls) else [urls[k] for k in new]
        hostports = _host_keys(fresh)
        host_id = self._host_id
        hosts = list(map(host_id.get, hostports, repeat(-1)))
        new_hosts = [False] * len(fresh)
        if -1 in hosts:
            for j, hp in enumerate(hostports):
                if hosts[j] < 0:
                    known = host_id.get(hp)
                    if known is None:
                        known = self._add_host(hp, fresh[j][: fresh[j].index(":")])
                        new_hosts[j] = True
                    hosts[j] = known
        self._urls.extend(fresh)
        self._depth.extend([depth] * len(fresh))
        self._url_host.extend(hosts)
        host_ids = np.array(hosts, dtype=np.int32)
        return RegisteredBatch(ids, new, first_id, host_ids, hostports, new_hosts, fresh)

    def record(self, store: CrawlStore, new: Registered, found_by: int,
               outcome: Outcome | None = None) -> None:
        """Write the rows of a URL :meth:`add` just gave an id (and of its host, if new):
        found by fetch ``found_by`` (-1: a seed), with ``outcome`` if it is already
        settled (``out_of_scope``)."""
        if new.new_host:
            store.add_host(HostRow(new.host_id, new.hostport))
        store.add_url(UrlRow(new.url_id, self._urls[new.url_id], new.host_id,
                             self._depth[new.url_id], found_by, outcome, None))

    def record_batch(self, store: CrawlStore, batch: RegisteredBatch, depth: int,
                     found_by: int, outcomes: Sequence[Outcome | None]) -> None:
        """:meth:`record` for each URL :meth:`add_many` just added at ``depth``, in
        order, ``outcomes[k]`` that of the ``k``-th: the rows of its new hosts, then the
        URLs' rows at once."""
        if True in batch.new_hosts:
            for j, new_host in enumerate(batch.new_hosts):
                if new_host:
                    store.add_host(HostRow(int(batch.host_ids[j]), batch.hostports[j]))
        store.add_new_urls(batch.first_id, batch.urls, batch.host_ids.tolist(), depth,
                           found_by, outcomes)

    def register(self, store: CrawlStore, url: str, depth: int, found_by: int) -> int:
        """The id of ``url``; an unseen URL is added and its rows written."""
        known = self._url_id.get(url)
        if known is not None:
            return known
        new = self.add(url, depth)
        self.record(store, new, found_by)
        return new.url_id

    # -- hosts --------------------------------------------------------------------
    def register_host(self, store: CrawlStore, url: str) -> tuple[int, bool]:
        """The id of ``url``'s host, added (and its row written) if unseen; and whether
        it was new."""
        hostport = host_key(url)
        known = self._host_id.get(hostport)
        if known is not None:
            return known, False
        host_id = self._add_host(hostport, url[: url.index(":")])
        store.add_host(HostRow(host_id, hostport))
        return host_id, True

    def host_id(self, hostport: str) -> int | None:
        """The id of a known host (``host[:port]``), else None."""
        return self._host_id.get(hostport)

    @property
    def nbytes(self) -> int:
        """Memory held by the per-URL tables (hosts not counted)."""
        return (self._urls.nbytes + self._url_id.nbytes + self._depth.nbytes
                + self._url_host.nbytes + 100 * len(self._hops))

    def spill(self) -> None:
        """Hold less: write the buffered URL text out, merge recent fingerprints."""
        self._urls.flush()
        self._url_id.merge()

    @property
    def host_count(self) -> int:
        return len(self._names)

    def host_name(self, host_id: int) -> str:
        """The host's ``host[:port]``."""
        return self._names[host_id]

    def host_names(self) -> Iterator[str]:
        """Every host's ``host[:port]``, in id order."""
        return iter(self._names)

    def origin(self, host_id: int) -> str:
        """``scheme://host[:port]`` of the host, with the scheme of its first URL."""
        return f"{self._scheme[host_id]}://{self._names[host_id]}"

    def robots_url(self, host_id: int) -> str:
        return f"{self.origin(host_id)}/robots.txt"

    def _add_host(self, hostport: str, scheme: str) -> int:
        host_id = self._host_id[hostport] = len(self._names)
        self._names.append(hostport)
        self._scheme.append(scheme)
        return host_id

    # -- resume -------------------------------------------------------------------
    def load(self, hosts: Iterable[HostRow], urls: Iterable[UrlRow]) -> None:
        """Load stored rows into an empty registry (ids must be dense, from 0).

        A host's scheme is that of its first stored URL (``http`` if it has none).
        """
        if self._urls or self._names:
            raise RuntimeError("load() needs an empty registry")
        for h in sorted(hosts, key=lambda h: h.id):
            if h.id != len(self._names):
                raise ValueError(f"host ids must be dense: {h.id} after {len(self._names)}")
            self._add_host(h.name, "http")
        rows = list(urls)
        if any(u.id != i for i, u in enumerate(rows)):
            bad = next(i for i, u in enumerate(rows) if u.id != i)
            raise ValueError(f"URL ids must be dense: {rows[bad].id} after {bad}")
        texts = [u.url for u in rows]
        self._urls.extend(texts)
        self._url_id.extend(texts, 0)
        depths = np.fromiter((u.depth for u in rows), np.int64, len(rows))
        if len(depths):
            _check_depth(int(depths.max()))
        self._depth.extend(depths)
        self._url_host.extend(np.fromiter((u.host_id for u in rows), np.int32, len(rows)))
        scheme_known = [False] * len(self._names)
        for u in rows:
            if not scheme_known[u.host_id]:
                scheme_known[u.host_id] = True
                self._scheme[u.host_id] = u.url[: u.url.index(":")]


def _host_keys(urls: list[str]) -> list[str]:
    """:func:`~webcrawl.crawler.urls.host_key` of each URL, without a Python call per
    URL when each is ``scheme://host[:port]...`` (a normalised URL always is): the
    piece between the URL's first ``//`` and the next ``/``."""
    parts = list(map(str.split, urls, repeat("/"), repeat(3)))
    try:
        if not any(map(_SECOND, parts)):  # each URL's first "/" starts "//"
            return list(map(_THIRD, parts))
    except IndexError:  # a URL with fewer than two "/"
        pass
    return list(map(host_key, urls))


_SECOND, _THIRD = itemgetter(1), itemgetter(2)


def _check_depth(depth: int) -> None:
    if not 0 <= depth <= MAX_DEPTH:
        raise ValueError(f"link depth {depth} is outside 0..{MAX_DEPTH:,}, the depths the "
                         "crawl state holds (set scope_max_depth)")
