"""The captured link graph: what every analysis function works on.

A :class:`CapturedGraph` is a scipy CSR adjacency over node indices ``0..n-1`` plus the
arrays that map nodes back to the crawl (URL, host, crawled or frontier, fetch order).
Analysis functions take the CSR (``graph.adjacency``) or the whole object and return
numpy arrays indexed by node; URLs are attached only at the edge (CLI, reports).

``load_graph`` (in :mod:`analysis.graph.loader`) builds one from a crawl database;
:meth:`CapturedGraph.from_edges` builds one from arrays, for tests and generated graphs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["CapturedGraph"]


@dataclass(frozen=True, eq=False)
class CapturedGraph:
    """A directed link graph with its crawl metadata.

    Attributes
    ----------
    adjacency : scipy.sparse.csr_array, shape (n, n), float64
        ``adjacency[i, j]`` is the number of links from node i to node j (1 after
        collapsing duplicates).
    urls : sequence of str, length n
        The normalised URL of each node.
    hosts : ndarray of int32, length n
        Host index of each node, into ``host_names``.
    host_names : sequence of str
        Host key (``host[:port]``) of each host index.
    crawled : ndarray of bool, length n
        True for pages that were fetched (their out-links are known); False for the
        frontier (discovered, never fetched).
    fetch_order : ndarray of int64
        Node indices of the crawled pages in crawl sequence order (first fetch first).
    fetch_times : ndarray of float64
        Fetch time (seconds since the epoch) of each entry of ``fetch_order``.
    seeds : ndarray of int64
        Node indices of the crawl's seed URLs.
    store_ids : ndarray of int64
        The crawl database's URL id of each node (``-1`` for generated graphs).
    """

    adjacency: sp.csr_array
    urls: Sequence[str]
    hosts: np.ndarray
    host_names: Sequence[str]
    crawled: np.ndarray
    fetch_order: np.ndarray
    fetch_times: np.ndarray
    seeds: np.ndarray
    store_ids: np.ndarray
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        """Number of nodes."""
        return int(self.adjacency.shape[0])

    @property
    def m(self) -> int:
        """Number of stored links (non-zero entries of the adjacency)."""
        return int(self.adjacency.nnz)

    def index_of(self, url: str) -> int:
        """Node index of a (normalised) URL; raises KeyError if absent."""
        if not self._index:
            self._index.update((u, i) for i, u in enumerate(self.urls))
        return self._index[url]

    @classmethod
    def from_edges(
        cls,
        src: Sequence[int] | np.ndarray,
        dst: Sequence[int] | np.ndarray,
        n: int | None = None,
        *,
        urls: Sequence[str] | None = None,
        hosts: Sequence[int] | np.ndarray | None = None,
        crawled: Sequence[bool] | np.ndarray | None = None,
        fetch_order: Sequence[int] | np.ndarray | None = None,
        seeds: Sequence[int] | np.ndarray | None = None,
        collapse_duplicates: bool = True,
    ) -> CapturedGraph:
        """Build a graph from edge arrays (for tests and generated graphs).

        Defaults: URLs ``node:{i}``, every node on host 0, every node crawled, fetch
        order ``0..n-1``, seed 0.
        """
        src_a = np.asarray(src, dtype=np.int64)
        dst_a = np.asarray(dst, dtype=np.int64)
        if n is None:
            n = int(max(src_a.max(initial=-1), dst_a.max(initial=-1)) + 1)
        adj = sp.csr_array(
            (np.ones(src_a.size, dtype=np.float64), (src_a, dst_a)), shape=(n, n)
        )
        adj.sum_duplicates()
        if collapse_duplicates:
            adj.data[:] = 1.0
        host_arr = np.zeros(n, dtype=np.int32) if hosts is None else np.asarray(hosts, np.int32)
        n_hosts = int(host_arr.max(initial=-1)) + 1
        order = np.arange(n) if fetch_order is None else np.asarray(fetch_order, np.int64)
        return cls(
            adjacency=adj,
            urls=list(urls) if urls is not None else [f"node:{i}" for i in range(n)],
            hosts=host_arr,
            host_names=[f"host{h}" for h in range(max(n_hosts, 1))],
            crawled=np.ones(n, bool) if crawled is None else np.asarray(crawled, bool),
            fetch_order=order.astype(np.int64),
            fetch_times=np.arange(order.size, dtype=np.float64),
            seeds=np.asarray([0] if seeds is None else seeds, dtype=np.int64),
            store_ids=np.full(n, -1, dtype=np.int64),
        )
