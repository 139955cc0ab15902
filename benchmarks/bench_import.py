"""Bring-your-own-graph pipeline: ``import edges``, then PageRank, bow-tie and three virtual
orderings on the imported graph, with times and peak memory.

The graph is generated with numpy (:func:`generate`, deterministic by ``--seed``):
``--pages`` pages, ``--links`` links; out-degrees and in-degrees heavy-tailed (Pareto
weights, as on the web), sources in ascending order (as SNAP, LAW and Common Crawl
files are), written as a tab-separated edge list by pyarrow in blocks (not timed;
bounded memory at any size).  Each phase's objects are released before the next
(the graph is loaded once and shared by PageRank, bow-tie and the orderings).
Phases run in one process; peak RSS is the process's maximum
resident set after each phase (``ru_maxrss``), so the last figure is the whole
pipeline's peak.  Each phase prints wall seconds and CPU seconds (all threads of the
process): on a machine shared with other jobs the wall time stretches with the load,
the CPU time much less, so the CPU time is the figure to compare with the goals.

    PYTHONPATH=. python benchmarks/bench_import.py                      # 2M pages, 20M links
    PYTHONPATH=. python benchmarks/bench_import.py --pages 200000 --links 2000000
    PYTHONPATH=. python benchmarks/bench_import.py --pages 10000000 --links 100000000 \
        --edges /tmp/e100.tsv             # keep (or reuse) the generated edge file
    PYTHONPATH=. python benchmarks/bench_import.py --compare 9285148 --rounds 3
    # uk-2002's size and it-2004's (docs/results/scale.md):
    PYTHONPATH=. python benchmarks/bench_import.py --pages 18500000 --links 298000000 \
        --edges /tmp/uk.tsv --dir /tmp
    PYTHONPATH=. python benchmarks/bench_import.py --pages 41300000 --links 1150000000 \
        --edges /tmp/it.tsv --dir /tmp

``--rounds N`` first runs the import alone N times, each in a fresh process (a new
database each time), and prints each run and the median; ``--compare REF`` alternates
those runs with the import of git revision ``REF`` (A/B/A...: on a shared machine the
load drifts, so compare the runs next to each other, and the CPU seconds).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

STRATEGIES = ("bfs", "random", "backlink")
#: One import in a fresh process; prints its figures as JSON (any revision's
#: ``import_edges(edges, db)``).
_IMPORT_ONCE = """
import json, resource, sys, time
from webcrawl.storage.edgelist import import_edges
t, c = time.perf_counter(), time.process_time()
r = import_edges(sys.argv[1], sys.argv[2])
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c,
                  "edges": r.edges, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: Nodes generated (and written) at a time: bounds the generator's memory.
GENERATE_NODES = 1 << 20


def generate(path: Path, pages: int, links: int, seed: int = 0, simple: bool = False) -> None:
    """Write a heavy-tailed edge list: ``links`` links on ``pages`` nodes, deterministic
    by ``seed``.

    Each node draws an out-weight and an in-weight from Pareto laws (shape 1.7 for
    "who links", 1.1 for "who is linked to": in-degrees more skewed than out-degrees,
    as on the web); the out-degrees are a multinomial draw of ``links`` over the
    out-weights, and every link's destination is drawn in proportion to the
    in-weights.  Lines are ``src<TAB>dst``, sources ascending (as SNAP, LAW and
    Common Crawl files are), written by pyarrow ``GENERATE_NODES`` sources at a time:
    memory is a few arrays of ``pages`` plus one block, whatever ``links`` is (the
    1.15-billion-link file needs about 2 GB).  Duplicates and self-loops occur, as in
    published graphs, unless ``simple``: then each source's links are made distinct and
    its self-loop dropped (fewer lines than ``links``: the graph every analysis loads,
    which igraph then needs no ``simplify()`` for), each source's destinations ascending.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    out_w = rng.pareto(1.7, pages) + 1.0
    in_cdf = np.cumsum(rng.pareto(1.1, pages) + 1.0)
    in_cdf /= in_cdf[-1]
    degree = rng.multinomial(links, out_w / out_w.sum())
    del out_w
    schema = pa.schema([("src", pa.int32()), ("dst", pa.int32())])
    options = pacsv.WriteOptions(include_header=False, delimiter="\t")
    with pacsv.CSVWriter(str(path), schema, write_options=options) as writer:
        for lo in range(0, pages, GENERATE_NODES):
            hi = min(pages, lo + GENERATE_NODES)
            src = np.repeat(np.arange(lo, hi, dtype=np.int32), degree[lo:hi])
            # Sorted draws make the search sequential (a random search per link costs a
            # cache miss per step: ten times slower); a permutation then mixes them.
            dst = np.minimum(np.searchsorted(in_cdf, np.sort(rng.random(src.size))), pages - 1)
            dst = dst[rng.permutation(dst.size)]
            if simple:  # all of a source's links are in this block: distinct pairs
                # (np.sort, not np.unique: numpy 2's unique of integers hashes, 30x slower)
                key = np.sort(src.astype(np.int64) * pages + dst)
                keep = np.ones(key.size, bool)
                np.not_equal(key[1:], key[:-1], out=keep[1:])
                key = key[keep]
                src, dst = key // pages, key % pages
                keep = src != dst
                src, dst = src[keep].astype(np.int32), dst[keep]
            writer.write_table(pa.table({"src": src, "dst": dst.astype(np.int32)},
                                        schema=schema))


def import_rounds(edges: Path, work: Path, rounds: int, compare: str | None) -> None:
    """The import alone, ``rounds`` times per revision, alternated, fresh processes."""
    from benchmarks._revision import ROOT, extract

    trees = [("working tree", ROOT)]
    if compare:
        trees.append((compare, extract(compare, work)))
    walls: dict[str, list[float]] = {label: [] for label, _ in trees}
    cpus: dict[str, list[float]] = {label: [] for label, _ in trees}
    for k in range(rounds):
        for label, tree in trees:
            db = work / f"round{k}-{len(walls[label])}-{tree.name}.db"
            out = subprocess.run([sys.executable, "-c", _IMPORT_ONCE, str(edges.resolve()),
                                  str(db.resolve())],
                                 env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree, check=True,
                                 capture_output=True, text=True).stdout
            db.unlink()
            run = json.loads(out.splitlines()[-1])
            walls[label].append(run["wall"])
            cpus[label].append(run["cpu"])
            print(f"import alone, {label:14s} {run['wall']:6.2f} s wall {run['cpu']:6.2f} s CPU "
                  f"{run['edges'] / run['wall']:12,.0f} links/s wall "
                  f"{run['edges'] / run['cpu']:12,.0f} links/CPU-s  peak RSS "
                  f"{run['rss'] / 1024:6,.0f} MB  (load {os.getloadavg()[0]:.1f})", flush=True)
    for label, _ in trees:
        wall, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
        print(f"median of {rounds}, {label:14s} {wall:6.2f} s wall {cpu:6.2f} s CPU")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=2_000_000)
    ap.add_argument("--links", type=int, default=20_000_000)
    ap.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    ap.add_argument("--simple", action="store_true",
                    help="generate without duplicate links or self-loops")
    ap.add_argument("--generate-only", action="store_true",
                    help="write the edge file (--edges) and stop")
    ap.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp one)")
    ap.add_argument("--edges", type=Path, default=None,
                    help="edge file to import: generated there if missing, reused if present")
    ap.add_argument("--rounds", type=int, default=0,
                    help="first import alone this many times, each in a fresh process")
    ap.add_argument("--compare", metavar="REF",
                    help="alternate those imports with git revision REF's (needs --rounds)")
    ap.add_argument("--parallel-orderings", action="store_true",
                    help="replay the three orderings at once, one thread each")
    args = ap.parse_args()

    from webcrawl.analysis.graph import bowtie, load_graph, pagerank
    from webcrawl.analysis.ordering import virtual_crawl
    from webcrawl.storage.edgelist import import_edges

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        edges, db = args.edges or Path(tmp) / "edges.tsv", Path(tmp) / "graph.db"
        t = time.perf_counter()
        if not edges.exists():  # in a child process: its memory is not the pipeline's
            child = multiprocessing.get_context("fork").Process(
                target=generate, args=(edges, args.pages, args.links, args.seed, args.simple))
            child.start()
            child.join()
            if child.exitcode != 0:
                raise SystemExit(f"generating {edges} failed (exit {child.exitcode})")
            print(f"generated {args.links:,} links on {args.pages:,} pages in "
                  f"{time.perf_counter() - t:.1f} s (not counted)")
        if args.generate_only:
            return
        size = edges.stat().st_size / 1e6
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
              f"edge file {edges} ({size:,.0f} MB TSV)")
        if args.rounds:
            import_rounds(edges, Path(tmp), args.rounds, args.compare)
        total = cpu_total = 0.0
        cpu = time.process_time()

        def phase(name: str, seconds: float, extra: str = "") -> None:
            nonlocal total, cpu_total, cpu
            now = time.process_time()
            total += seconds
            cpu_total += now - cpu
            print(f"{name:18s} {seconds:7.2f} s wall {now - cpu:7.2f} s CPU  "
                  f"peak RSS {peak_mb():6,.0f} MB  load {os.getloadavg()[0]:4.1f}  {extra}",
                  flush=True)
            cpu = time.process_time()

        t = time.perf_counter()
        c = time.process_time()
        result = import_edges(edges, db)
        wall, used = time.perf_counter() - t, time.process_time() - c
        phase("import edges", wall,
              f"{result.edges / wall:,.0f} links/s wall, {result.edges / used:,.0f} links/CPU-s "
              f"({result.nodes:,} nodes, {result.pages_with_links:,} with out-links)")
        t = time.perf_counter()
        graph = load_graph(db)
        phase("load graph", time.perf_counter() - t, f"{graph.n:,} nodes, {graph.m:,} links")
        t = time.perf_counter()
        pr = pagerank(graph.adjacency)
        phase("pagerank", time.perf_counter() - t, f"{pr.iterations} iterations")
        del pr
        t = time.perf_counter()
        bt = bowtie(graph.adjacency)
        phase("bow-tie", time.perf_counter() - t,
              f"largest SCC {bt.scc_nodes.size:,} nodes")
        del bt
        if args.parallel_orderings:
            from webcrawl.analysis._compiled import run_parallel

            def replay(name: str) -> str:  # each thread's own wall and CPU seconds
                w, c = time.perf_counter(), time.thread_time()
                size = virtual_crawl(graph, name).order.size
                return (f"virtual {name} {time.perf_counter() - w:.2f} s wall "
                        f"{time.thread_time() - c:.2f} s CPU (its thread), {size:,} pages")
            t = time.perf_counter()
            lines = run_parallel([(replay, (name,)) for name in STRATEGIES])
            phase("virtual, 3 threads", time.perf_counter() - t, "; ".join(lines))
        for name in () if args.parallel_orderings else STRATEGIES:
            t = time.perf_counter()
            crawl = virtual_crawl(graph, name)
            phase(f"virtual {name}", time.perf_counter() - t, f"{crawl.order.size:,} pages")
            del crawl
        print(f"{'whole pipeline':18s} {total:7.2f} s wall {cpu_total:7.2f} s CPU  "
              f"peak RSS {peak_mb():6,.0f} MB  (load average {os.getloadavg()[0]:.1f} now)")
        print(f"database {db.stat().st_size / result.edges:.1f} bytes a link on disk; "
              f"peak RSS {peak_mb() * 2**20 / result.edges:.0f} bytes a link")


if __name__ == "__main__":
    main()
