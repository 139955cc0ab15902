"""Benchmark of the analysis suite on a large crawl graph: load, PageRank, bow-tie, HITS.

Run from the repository root::

    .venv/bin/python benchmarks/bench_analysis.py                  # 1M pages, 10M links
    .venv/bin/python benchmarks/bench_analysis.py --nodes 50000    # quick
    .venv/bin/python benchmarks/bench_analysis.py --networkx --networkx-nodes 200000

The graph is a crawl database written through the real ``CrawlStore``
(``benchmarks/_graphdb.py``; built once in a child process so that its memory does not
count here, then reused).  ``--in-memory`` skips the store and generates the edges with
numpy instead.  Figures printed:

- load time (``webcrawl.analysis.graph.loader.load_graph``), PageRank time and iterations, bow-tie
  time, HITS time and iterations, degree-law time, and the peak resident memory of
  the process (``resource.getrusage``), against the targets (load + PageRank + bow-tie
  under 30 s and 3 GB);
- a bare scipy CSR power iteration run for the same number of iterations (the
  practical floor; target: our PageRank within 1.5x of it);
- with ``--networkx``: ``networkx.pagerank`` at equal accuracy (its rule stops on
  ``L1 < N * tol``, so it gets ``tol = ours / N``) on a graph of ``--networkx-nodes``
  pages (default: the same graph), its graph-building time, and the speed ratio.
"""

from __future__ import annotations

import argparse
import gc
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webcrawl.analysis.graph.bowtie_alg import bowtie  # noqa: E402
from webcrawl.analysis.graph.degree_dist import degree_laws  # noqa: E402
from webcrawl.analysis.graph.hits_alg import hits  # noqa: E402
from webcrawl.analysis.graph.pagerank_alg import pagerank  # noqa: E402

ALPHA = 0.85
TOL = 1e-10


def peak_rss_gb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def timed(label: str, func: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    print(f"  {label} ...", file=sys.stderr, flush=True)
    gc.collect()
    start = time.perf_counter()
    value = func(*args, **kwargs)
    return value, time.perf_counter() - start


def build_db(path: Path, nodes: int, links_per_node: int, seed: int) -> float:
    """Build (or reuse) the crawl database in a child process; return its wall time."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "from benchmarks._graphdb import ensure_graph_db;"
            "ensure_graph_db(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(ROOT), str(path), str(nodes),
                    str(links_per_node), str(seed)], check=True)
    return time.perf_counter() - start


def generated_adjacency(nodes: int, links_per_node: int, seed: int) -> sp.csr_array:
    """In-memory stand-in: half the links within blocks of 1000 pages, half Zipf-popular."""
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(nodes), links_per_node)
    local = rng.random(src.size) < 0.5
    block = (src // 1000) * 1000
    near = block + rng.integers(0, 1000, src.size) % np.minimum(1000, nodes - block)
    far = ((rng.zipf(1.6, src.size) - 1) * 2654435761 + 12345) % nodes
    dst = np.where(local, near, far)
    keep = src != dst
    adj = sp.csr_array((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(nodes, nodes))
    adj.sum_duplicates()
    adj.data[:] = 1.0
    return adj


def bare_power_iteration(adj: sp.csr_array, iterations: int) -> tuple[np.ndarray, float, float]:
    """The floor: textbook scipy PageRank, a fixed number of iterations, no checks."""
    start = time.perf_counter()
    n = adj.shape[0]
    out = np.asarray(adj.sum(axis=1)).ravel()
    dangling = out == 0
    inv = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, out))
    p_t = sp.csr_array(sp.diags_array(inv) @ adj).T.tocsr()
    built = time.perf_counter()
    x = np.full(n, 1.0 / n)
    for _ in range(iterations):
        x = ALPHA * (p_t @ x) + (ALPHA * x[dangling].sum() + 1.0 - ALPHA) / n
    end = time.perf_counter()
    return x, built - start, end - built


def networkx_pagerank(adj: sp.csr_array) -> tuple[np.ndarray, float, float, float]:
    """networkx at our accuracy: returns scores, build time, run time, peak RSS after."""
    import networkx as nx

    n = adj.shape[0]
    start = time.perf_counter()
    graph = nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph)
    built = time.perf_counter()
    result = nx.pagerank(graph, alpha=ALPHA, tol=TOL / n, max_iter=10_000)
    end = time.perf_counter()
    scores = np.array([result[i] for i in range(n)])
    return scores, built - start, end - built, peak_rss_gb()


def subgraph(adj: sp.csr_array, nodes: int) -> sp.csr_array:
    return sp.csr_array(adj[:nodes][:, :nodes])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--links-per-node", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", type=Path, help="database path (default bench-out/graph-N.db)")
    parser.add_argument("--in-memory", action="store_true",
                        help="generate the graph with numpy instead of the crawl store")
    parser.add_argument("--networkx", action="store_true", help="also time networkx.pagerank")
    parser.add_argument("--networkx-nodes", type=int, default=None,
                        help="run networkx on the subgraph of the first N pages")
    args = parser.parse_args()

    print(f"bench_analysis: {args.nodes:,} pages x {args.links_per_node} links, "
          f"seed {args.seed}", file=sys.stderr)
    rows: list[tuple[str, str]] = []
    if args.in_memory:
        adj, t_load = timed("generate (in memory)", generated_adjacency, args.nodes,
                            args.links_per_node, args.seed)
        source = "generated in memory (numpy), NOT through the store"
    else:
        from webcrawl.analysis.graph.loader import load_graph

        db = args.db or ROOT / "bench-out" / f"graph-{args.nodes}.db"
        if args.nodes == 1_000_000 and args.links_per_node == 10 and args.db is None:
            db = ROOT / "bench-out" / "graph-1m.db"  # shared with the loader benchmark
        t_build = build_db(db, args.nodes, args.links_per_node, args.seed)
        rows.append(("database build or reuse (child process)", f"{t_build:.1f} s"))
        graph, t_load = timed("load_graph", load_graph, db)
        adj = graph.adjacency
        source = f"crawl database {db} written through CrawlStore"
    n, m = adj.shape[0], adj.nnz
    rows.append(("graph", f"{n:,} nodes, {m:,} links ({source})"))
    rows.append(("load", f"{t_load:.2f} s"))

    pr, t_pr = timed("pagerank", pagerank, adj, ALPHA, tol=TOL)
    rows.append(("PageRank", f"{t_pr:.2f} s, {pr.iterations} iterations "
                             f"({t_pr / pr.iterations * 1e3:.1f} ms/iteration), "
                             f"residual {pr.residual:.2g}"))
    print("  bare scipy power iteration ...", file=sys.stderr, flush=True)
    bare, t_bare_build, t_bare_loop = bare_power_iteration(adj, pr.iterations)
    rows.append(("bare scipy CSR power iteration",
                 f"{t_bare_build + t_bare_loop:.2f} s ({t_bare_build:.2f} s build + "
                 f"{t_bare_loop:.2f} s loop, "
                 f"{t_bare_loop / pr.iterations * 1e3:.1f} ms/iteration)"))
    rows.append(("PageRank / bare", f"{t_pr / (t_bare_build + t_bare_loop):.2f}x "
                                    f"(target <= 1.5x); vs bare loop only "
                                    f"{t_pr / t_bare_loop:.2f}x; "
                                    f"L1 difference {np.abs(pr.scores - bare).sum():.1e}"))

    bt, t_bt = timed("bowtie", bowtie, adj)
    fractions = ", ".join(f"{k} {100 * v:.1f}%" for k, v in bt.fractions.items())
    rows.append(("bow-tie", f"{t_bt:.2f} s ({fractions}; {bt.n_scc:,} SCCs, "
                            f"{bt.n_wcc:,} WCCs)"))
    core = t_load + t_pr + t_bt
    rss_core = peak_rss_gb()
    rows.append(("load + PageRank + bow-tie",
                 f"{core:.2f} s (target < 30 s), peak RSS {rss_core:.2f} GB (target < 3 GB)"))

    hi, t_hits = timed("hits", hits, adj, tol=TOL)
    rows.append(("HITS", f"{t_hits:.2f} s, {hi.iterations} iterations"))
    laws, t_deg = timed("degree laws", degree_laws, adj)
    fits = "; ".join(f"{name} alpha {f.alpha:.2f} +- {f.sigma:.2f} (x_min {f.x_min})"
                     for name, f in (("in", laws.in_fit), ("out", laws.out_fit))
                     if f is not None)
    rows.append(("degree laws", f"{t_deg:.2f} s ({fits})"))
    rows.append(("peak RSS, all of the above", f"{peak_rss_gb():.2f} GB"))

    if args.networkx:
        size = args.networkx_nodes or n
        sub = adj if size >= n else subgraph(adj, size)
        ours, t_ours = timed(f"pagerank on {size:,} nodes", pagerank, sub, ALPHA, tol=TOL)
        (nx_scores, t_nx_build, t_nx, rss_nx), _ = timed(f"networkx on {size:,} nodes",
                                                          networkx_pagerank, sub)
        rows.append((f"networkx.pagerank ({size:,} nodes, {sub.nnz:,} links, "
                     f"tol {TOL:g}/N)",
                     f"{t_nx:.2f} s + {t_nx_build:.2f} s to build its graph; ours "
                     f"{t_ours:.2f} s: {t_nx / t_ours:.1f}x faster "
                     f"({(t_nx + t_nx_build) / t_ours:.1f}x with the build); "
                     f"L1 difference {np.abs(nx_scores - ours.scores).sum():.1e}; "
                     f"peak RSS after networkx {rss_nx:.2f} GB"))

    print()
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
