"""Sites: hosts that serve the same documents are one site (mirror detection).

Every host-based measure asks whether two pages are on "the same site": links within a
site are dropped from trawling for cores (Kumar et al.'s nepotistic links) and from
remote-links PageRank (Najork and Wiener), diverse cores count fans on distinct sites,
larger-sites-first counts pending pages per site, a simulated crawl keeps one request
in flight per site.  A host name alone gives the wrong answer when a site is served
under two names (a mirror, an ``http``/``https`` or ``www.`` alias): after the
content-seen test merges each copy into the copy fetched first, the mirror's own
navigation links run between the two names, and which copy came first depends on the
crawl's order.  So:

**Two hosts are mirrors** when they share identical page bodies (the crawl's
content-seen test, ``urls.duplicate_of``) for at least :data:`MIRROR_MIN_SHARE` of the
smaller host's fetched pages and at least :data:`MIRROR_MIN_SHARED` documents.  A
**site** is a group of hosts linked by that relation (connected components), or a
host on its own.  This is the mirror detection Bharat and Broder ran on host pairs
before measuring the web [1]_, and Kumar et al. before trawling [2]_, read from the
bodies the crawl already compared byte for byte (no shingles: a mirror that rewrites
its pages is not found).

**A site's name** is its *primary* host: the one the rest of the web links to most
(links from pages of other sites), then the one with the most fetched pages, then the
first name in alphabetical order.

**A page that stands for several copies** (a node merged by ``duplicates="collapse"``)
is shown as, and belongs to the host and site of, its *canonical copy*: the copy on the
site with the most fetched pages (a page copied to an unrelated host, or a mirror
too small to be recognised, stays with the site it belongs to), on its primary host,
then the first URL in alphabetical order.  None of this depends on
which copy the crawl fetched first, so neither does any measure that uses the sites.

Everything here is a function of the set of fetched pages, their hosts and their
bodies (and, for the primary's in-links, the stored links): the same for any order
in which a crawl fetched the same pages.

References
----------
.. [1] K. Bharat and A. Broder, "Mirror, mirror on the Web: a study of host pairs with
   replicated content", WWW 1999.
.. [2] R. Kumar, P. Raghavan, S. Rajagopalan and A. Tomkins, "Trawling the Web for
   emerging cyber-communities", WWW 1999 (duplicates and mirrors removed before
   trawling; diverse cores).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis._sparse import as_adjacency
from webcrawl.storage.errors import ConfigError

__all__ = [
    "MIRROR_MIN_SHARE",
    "MIRROR_MIN_SHARED",
    "SITE_POLICIES",
    "Mirror",
    "SiteMap",
    "SitePolicy",
    "canonical_copies",
    "check_site_policy",
    "detect_sites",
    "drop_same_site_links",
]

#: Share of the smaller host's fetched pages whose bodies the other host also serves,
#: from which two hosts are mirrors.  A half: a host that is mostly a copy of another
#: (a full mirror, or a mirror of one section) is one site with it, while two sites
#: sharing a few boilerplate pages stay apart.
MIRROR_MIN_SHARE = 0.5
#: Fewest shared documents for two hosts to be mirrors, so that two small hosts with
#: one identical page each (a default server page) are not merged.
MIRROR_MIN_SHARED = 3

#: What "the same site" means: ``mirrors`` (hosts serving the same documents are one
#: site, the default) or ``hosts`` (every host its own site: the host name alone).
SitePolicy = Literal["mirrors", "hosts"]
SITE_POLICIES: tuple[SitePolicy, ...] = ("mirrors", "hosts")


def check_site_policy(policy: str) -> SitePolicy:
    """Return ``policy`` if it is one of :data:`SITE_POLICIES`, else a ConfigError."""
    if policy not in SITE_POLICIES:
        raise ConfigError(f"unknown sites policy {policy!r}: choose 'mirrors' (hosts "
                          "serving the same documents are one site) or 'hosts'")
    return policy


@dataclass(frozen=True)
class Mirror:
    """One group of mirrored hosts (a site served under more than one host name).

    Attributes
    ----------
    hosts : tuple of str
        The group's host names, the primary first (it names the site), then the others
        in alphabetical order.
    pages : tuple of int
        Fetched pages (copies included) of each host, in the order of ``hosts``.
    shared : int
        Documents (distinct bodies) with copies on at least two of the hosts.
    """

    hosts: tuple[str, ...]
    pages: tuple[int, ...]
    shared: int

    def describe(self) -> str:
        """``a.test = b.test (120 shared documents)``, for titles and logs."""
        return f"{' = '.join(self.hosts)} ({self.shared:,} shared documents)"

    def info(self) -> dict[str, Any]:
        """The group as a JSON-ready dict."""
        return {"hosts": list(self.hosts), "pages": list(self.pages), "shared": self.shared}


@dataclass(frozen=True)
class SiteMap:
    """Which site each host belongs to.

    Attributes
    ----------
    host_site : ndarray of int32
        Site index of each host index.
    names : list of str
        Name of each site: its primary host's name.
    primary : ndarray of int64
        Host index of each site's primary host.
    mirrors : tuple of Mirror
        The sites of more than one host, largest first.
    policy : {"mirrors", "hosts"}
        How the sites were formed.
    """

    host_site: np.ndarray
    names: list[str]
    primary: np.ndarray
    mirrors: tuple[Mirror, ...] = ()
    policy: SitePolicy = "mirrors"
    _is_primary: np.ndarray = field(default_factory=lambda: np.empty(0, bool), repr=False)

    @classmethod
    def identity(cls, host_names: Sequence[str], policy: SitePolicy = "hosts") -> SiteMap:
        """Every host its own site."""
        n = len(host_names)
        return cls(np.arange(n, dtype=np.int32), list(host_names),
                   np.arange(n, dtype=np.int64), (), policy)

    def is_primary(self) -> np.ndarray:
        """Boolean mask over hosts: the primary host of its site."""
        if self._is_primary.size != self.host_site.size:
            mask = np.zeros(self.host_site.size, dtype=bool)
            mask[self.primary] = True
            object.__setattr__(self, "_is_primary", mask)
        return self._is_primary


def detect_sites(
    page_hosts: np.ndarray,
    page_bodies: np.ndarray,
    host_names: Sequence[str],
    *,
    inlinks: Callable[[np.ndarray], np.ndarray] | None = None,
    min_share: float = MIRROR_MIN_SHARE,
    min_shared: int = MIRROR_MIN_SHARED,
) -> SiteMap:
    """Group mirrored hosts into sites (see the module docstring for the rule).

    Parameters
    ----------
    page_hosts : ndarray of int
        Host index of every fetched page, copies included.
    page_bodies : ndarray of int
        A body id of every fetched page: equal for pages with identical bodies (the
        crawl's first page holding the body, ``duplicate_of`` or the page itself).
    host_names : sequence of str
        Name of each host index.
    inlinks : callable, optional
        ``inlinks(host_site)``: for each host, the links to it from pages of other
        sites, given the site of each host; used to choose a group's primary host
        (called only when a group has more than one host).  Default: not used.
    min_share, min_shared
        The mirror rule (:data:`MIRROR_MIN_SHARE`, :data:`MIRROR_MIN_SHARED`).

    Returns
    -------
    SiteMap

    Examples
    --------
    Hosts 0 and 1 serve the same three documents, host 2 one of them too:

    >>> hosts = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    >>> bodies = np.array([0, 1, 2, 0, 1, 2, 0, 7, 8, 9])
    >>> sites = detect_sites(hosts, bodies, ["b.test", "a.test", "c.test"])
    >>> sites.host_site.tolist(), sites.names
    ([0, 0, 1], ['a.test', 'c.test'])
    >>> sites.mirrors[0].describe()
    'a.test = b.test (3 shared documents)'

    Notes
    -----
    O(p log p) for p fetched pages, plus one pass over the links when ``inlinks`` is
    called; a document with copies on k hosts adds k (k - 1) / 2 host pairs.
    """
    n_hosts = len(host_names)
    hosts = np.asarray(page_hosts, dtype=np.int64)
    bodies = np.asarray(page_bodies, dtype=np.int64)
    if hosts.shape != bodies.shape:
        raise ConfigError("page_hosts and page_bodies need one entry per page")
    if not 0 <= min_share <= 1 or min_shared < 1:
        raise ConfigError("min_share must be in [0, 1] and min_shared at least 1")
    pages = np.bincount(hosts, minlength=n_hosts)
    a, b, shared = _shared_documents(hosts, bodies, n_hosts)
    mirror = (shared >= min_shared) & (shared >= min_share * np.minimum(pages[a], pages[b]))
    a, b, shared = a[mirror], b[mirror], shared[mirror]
    if a.size == 0:
        return SiteMap.identity(host_names, "mirrors")
    # Imported here: csgraph (and scipy.linalg with it) costs 0.2 CPU-s at import, and
    # most crawls have no mirror to group.
    from scipy.sparse.csgraph import connected_components

    pairs = sp.coo_array((np.ones(a.size), (a, b)), shape=(n_hosts, n_hosts))
    _, group = connected_components(pairs, directed=False)
    links_in = np.zeros(n_hosts, dtype=np.int64)
    if inlinks is not None:
        links_in = np.asarray(inlinks(group.astype(np.int32)), dtype=np.int64)
    name_rank = np.empty(n_hosts, dtype=np.int64)
    name_rank[np.argsort(np.asarray(host_names, dtype=object), kind="stable")] = \
        np.arange(n_hosts)
    # Within a group: most in-links from other sites, most pages, first name.
    order = np.lexsort((name_rank, -pages, -links_in, group))
    first = np.r_[True, group[order][1:] != group[order][:-1]]
    primary_of_group = np.empty(int(group.max()) + 1, dtype=np.int64)
    primary_of_group[group[order][first]] = order[first]
    # Sites numbered by their primary host's index: host order, as without mirrors.
    primary = np.sort(primary_of_group)
    site_of_group = np.empty_like(primary_of_group)
    site_of_group[np.argsort(primary_of_group)] = np.arange(primary.size)
    host_site = site_of_group[group].astype(np.int32)
    return SiteMap(host_site, [host_names[h] for h in primary.tolist()], primary,
                   _mirrors(host_site, primary, pages, hosts, bodies, host_names, name_rank),
                   "mirrors")


def _shared_documents(hosts: np.ndarray, bodies: np.ndarray,
                      n_hosts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Host pairs (a < b) with the number of documents each pair both serves."""
    if hosts.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    held = np.unique(bodies * np.int64(n_hosts) + hosts)  # (body, host), body-major
    body, host = held // n_hosts, held % n_hosts
    start = np.flatnonzero(np.r_[True, body[1:] != body[:-1]])
    size = np.diff(np.r_[start, body.size])
    multi = size > 1
    if not multi.any():
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    # Every pair (i, j), i < j, of memberships of one body: i runs over each body's
    # members, j over the members after it.
    group_size = np.repeat(size, size)
    group_start = np.repeat(start, size)
    pos = np.arange(body.size)
    after = group_start + group_size - pos - 1
    i = np.repeat(pos, after)
    j = i + 1 + (np.arange(int(after.sum())) - np.repeat(np.cumsum(after) - after, after))
    keys, counts = np.unique(host[i] * np.int64(n_hosts) + host[j], return_counts=True)
    return keys // n_hosts, keys % n_hosts, counts.astype(np.int64)


def _mirrors(host_site: np.ndarray, primary: np.ndarray, pages: np.ndarray,
             hosts: np.ndarray, bodies: np.ndarray, host_names: Sequence[str],
             name_rank: np.ndarray) -> tuple[Mirror, ...]:
    """The sites of more than one host, with the documents two of their hosts hold."""
    n_hosts, n_sites = np.int64(host_site.size), primary.size
    held = np.unique(bodies * n_hosts + hosts)              # (body, host)
    site_keys = (held // n_hosts) * np.int64(n_sites) + host_site[held % n_hosts]
    keys, copies = np.unique(site_keys, return_counts=True)  # (body, site): its hosts
    shared = np.bincount(keys[copies > 1] % n_sites, minlength=n_sites)
    sizes = np.bincount(host_site, minlength=n_sites)
    out = []
    for site in np.flatnonzero(sizes > 1).tolist():  # one pass per mirror group
        members = np.flatnonzero(host_site == site)
        rest = members[members != primary[site]]
        ordered = [int(primary[site]), *rest[np.argsort(name_rank[rest])].tolist()]
        out.append(Mirror(tuple(host_names[h] for h in ordered),
                          tuple(int(pages[h]) for h in ordered), int(shared[site])))
    return tuple(sorted(out, key=lambda m: (-m.shared, m.hosts)))


def canonical_copies(group: np.ndarray, url_rank: np.ndarray, on_primary: np.ndarray,
                     site_pages: np.ndarray | None = None) -> np.ndarray:
    """For each copy, the position of its group's canonical copy.

    Parameters
    ----------
    group : ndarray of int
        The group (body) of each copy.
    url_rank : ndarray of int
        Each copy's URL rank in alphabetical order (any order-preserving key).
    on_primary : ndarray of bool
        Whether each copy is on its site's primary host.
    site_pages : ndarray of int, optional
        Fetched pages of each copy's site.  Default: all equal.

    Returns
    -------
    ndarray of int64
        For each copy, the index (into these arrays) of its group's canonical copy: on
        the largest site (a page copied from a site to an unrelated one stays with the
        site it belongs to), on a primary host, then the first URL.

    Examples
    --------
    >>> canonical_copies(np.array([5, 5, 9]), np.array([1, 0, 2]),
    ...                  np.array([True, False, False])).tolist()
    [0, 0, 2]
    >>> canonical_copies(np.array([5, 5]), np.array([1, 0]), np.array([True, True]),
    ...                  np.array([100, 1])).tolist()
    [0, 0]
    """
    size = np.zeros(len(group), dtype=np.int64) if site_pages is None else \
        np.asarray(site_pages, dtype=np.int64)
    order = np.lexsort((url_rank, ~np.asarray(on_primary, dtype=bool), -size, group))
    g = np.asarray(group)[order]
    first = np.r_[True, g[1:] != g[:-1]] if g.size else np.empty(0, dtype=bool)
    head = order[np.maximum.accumulate(np.where(first, np.arange(g.size), 0))]
    out = np.empty(g.size, dtype=np.int64)
    out[order] = head
    return out


def drop_same_site_links(adjacency: Any, sites: Any) -> sp.csr_array:
    """The adjacency without the links between two pages of one site.

    Parameters
    ----------
    adjacency : scipy sparse array or CapturedGraph, shape (n, n)
        The link graph; weights are kept.
    sites : array_like of int, shape (n,)
        The site (or host) of each node: ``graph.sites``.

    Returns
    -------
    scipy.sparse.csr_array
        The remote links (Najork and Wiener) only, same shape.

    Examples
    --------
    >>> A = sp.csr_array((np.ones(3), ([0, 0, 1], [1, 2, 2])), shape=(3, 3))
    >>> drop_same_site_links(A, [0, 0, 1]).nnz
    2
    """
    adj = sp.csr_array(as_adjacency(adjacency))
    site = np.asarray(sites)
    if site.shape != (adj.shape[0],):
        raise ConfigError(f"sites must have length {adj.shape[0]}")
    src = np.repeat(np.arange(adj.shape[0]), np.diff(adj.indptr))
    keep = site[src] != site[adj.indices]
    return sp.csr_array((adj.data[keep], (src[keep], adj.indices[keep])), shape=adj.shape)
