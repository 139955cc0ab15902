"""Load a crawl's link graph from the crawl database in one call.

The ``links`` table stores each fetched page's out-links as one little-endian int32
array of destination URL ids (see ``storage/schema.sql``), so the whole edge list is
one ``b"".join`` and one ``np.frombuffer``; every option below is a vectorised mask
over the edge arrays and the CSR matrix is built directly from the (already sorted)
source ids.  No Python loop over edges.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis.graph.captured import (
    ANSWERED,
    CapturedGraph,
    DuplicatePolicy,
    GraphKind,
    check_duplicates,
    check_graph_kind,
)
from webcrawl.analysis.graph.sites import (
    SiteMap,
    SitePolicy,
    canonical_copies,
    check_site_policy,
    detect_sites,
)
from webcrawl.storage.export import EdgeArrays
from webcrawl.storage.reader import CrawlReader, LinkArrays, UrlTable, outcome_code
from webcrawl.storage.records import Outcome

# graph_edges is public but not yet in the package facade (webcrawl.analysis.graph).
__all__ = ["load_graph"]

#: How each graph's links are formed (:meth:`EdgeArrays.policy`, export metadata).
_REDIRECTS = {"pages": "followed: a link to a redirecting URL is a link to the page its "
                       "redirects end at",
              "all": "a redirect is a link to its target"}


def load_graph(
    db_path: str | Path,
    *,
    graph: GraphKind = "pages",
    remote_only: bool = False,
    drop_self_loops: bool = True,
    collapse_duplicates: bool = True,
    follow_nofollow: bool = True,
    links_as_of_seq: int | None = None,
    duplicates: DuplicatePolicy = "collapse",
    sites: SitePolicy = "mirrors",
) -> CapturedGraph:
    """Load the link graph captured by a crawl as a :class:`CapturedGraph`.

    Parameters
    ----------
    db_path : str or Path
        The crawl database (it may still be written by a running crawl; the graph is
        read from one consistent snapshot).
    graph : {"pages", "all"}, default "pages"
        Which graph (see :mod:`webcrawl.analysis.graph.captured`): ``pages``, the fetched pages
        (outcome ``fetched``: HTML pages whose out-links are known) and the links among
        them; ``all``, every discovered URL as a node (the pages, the frontier they
        point to, and URLs that ended with another outcome: errors, redirects, ...).
    remote_only : bool, default False
        Keep only links between pages on different sites (``graph.sites``: hosts, with
        mirrored hosts one site), the variant Najork and Wiener used to discount
        self-endorsement [1]_.
    drop_self_loops : bool, default True
        Drop links from a page to itself.
    collapse_duplicates : bool, default True
        A page linking k times to the same URL gives weight 1; otherwise k.
    follow_nofollow : bool, default True
        Keep ``rel=nofollow`` links; False drops every link that the page marked
        nofollow.
    links_as_of_seq : int, optional
        Read each page's links as they were after the fetch of this crawl sequence
        number (the link history kept by revisits, ``link_versions`` in
        ``schema.sql``).  Default: every page's latest links.
    duplicates : {"collapse", "near", "keep"}, default "collapse"
        Pages whose body repeats, byte for byte, the body of a page fetched earlier
        (the crawl's content-seen test, ``urls.duplicate_of``): ``collapse`` merges each
        into the first page with that body (one node per distinct document; a link to
        a copy is a link to that page; the copy's own out-links are dropped, as the
        crawl did not read them); ``near`` also merges each near copy (a page whose
        text resembles its group leader's, the near-duplicate test, ``urls.near_of``)
        into its leader, the same way (its out-links are dropped too); ``keep`` makes
        every copy its own node, the graph before the tests existed.  Not to be
        confused with ``collapse_duplicates`` (repeated links between two pages).
    sites : {"mirrors", "hosts"}, default "mirrors"
        What "the same site" means for every host-based measure (``graph.sites``):
        ``mirrors``, hosts that serve the same documents are one site
        (:mod:`webcrawl.analysis.graph.sites`); ``hosts``, every host its own site.

    Returns
    -------
    CapturedGraph
        Node ``i`` is the i-th selected URL in URL-id order (``store_ids[i]`` is its
        id); ``crawled`` marks fetched HTML pages; ``fetchable`` the URLs the recorded
        crawl got an HTTP answer for (:data:`webcrawl.analysis.graph.captured.ANSWERED`), plus,
        for URLs without an outcome (an imported graph), those with known out-links;
        ``truncated_pages`` the pages whose links the crawl cut at its per-page cap;
        ``fetch_order``/``fetch_times`` list the fetchable nodes the crawl took, by
        crawl sequence number; ``seeds`` the seed nodes; ``sites``, ``site_names``
        and ``mirrors`` the sites.  A node merged from several copies has the URL,
        URL id (``store_ids``), host and site of its canonical copy (on the largest
        site, on its primary host, then the first URL), whichever copy the crawl
        fetched first.

    Raises
    ------
    ConfigError
        ``graph`` is not one of ``pages`` and ``all``, ``duplicates`` not one of
        ``collapse``, ``near`` and ``keep``, or ``sites`` not one of ``mirrors`` and ``hosts``.
    StoreError
        The file is missing or not a crawl database.
    SchemaVersionError
        The file was written by another schema version.

    Notes
    -----
    Redirects are stored as a link from the redirecting URL to its target, so they
    are edges of the ``all`` graph.  In the ``pages`` graph the redirecting URL is not
    a page: a link to it counts as a link to the page its recorded redirects end at
    (chains followed; a redirect ending off the pages drops the link), so a site that
    links through redirects (``http`` to ``https``, a moved folder) keeps its structure.
    Collapsing duplicates is the same kind of mapping, applied after the redirects: a
    link's target, resolved through its redirects, is replaced by the first page
    holding its body, before self-loops are dropped, so a page linking to its own copy
    (``http://a/`` to ``https://a/``) gets a self-loop, dropped with
    ``drop_self_loops`` exactly as a link to itself is (and kept without it).  In the
    ``all`` graph, where redirects stay nodes, duplicates are collapsed too.
    Time and memory are O(n + m) for n URLs and m links; about a second for 10M links
    (``benchmarks/bench_load_graph.py``).  Per-link arrays are int32 below 2**31 URLs:
    about 5 bytes a stored link at the peak (the stored array, overwritten by the
    kept destinations, and the merge's one-byte values), and the adjacency keeps 4 (its
    int32 indices) when duplicates are collapsed: its values are then a read-only
    zero-stride view of one ``1.0`` (``adjacency.data.strides == (0,)``; copy the
    array before writing into it), 12 when they are summed.

    References
    ----------
    .. [1] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality
       pages", WWW 2001.

    Examples
    --------
    >>> graph = load_graph("crawl.db", remote_only=True)  # doctest: +SKIP
    >>> graph.describe()  # doctest: +SKIP
    'graph of fetched pages: 1,000 pages, 7,512 links'
    """
    include_frontier = check_graph_kind(graph) == "all"
    policy = check_duplicates(duplicates)
    collapse = policy != "keep"
    site_policy = check_site_policy(sites)
    with CrawlReader(db_path) as reader, reader.snapshot():
        table = reader.urls()
        host_ids, host_names = reader.hosts()
        links = reader.links_csr(links_as_of_seq)
        nofollow = None if follow_nofollow else reader.nofollow_csr(links_as_of_seq)
        order_ids, _, order_times = reader.fetch_order()
        seed_ids = reader.seeds()
        cut_ids = np.array([c[0] for c in reader.link_cuts()], dtype=np.int64)
        dup_ids, dup_of = reader.duplicates()
        near_ids, near_of, _ = reader.near_duplicates()

    crawled_all = table.has_outcome(Outcome.FETCHED)
    fetchable_all = _fetchable(table.outcome, table.ids, links.src)
    keep = np.ones(len(table), dtype=bool) if include_frontier else crawled_all
    top = int(max(table.ids.max(initial=-1), links.dst.max(initial=-1),
                  links.src.max(initial=-1)))
    body = (collapse_map(dup_ids, dup_of, table.ids[crawled_all], top + 2)
            if dup_ids.size else None)
    # Every URL's host index only when there are copies to compare (sites, canonical
    # copies); otherwise the nodes' alone, as before (4 bytes a URL less at the peak).
    url_hosts = None if body is None else _host_index(table.host_ids, host_ids)
    site_map = (SiteMap.identity(host_names, site_policy) if url_hosts is None or body is None
                else _site_map(site_policy, table.ids, url_hosts, crawled_all, body,
                               host_names, links, top))
    original = body if collapse else None
    if policy == "near" and near_ids.size:
        # A copy of a near copy is merged into the near copy's leader.
        near = collapse_map(near_ids, near_of, table.ids[crawled_all], top + 2)
        original = near if original is None else near[original]
    if original is not None:
        keep = keep & (original[table.ids] == table.ids)
    node_ids = table.ids[keep]
    n = int(node_ids.size)
    # URL id -> node index (-1: not a node); int32 when it fits, as every per-link array
    # below then is (4 bytes a link instead of 8: the loader sets the memory peak).
    pos = np.full(top + 2, -1, dtype=_index_dtype(top + 2))
    pos[node_ids] = np.arange(n)
    # Each node's row of the URL table: its canonical copy's when it stands for several.
    rows = np.flatnonzero(keep)
    if original is not None and url_hosts is not None:
        rows = _canonical_rows(rows, table, url_hosts, original, site_map)
    node_hosts = (_host_index(table.host_ids[rows], host_ids) if url_hosts is None
                  else url_hosts[rows])
    node_sites = site_map.host_site[node_hosts] if site_map.host_site.size else node_hosts

    # In the pages graph a link to a URL that redirected is a link to the page the
    # redirects led to (as the crawl followed them); the all graph keeps the redirects.
    # None: every URL id stands for itself (no redirect followed, no copy merged).
    final = (None if include_frontier
             else _redirect_targets(table.ids[table.has_outcome(Outcome.REDIRECT)], links, top))
    collapsed = near_collapsed = 0
    if original is not None:
        # a link to a copy (or a redirect to one) is to its page
        final = original if final is None else original[final]
        collapsed = int(np.count_nonzero(crawled_all) - np.count_nonzero(crawled_all & keep))
        if body is not None:
            exact = int(np.count_nonzero(crawled_all & (body[table.ids] != table.ids)))
            collapsed, near_collapsed = exact, collapsed - exact
        else:
            collapsed, near_collapsed = 0, collapsed
    indices, counts = _edges(links, pos, node_sites, nofollow, top, final, n,
                             remote_only=remote_only, drop_self_loops=drop_self_loops)
    del links, final  # the stored links: the CSR arrays below replace them
    adjacency = _csr(indices, counts, n, collapse_duplicates=collapse_duplicates)
    del indices

    crawled = crawled_all[keep]
    fetchable = fetchable_all[keep]
    fo_nodes = pos[order_ids].astype(np.int64)
    fo_keep = fo_nodes >= 0
    fo_keep[fo_keep] = fetchable[fo_nodes[fo_keep]]
    seeds = pos[seed_ids if original is None else original[seed_ids]].astype(np.int64)
    urls = table.urls if rows.size == len(table) and original is None else table.urls.take(rows)
    return CapturedGraph(
        adjacency=adjacency,
        urls=urls,
        hosts=node_hosts,
        host_names=host_names,
        crawled=crawled,
        fetch_order=fo_nodes[fo_keep],
        fetch_times=order_times[fo_keep],
        seeds=seeds[seeds >= 0],
        store_ids=table.ids[rows],
        kind=graph,
        outcomes=table.outcome[keep],
        fetchable=fetchable,
        truncated_pages=int(np.count_nonzero(np.isin(node_ids, cut_ids))),
        duplicates_collapsed=collapsed,
        near_duplicates_collapsed=near_collapsed,
        sites=node_sites.astype(np.int32),
        site_names=site_map.names,
        mirrors=site_map.mirrors,
    )


def _site_map(policy: SitePolicy, ids: np.ndarray, url_hosts: np.ndarray, pages: np.ndarray,
              body: np.ndarray, host_names: list[str], links: LinkArrays,
              top: int) -> SiteMap:
    """The crawl's sites (:func:`webcrawl.analysis.graph.sites.detect_sites`) from its
    fetched pages, their hosts and their bodies (the content-seen test's
    ``duplicate_of``; a crawl without duplicates has one site per host)."""
    if policy == "hosts":
        return SiteMap.identity(host_names, policy)
    page_ids = ids[pages]
    host_of = np.zeros(top + 2, dtype=np.int32)
    host_of[ids] = url_hosts

    def inlinks(host_site: np.ndarray) -> np.ndarray:
        """Stored links into each host from pages of other sites (a pass by chunks)."""
        counts = np.zeros(len(host_names), dtype=np.int64)
        for lo, hi in _page_chunks(links.indptr):
            first, last = int(links.indptr[lo]), int(links.indptr[hi])
            src = np.repeat(host_site[host_of[links.src[lo:hi]]],
                            np.diff(links.indptr[lo:hi + 1]))
            dst = host_of[links.dst[first:last]]
            counts += np.bincount(dst[src != host_site[dst]], minlength=counts.size)
        return counts

    return detect_sites(url_hosts[pages], body[page_ids], host_names, inlinks=inlinks)


def _canonical_rows(rows: np.ndarray, table: UrlTable, url_hosts: np.ndarray,
                    original: np.ndarray, site_map: SiteMap) -> np.ndarray:
    """``rows`` (the URL-table rows of the nodes, first copies) with each merged node's
    row replaced by its canonical copy's (:func:`.sites.canonical_copies`)."""
    copies = np.flatnonzero(original[table.ids] != table.ids)
    if copies.size == 0 or site_map.host_site.size == 0:
        return rows
    firsts = np.searchsorted(table.ids, np.unique(original[table.ids[copies]]))
    members = np.concatenate([copies, firsts])
    url_rank = np.empty(members.size, dtype=np.int64)
    url_rank[table.urls.take(members).sort_indices()] = np.arange(members.size)
    on_primary = site_map.is_primary()[url_hosts[members]]
    site = site_map.host_site[url_hosts]
    site_pages = np.bincount(site[table.has_outcome(Outcome.FETCHED)],
                             minlength=len(site_map.names))[site[members]]
    canonical = members[canonical_copies(original[table.ids[members]], url_rank, on_primary,
                                         site_pages)]
    out = rows.copy()
    at = np.searchsorted(rows, firsts)   # the first copies are nodes
    out[at] = canonical[copies.size:]
    return out


def collapse_map(dup_ids: np.ndarray, dup_of: np.ndarray, page_ids: np.ndarray,
                 size: int) -> np.ndarray:
    """URL id -> the id of the node it collapses into (itself unless a duplicate page).

    Parameters
    ----------
    dup_ids, dup_of : ndarray of int64
        The pages recorded as duplicates and the pages whose bodies they repeat
        (``CrawlReader.duplicates``).
    page_ids : ndarray of int64
        The ids of the fetched pages: a duplicate collapses only into a page (a copy
        of a page that a later visit lost stays its own node).
    size : int
        Length of the map (above every URL id).

    Returns
    -------
    ndarray of int64, length ``size``

    Notes
    -----
    The crawler records every duplicate against the first page holding its body, never
    against another duplicate; chains (from a database edited by hand) are followed by
    pointer jumping, O(log chain) vectorised steps, and a cycle leaves its pages as
    they are.  O(size).

    References
    ----------
    .. [1] A. Heydon and M. Najork, "Mercator: A scalable, extensible Web crawler",
       World Wide Web 2(4), 1999 (the content-seen test).
    """
    original = np.arange(size, dtype=np.int64)
    is_page = np.zeros(size, dtype=bool)
    is_page[page_ids] = True
    ok = is_page[dup_ids] & is_page[dup_of] & (dup_ids != dup_of)
    original[dup_ids[ok]] = dup_of[ok]
    for _ in range(64):
        nxt = original[original]
        if np.array_equal(nxt, original):
            break
        original = nxt
    stuck = original[original] != original  # a cycle: leave its pages alone
    original[stuck] = np.flatnonzero(stuck)
    return original


def _index_dtype(size: int) -> type[np.signedinteger]:
    """int32 for indexes below ``size`` when it fits, else int64."""
    return np.int32 if size < np.iinfo(np.int32).max else np.int64


def _fetchable(outcome: np.ndarray, ids: np.ndarray, link_src: np.ndarray) -> np.ndarray:
    """The fetchable-set rule (:data:`ANSWERED`; no outcome but known out-links)."""
    answered = np.isin(outcome, [outcome_code(o) for o in ANSWERED])
    return answered | ((outcome < 0) & np.isin(ids, link_src))


def _host_index(url_host_ids: np.ndarray, host_ids: np.ndarray) -> np.ndarray:
    """Position of each URL's host id in the (ascending) host id list, as int32."""
    if host_ids.size == 0:
        return np.zeros(url_host_ids.size, dtype=np.int32)
    idx = np.searchsorted(host_ids, url_host_ids)
    return np.minimum(idx, host_ids.size - 1).astype(np.int32)


def _redirect_targets(redirect_ids: np.ndarray, links: LinkArrays,
                      top: int) -> np.ndarray | None:
    """URL id -> the id its recorded redirects end at (itself if it did not redirect);
    None when no URL redirected.

    A redirect's one stored link is its target; chains are followed by pointer jumping
    (O(log chain) vectorised steps); a redirect loop ends on a redirect, never a page.
    """
    if redirect_ids.size == 0:
        return None
    final = np.arange(top + 2, dtype=_index_dtype(top + 2))
    rows = np.searchsorted(links.src, redirect_ids)
    ok = rows < links.src.size
    ok[ok] = links.src[rows[ok]] == redirect_ids[ok]
    rows = rows[ok]
    rows = rows[np.diff(links.indptr)[rows] > 0]
    final[links.src[rows]] = links.dst[links.indptr[rows]]
    for _ in range(64):  # 2**64 hops: every finite chain
        nxt = final[final]
        if np.array_equal(nxt, final):
            break
        final = nxt
    return final


#: Stored links mapped and filtered at once by the loader (bounds its temporaries).
_LINK_CHUNK = 1 << 24


def _edges(links: LinkArrays, pos: np.ndarray, node_sites: np.ndarray,
           nofollow: LinkArrays | None, top: int, final: np.ndarray | None, n: int, *,
           remote_only: bool, drop_self_loops: bool) -> tuple[np.ndarray, np.ndarray]:
    """The kept links' destination nodes grouped by source node, and each node's count.

    Pages are in URL-id order and node indexes follow URL ids, so the kept links come
    out sorted by source: they are written, a chunk of pages at a time, over the
    stored array ``links.dst`` itself (its content is lost: the caller drops it); no
    per-link array of sources is built for the whole graph.  ``final`` maps each URL id
    to the one its links go to (None: itself).

    Each link's destination is looked up in ``final`` and ``pos``, two reads at random
    places in arrays of the URLs; when both are the identity (an imported graph of
    ids ``0..top``, every one a node) they are skipped: on a 298M-link graph of 18.5M
    nodes the two lookups were most of the loader's time.  Each chunk's counts are
    added page by page, not through an array of every node a chunk.
    """
    marked = None
    width = np.int64(top + 1)
    if nofollow is not None and nofollow.dst.size:
        marked = np.sort(nofollow.edge_src * width + nofollow.dst)
    # The kept links overwrite the stored array itself (a chunk's kept links never
    # outrun its start): no second array of the whole size.  A read-only or
    # differently typed stored array gets a new one.
    writable = links.dst.flags.writeable and links.dst.dtype == pos.dtype
    out = links.dst if writable else np.empty(links.dst.size, dtype=pos.dtype)
    counts = np.zeros(n, dtype=np.int64)
    page_nodes = pos[links.src]
    # Node ids are URL ids when the nodes are exactly the URLs 0..top (sorted, unique).
    same_ids = (n == top + 1 and (n == 0 or (int(pos[0]) == 0 and int(pos[top]) == top))
                and links.dst.dtype == pos.dtype)
    filled = 0
    for lo, hi in _page_chunks(links.indptr):
        first, last = int(links.indptr[lo]), int(links.indptr[hi])
        per_page = np.diff(links.indptr[lo:hi + 1])
        src = np.repeat(page_nodes[lo:hi], per_page)
        ids = links.dst[first:last] if final is None else final[links.dst[first:last]]
        dst = ids if same_ids else pos[ids]
        mask = (src >= 0) & (dst >= 0)
        if marked is not None:
            keys = np.repeat(links.src[lo:hi], per_page) * width + links.dst[first:last]
            mask &= ~np.isin(keys, marked)
        if drop_self_loops:
            mask &= src != dst
        if remote_only:
            mask &= node_sites[np.maximum(src, 0)] != node_sites[np.maximum(dst, 0)]
        kept = dst[mask]
        out[filled:filled + kept.size] = kept
        filled += kept.size
        del kept, dst, ids, src
        # Each page's kept links: its links less the dropped ones (few, in a simple graph).
        dropped = np.flatnonzero(~mask)
        page = np.searchsorted(np.cumsum(per_page), dropped, side="right")
        kept_per_page = per_page - np.bincount(page, minlength=per_page.size)
        nodes = page_nodes[lo:hi]
        counts[nodes[nodes >= 0]] += kept_per_page[nodes >= 0]  # distinct pages
    return out[:filled], counts


def _page_chunks(indptr: np.ndarray) -> list[tuple[int, int]]:
    """Page ranges of about ``_LINK_CHUNK`` links (one page more if it alone has more)."""
    pages = indptr.size - 1
    cuts = np.searchsorted(indptr, np.arange(_LINK_CHUNK, int(indptr[-1]), _LINK_CHUNK))
    bounds = np.unique(np.concatenate([[0], np.minimum(cuts, pages), [pages]]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))


def _csr(indices: np.ndarray, counts: np.ndarray, n: int, *,
         collapse_duplicates: bool) -> sp.csr_array:
    """CSR adjacency from destinations grouped by source; duplicates summed (or
    collapsed).

    Collapsed (every weight 1), the values are one read-only float64 ``1.0`` seen
    through a zero-stride view: the adjacency costs its int32 indices alone (4 bytes
    a link instead of 12), the duplicates being merged over one-byte values.  Summed,
    the float64 values are allocated after the stored links are released.
    """
    index_dtype = _index_dtype(max(n, indices.size))
    indptr = np.zeros(n + 1, dtype=index_dtype)
    np.cumsum(counts, out=indptr[1:])
    if indices.base is not None and indices.size < indices.base.size // 2:
        indices = indices.copy()  # most links dropped: do not keep the whole buffer
    indices = indices.astype(index_dtype, copy=False)
    if not collapse_duplicates:
        adjacency = sp.csr_array((np.ones(indices.size, dtype=np.float64), indices, indptr),
                                 shape=(n, n))
        adjacency.sum_duplicates()
        return adjacency
    links = sp.csr_array((np.ones(indices.size, dtype=bool), indices, indptr), shape=(n, n))
    links.sum_duplicates()  # sorts each row and merges repeats (bool sum: or)
    del indices, indptr
    ones = np.broadcast_to(np.float64(1.0), (links.indices.size,))
    adjacency = sp.csr_array((ones, links.indices, links.indptr), shape=(n, n))
    adjacency.has_canonical_format = True  # sorted and merged above
    return adjacency


def graph_edges(db_path: str | Path, graph: GraphKind = "pages",
                duplicates: DuplicatePolicy = "collapse") -> EdgeArrays:
    """The links of the graph the analyses measure, as URL-id arrays for export.

    The graph :func:`load_graph` builds with its defaults (``graph`` ``pages``: the
    fetched pages; ``all``: every discovered URL): self-loops dropped, duplicate links
    collapsed, nofollow links kept.  A link is flagged ``nofollow`` when the graph
    loaded with ``follow_nofollow=False`` lacks it (every link it stands for was
    marked nofollow).  Links are in source order, then destination order.

    Parameters
    ----------
    db_path : str or Path
        The crawl database.
    graph : {"pages", "all"}, default "pages"
        Which graph (see :func:`load_graph`).
    duplicates : {"collapse", "near", "keep"}, default "collapse"
        Duplicate pages collapsed into the first page with their body, near copies
        too into their leaders, or kept (see :func:`load_graph`).

    Returns
    -------
    webcrawl.storage.export.EdgeArrays
        ``src``, ``dst`` (URL ids), ``nofollow``, ``nodes`` (the URL ids of every
        node, isolated ones included) and the graph's policies.

    Examples
    --------
    >>> edges = graph_edges("crawl.db")  # doctest: +SKIP
    >>> edges.policy()["duplicates"]  # doctest: +SKIP
    'collapsed'
    """
    loaded = load_graph(db_path, graph=graph, duplicates=duplicates)
    adj = loaded.adjacency
    rows = np.repeat(np.arange(loaded.n, dtype=np.int64), np.diff(adj.indptr))
    cols = adj.indices.astype(np.int64)
    with CrawlReader(db_path) as reader:
        marked = reader.nofollow_csr().dst.size > 0
    nofollow = np.zeros(rows.size, dtype=bool)
    if marked:
        followed = load_graph(db_path, graph=graph, follow_nofollow=False,
                              duplicates=duplicates).adjacency
        kept = np.repeat(np.arange(loaded.n, dtype=np.int64), np.diff(followed.indptr))
        nofollow = ~np.isin(rows * loaded.n + cols, kept * loaded.n + followed.indices)
    ids = loaded.store_ids
    return EdgeArrays(src=ids[rows], dst=ids[cols], nofollow=nofollow, nodes=ids,
                      graph=check_graph_kind(graph), duplicates="collapsed",
                      self_loops="dropped", redirects=_REDIRECTS[graph],
                      duplicate_pages=_duplicate_pages(loaded, duplicates))


def _duplicate_pages(graph: CapturedGraph, duplicates: DuplicatePolicy) -> str:
    """The export metadata's account of duplicate pages."""
    if duplicates == "keep":
        return "kept: a page whose body repeats an earlier page's is its own node"
    text = (f"collapsed: {graph.duplicates_collapsed:,} pages whose body repeats an earlier "
            "page's merged into that page")
    if duplicates == "near":
        text += (f"; {graph.near_duplicates_collapsed:,} near copies (text resembling a "
                 "group leader's) merged into their leaders")
    return text
