"""A generated web shaped like a national crawl: thousands of sites of heavy-tailed
sizes, most links inside their site, real-looking page sizes, a few large sites.

Baeza-Yates et al. compared crawl orderings on graphs of national webs (the Chilean and
Greek webs, millions of pages over tens of thousands of sites) [1]_; Cho, Garcia-Molina
and Page on the Stanford web [2]_.  Their graphs are not published; this generator
builds one with the properties their findings turn on (:class:`NationalWebSettings`):

* **site sizes** heavy-tailed: one page each, the rest shared in proportion to Pareto
  weights of tail index ``site_exponent`` (``P(W > w) = w ** -site_exponent``): most
  sites hold tens of pages, a few hold tens of thousands;
* **inside a site** a tree from its home page (each page's parent is an earlier page,
  drawn towards the top: ``floor(i * u**2)``), a link from every page back to its home
  page, and further links with preference for the pages near the top
  (``floor(size * u**3)``);
* **out-degrees**: the tree link, the home link and ``zipf(GAMMA_OUT)`` further links,
  at least ``min_links`` (Broder et al.'s out-degree exponent);
* **link locality**: a share ``locality`` of the further links stays inside the site;
  the rest go to another site picked in proportion to its *popularity*
  (``size ** popularity_exponent`` times a log-normal factor: large sites are linked
  more, not in proportion to their size), to its home page with probability
  ``home_share``, else to a page near its top;
* **page sizes** log-normal (median ``size_median`` bytes, ``size_sigma``), clipped to
  200 B .. 2 MB;
* **seeds**: every site's home page (a national crawl starts from the registry's list
  of domains), or the ``seed_sites`` most popular ones;
* **a previous snapshot** for the historical ordering: the same web with a share
  ``history_change`` of its pages (home pages excepted) not yet born and, of the links
  among the older pages, the same share redrawn inside their site; its PageRank (mean
  1, by URL) is :attr:`NationalWeb.history`.

Everything is drawn from one ``numpy.random.default_rng(seed)`` in a fixed sequence of
whole-array calls, so a seed gives the same web on any machine (tested).

References
----------
.. [1] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country:
   better strategies than breadth-first for web page ordering", WWW 2005.
.. [2] J. Cho, H. Garcia-Molina, L. Page, "Efficient crawling through URL ordering",
   WWW 1998.
.. [3] A. Broder et al., "Graph structure in the Web", WWW 2000 (degree exponents).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.zipf_laws import zipf_degrees
from webcrawl.storage.errors import ConfigError

__all__ = ["NationalWeb", "NationalWebSettings", "national_web"]

#: Broder et al.'s out-degree exponent (as :data:`webcrawl.analysis.ordering.randomweb.GAMMA_OUT`).
_GAMMA_OUT = 2.72


@dataclass(frozen=True)
class NationalWebSettings:
    """The shape of a generated national web (module docstring)."""

    sites: int = 5_000
    pages: int = 1_000_000
    site_exponent: float = 1.1
    min_links: int = 3
    locality: float = 0.9
    popularity_exponent: float = 0.7
    popularity_sigma: float = 1.0
    home_share: float = 0.5
    size_median: float = 15_000.0
    size_sigma: float = 1.0
    seed_sites: int = 0
    history_change: float = 0.2
    seed: int = 0

    def __post_init__(self) -> None:
        if self.sites < 1 or self.pages < self.sites:
            raise ConfigError(f"need 1 <= sites <= pages, got {self.sites} sites and "
                              f"{self.pages} pages")
        if not self.site_exponent > 0.0:
            raise ConfigError(f"site_exponent must be > 0, got {self.site_exponent}")
        for name in ("locality", "home_share", "history_change"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.min_links < 0 or self.seed_sites < 0:
            raise ConfigError("min_links and seed_sites must be >= 0")
        if not (self.size_median > 0 and self.size_sigma >= 0 and self.popularity_sigma >= 0):
            raise ConfigError("size_median must be > 0, size_sigma and popularity_sigma >= 0")


@dataclass(frozen=True)
class NationalWeb:
    """A generated national web.

    Attributes
    ----------
    graph : CapturedGraph
        Every page fetchable, sites ``site{i}.test``, URLs
        ``http://site{i}.test/{j}`` (``j`` = 0 the home page), seeds the home pages.
    sizes : ndarray of float64
        Bytes of each page.
    history : dict
        URL -> PageRank (mean 1) in the previous snapshot.
    settings : NationalWebSettings
    """

    graph: CapturedGraph
    sizes: np.ndarray
    history: dict[str, float] = field(repr=False)
    settings: NationalWebSettings

    def describe(self) -> str:
        """Counts and shape, for titles."""
        per_site = np.bincount(self.graph.sites)
        inside = self._inside_share()
        return (f"generated national web: {self.graph.n:,} pages on {per_site.size:,} "
                f"sites (largest {int(per_site.max()):,}, median "
                f"{float(np.median(per_site)):g}), {self.graph.m:,} links "
                f"({inside:.0%} inside their site), seed {self.settings.seed}")

    def _inside_share(self) -> float:
        coo = self.graph.adjacency.tocoo()
        sites = self.graph.sites
        return float(np.mean(sites[coo.row] == sites[coo.col])) if coo.nnz else 0.0

    def to_dict(self) -> dict[str, Any]:
        per_site = np.bincount(self.graph.sites)
        return {"settings": asdict(self.settings), "pages": self.graph.n,
                "links": self.graph.m, "sites": int(per_site.size),
                "largest_site": int(per_site.max()),
                "median_site": float(np.median(per_site)),
                "links_inside_sites": self._inside_share(),
                "median_page_bytes": float(np.median(self.sizes)),
                "description": self.describe()}


def national_web(settings: NationalWebSettings | None = None) -> NationalWeb:
    """Generate a web shaped like a national crawl (module docstring).

    Parameters
    ----------
    settings : NationalWebSettings, optional

    Returns
    -------
    NationalWeb

    Examples
    --------
    >>> web = national_web(NationalWebSettings(sites=50, pages=2_000, seed=1))
    >>> web.graph.n, int(np.bincount(web.graph.sites).size)
    (2000, 50)
    """
    s = settings or NationalWebSettings()
    rng = np.random.default_rng(s.seed)
    sizes_of_site = _site_sizes(s, rng)
    offset = np.concatenate([[0], np.cumsum(sizes_of_site)[:-1]])
    site = np.repeat(np.arange(s.sites), sizes_of_site)
    local = np.arange(s.pages) - offset[site]
    src, dst = _links(s, rng, site, local, sizes_of_site, offset)
    page_bytes = np.clip(s.size_median * np.exp(s.size_sigma * rng.standard_normal(s.pages)),
                         200.0, 2e6)
    popular = np.argsort(-_popularity(s, rng, sizes_of_site), kind="stable")
    seed_sites = popular if s.seed_sites == 0 else popular[:s.seed_sites]
    names = [f"site{i}.test" for i in range(s.sites)]
    urls = [f"http://{names[i]}/{j}" for i, j in zip(site.tolist(), local.tolist(),
                                                     strict=True)]
    graph = CapturedGraph.from_edges(src, dst, s.pages, urls=urls, hosts=site,
                                     seeds=offset[seed_sites])
    graph = replace(graph, host_names=names, site_names=names)
    history = _history(s, rng, graph, site, local, offset, sizes_of_site)
    return NationalWeb(graph, page_bytes, history, s)


def _site_sizes(s: NationalWebSettings, rng: np.random.Generator) -> np.ndarray:
    """Pages of each site: one each, the rest shared in proportion to Pareto weights
    (tail index ``site_exponent``), the rounding's remainder by largest fractions."""
    weight = rng.pareto(s.site_exponent, s.sites) + 1.0
    share = (s.pages - s.sites) * weight / weight.sum()
    sizes: np.ndarray = 1 + np.floor(share).astype(np.int64)
    rest = s.pages - int(sizes.sum())
    sizes[np.argsort(-(share - np.floor(share)), kind="stable")[:rest]] += 1
    return sizes


def _popularity(s: NationalWebSettings, rng: np.random.Generator,
                sizes: np.ndarray) -> np.ndarray:
    """Each site's weight as a link target from other sites."""
    weight: np.ndarray = sizes.astype(np.float64) ** s.popularity_exponent * np.exp(
        s.popularity_sigma * rng.standard_normal(sizes.size))
    return weight


def _near_top(rng: np.random.Generator, size: np.ndarray, power: float) -> np.ndarray:
    """A local page index in ``[0, size)`` drawn towards 0 (``floor(size * u**power)``)."""
    index: np.ndarray = np.minimum(size - 1, np.floor(size * rng.random(size.size) ** power))
    return index.astype(np.int64)


def _links(s: NationalWebSettings, rng: np.random.Generator, site: np.ndarray,
           local: np.ndarray, sizes: np.ndarray,
           offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tree links, links home and the further links, as (src, dst) arrays."""
    pages = np.arange(s.pages)
    inner = pages[local > 0]
    parent = offset[site[inner]] + np.floor(local[inner] * rng.random(inner.size) ** 2)
    tree = (parent.astype(np.int64), inner)
    home = (inner, offset[site[inner]])
    extra = zipf_degrees(s.pages, _GAMMA_OUT, rng, min_degree=max(1, s.min_links),
                         max_degree=1_000) if s.min_links else np.zeros(s.pages, np.int64)
    src = np.repeat(pages, extra)
    inside = rng.random(src.size) < s.locality
    target_site = site[src].copy()
    pop = _popularity(s, rng, sizes)
    out = ~inside
    target_site[out] = rng.choice(s.sites, size=int(out.sum()), p=pop / pop.sum())
    to_home = out & (rng.random(src.size) < s.home_share)
    target_local = _near_top(rng, sizes[target_site], 3.0)
    target_local[to_home] = 0
    dst = offset[target_site] + target_local
    src, dst = np.concatenate([tree[0], home[0], src]), np.concatenate([tree[1], home[1], dst])
    loop = src == dst
    return src[~loop], dst[~loop]


def _history(s: NationalWebSettings, rng: np.random.Generator, graph: CapturedGraph,
             site: np.ndarray, local: np.ndarray, offset: np.ndarray,
             sizes: np.ndarray) -> dict[str, float]:
    """PageRank (mean 1, by URL) of the previous snapshot (module docstring)."""
    import scipy.sparse as sp
    from webcrawl.analysis.graph.pagerank_alg import pagerank

    old = (rng.random(s.pages) >= s.history_change) | (local == 0)
    coo = graph.adjacency.tocoo()
    keep = old[coo.row] & old[coo.col]
    src, dst = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64)
    redraw = rng.random(src.size) < s.history_change
    dst[redraw] = offset[site[dst[redraw]]] + _near_top(rng, sizes[site[dst[redraw]]], 3.0)
    redrawn_old = old[dst]
    src, dst = src[redrawn_old], dst[redrawn_old]
    ids = np.flatnonzero(old)
    index = np.full(s.pages, -1, dtype=np.int64)
    index[ids] = np.arange(ids.size)
    adj = sp.csr_array((np.ones(src.size), (index[src], index[dst])),
                       shape=(ids.size, ids.size))
    adj.sum_duplicates()
    adj.data[:] = 1.0
    scores = np.asarray(pagerank(adj, 0.85, normalize="mean").scores, dtype=np.float64)
    urls = graph.urls
    return {urls[i]: v for i, v in zip(ids.tolist(), scores.tolist(), strict=True)}
