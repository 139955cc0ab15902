"""Time ``load_graph`` on a 1M-node / 10M-link crawl stored through the real store.

Builds (or reuses) ``bench-out/graph-1m.db`` with :func:`benchmarks._graphdb.ensure_graph_db`
(other benchmarks reuse the same file), times ``load_graph`` with the default options
and with ``remote_only``, and, for comparison in the same run, loading the same links
from a one-row-per-link table (``edges(src, dst)``, built once next to it) into the
same CSR matrix.  Prints the times and the peak RSS.

    .venv/bin/python benchmarks/bench_load_graph.py                 # 1M nodes
    .venv/bin/python benchmarks/bench_load_graph.py --nodes 100000  # quick
"""

from __future__ import annotations

import argparse
import resource
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webcrawl.analysis.graph.loader import load_graph
from webcrawl.storage.reader import CrawlReader

from benchmarks._graphdb import ensure_graph_db

ROW_BATCH = 1_000_000


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _ensure_rows_db(graph_db: Path, rows_db: Path) -> int:
    """A copy of the links as one row per link; returns the link count."""
    with CrawlReader(graph_db) as reader:
        links = reader.links_csr()
    m = int(links.dst.size)
    if rows_db.exists():
        conn = sqlite3.connect(rows_db)
        have = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
        conn.close()
        if have == m:
            return m
        rows_db.unlink()
    print(f"building {rows_db} ({m:,} rows) ...", file=sys.stderr)
    conn = sqlite3.connect(rows_db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE edges (src INTEGER NOT NULL, dst INTEGER NOT NULL)")
    src = links.edge_src
    for start in range(0, m, ROW_BATCH):
        part = zip(src[start:start + ROW_BATCH].tolist(),
                   links.dst[start:start + ROW_BATCH].tolist(), strict=True)
        conn.executemany("INSERT INTO edges VALUES (?, ?)", part)
    conn.commit()
    conn.close()
    return m


def _load_rows(rows_db: Path, n: int) -> sp.csr_array:
    conn = sqlite3.connect(f"{rows_db.absolute().as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT src, dst FROM edges").fetchall()
    finally:
        conn.close()
    arr = np.array(rows, dtype=np.int64).reshape(-1, 2)
    arr = arr[arr[:, 0] != arr[:, 1]]  # the same options as load_graph's defaults
    adj = sp.csr_array((np.ones(arr.shape[0]), (arr[:, 0], arr[:, 1])), shape=(n, n))
    adj.sum_duplicates()
    adj.data[:] = 1.0
    return adj


def _best(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--links-per-node", type=int, default=10)
    parser.add_argument("--db", type=Path, default=None,
                        help="default: bench-out/graph-1m.db (or graph-<nodes>.db)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    db = args.db or Path("bench-out") / (
        "graph-1m.db" if args.nodes == 1_000_000 else f"graph-{args.nodes}.db")
    t = time.perf_counter()
    ensure_graph_db(db, args.nodes, args.links_per_node, seed=1)
    print(f"database {db} ready in {time.perf_counter() - t:.1f} s "
          f"({db.stat().st_size / 1e6:,.0f} MB)")

    t_load, graph = _best(lambda: load_graph(db), args.repeat)
    print(f"load_graph (defaults):     {t_load:6.2f} s  n={graph.n:,} m={graph.m:,}")
    t_remote, remote = _best(lambda: load_graph(db, remote_only=True), args.repeat)
    print(f"load_graph (remote_only):  {t_remote:6.2f} s  m={remote.m:,}")
    with CrawlReader(db) as reader:
        t_links, links = _best(reader.links_csr, args.repeat)
        t_urls, _ = _best(reader.urls, args.repeat)
    print(f"  of which links_csr:      {t_links:6.2f} s  ({links.dst.size:,} links)")
    print(f"  of which urls():         {t_urls:6.2f} s")
    print(f"peak RSS so far: {_rss_mb():,.0f} MB")

    rows_db = db.with_name(db.stem + "-rows.db")
    m = _ensure_rows_db(db, rows_db)
    t_rows, adj = _best(lambda: _load_rows(rows_db, graph.n), 1)
    same = (adj != graph.adjacency).nnz == 0 if adj.shape == graph.adjacency.shape else False
    print(f"row-per-link table, same CSR: {t_rows:6.2f} s  ({m:,} rows, "
          f"{rows_db.stat().st_size / 1e6:,.0f} MB; identical graph: {same})")
    print(f"BLOB layout speed-up over row-per-link (links only): {t_rows / t_links:.1f}x; "
          f"whole load_graph vs rows-only: {t_rows / t_load:.1f}x")
    print(f"peak RSS: {_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
