"""A generated crawl database for benchmarks, written through the real ``CrawlStore``.

``ensure_graph_db(path, nodes, links_per_node, seed)`` builds (or reuses) a crawl of
``nodes`` pages on ``nodes // PAGES_PER_HOST`` hosts, every page fetched in id order
with ``links_per_node`` out-links: half to pages of its own host, half to pages drawn
from a Zipf-like popularity law (so in-degrees are heavy-tailed, as on the web).
Reuse is keyed by the parameters, stored in the file's ``meta`` table.

Other benchmarks (PageRank, bow-tie) import it::

    from benchmarks._graphdb import ensure_graph_db
    db = ensure_graph_db("bench-out/graph-1m.db", 1_000_000, 10, seed=1)
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

__all__ = ["DEFAULT_DB", "PAGES_PER_HOST", "ensure_graph_db", "write_graph"]

#: The shared 1M-node / 10M-link database.
DEFAULT_DB = Path("bench-out/graph-1m.db")
PAGES_PER_HOST = 1000
#: Pages generated (and enqueued) per chunk; the producer awaits the store between chunks.
CHUNK = 1000
#: Zipf exponent of the popularity law for the non-local half of the links.
ZIPF_A = 1.6


def _params(nodes: int, links_per_node: int, seed: int) -> str:
    return json.dumps({"nodes": nodes, "links_per_node": links_per_node, "seed": seed,
                       "generator": "benchmarks._graphdb v1"}, sort_keys=True)


def _existing_params(path: Path) -> str | None:
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'bench_graph'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def ensure_graph_db(path: str | Path, nodes: int = 1_000_000, links_per_node: int = 10,
                    seed: int = 1) -> Path:
    """Return ``path``, building the database first unless it exists with these parameters."""
    path = Path(path)
    if path.exists() and _existing_params(path) == _params(nodes, links_per_node, seed):
        return path
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"building {path}: {nodes:,} pages x {links_per_node} links ...", file=sys.stderr)
    asyncio.run(write_graph(path, nodes, links_per_node, seed))
    return path


def _targets(rng: np.random.Generator, first: int, count: int, nodes: int,
             links_per_node: int) -> np.ndarray:
    """Destination ids (count x links_per_node) for pages first..first+count-1."""
    local = links_per_node // 2
    pages = np.arange(first, first + count)[:, None]
    host_start = (pages // PAGES_PER_HOST) * PAGES_PER_HOST
    host_size = np.minimum(PAGES_PER_HOST, nodes - host_start)
    near = host_start + rng.integers(0, 1 << 30, size=(count, local)) % host_size
    # Zipf ranks mapped through a fixed permutation-free hash so popular pages spread
    # over hosts.
    ranks = rng.zipf(ZIPF_A, size=(count, links_per_node - local)) - 1
    far = (ranks * 2654435761 + 12345) % nodes
    return np.concatenate([near, far], axis=1).astype(np.int64)


async def write_graph(path: Path, nodes: int, links_per_node: int, seed: int,
                      on_slice: Callable[[int, float], None] | None = None,
                      slice_pages: int = 100_000) -> None:
    """Write the generated crawl as a crawler would: per page one fetch row, its links
    and its outcome, new URLs as they are discovered; ``on_slice(pages, seconds)`` is
    called after every ``slice_pages`` pages (committed)."""
    rng = np.random.default_rng(seed)
    store = await CrawlStore.open(path)
    try:
        n_hosts = (nodes + PAGES_PER_HOST - 1) // PAGES_PER_HOST
        for h in range(n_hosts):
            store.add_host(HostRow(h, f"h{h}.test", robots_status=404))
        store.set_meta("bench_graph", _params(nodes, links_per_node, seed))
        store.set_meta("seeds", json.dumps(["http://h0.test/p0"]))
        seen = np.zeros(nodes, dtype=bool)
        depth = np.zeros(nodes, dtype=np.int32)
        store.add_url(UrlRow(0, "http://h0.test/p0", 0, 0, -1))
        seen[0] = True
        t_slice = time.perf_counter()
        now = time.time()
        for first in range(0, nodes, CHUNK):
            count = min(CHUNK, nodes - first)
            targets = _targets(rng, first, count, nodes, links_per_node)
            for k in range(count):
                page = first + k
                if not seen[page]:  # not linked before its turn: discovered "late"
                    seen[page] = True
                    store.add_url(UrlRow(page, _url(page), page // PAGES_PER_HOST, 1, page - 1))
                dsts = targets[k]
                for d in dsts[~seen[dsts]].tolist():
                    if not seen[d]:
                        seen[d] = True
                        depth[d] = depth[page] + 1
                        store.add_url(UrlRow(d, _url(d), d // PAGES_PER_HOST, int(depth[d]),
                                             page))
                store.add_fetch(FetchRecord(page, page, now + page * 1e-3,
                                            now + page * 1e-3 + 5e-4, Outcome.FETCHED, 200,
                                            "text/html", 10_000, f"{page:032x}",
                                            strategy="bfs", priority=0.0, rank=0))
                store.add_links(page, dsts.tolist())
                store.set_outcome(page, Outcome.FETCHED, page)
            await store.drain()
            await asyncio.sleep(0)
            done = first + count
            if on_slice is not None and (done % slice_pages == 0 or done == nodes):
                await store.flush()
                t = time.perf_counter()
                on_slice(done, t - t_slice)
                t_slice = t
    finally:
        await store.aclose()


def _url(page: int) -> str:
    return f"http://h{page // PAGES_PER_HOST}.test/p{page}"
