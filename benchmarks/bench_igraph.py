"""igraph beside us on the same edge file: load + PageRank, time, peak memory, and how
far apart the two PageRank vectors are (L1).

Each side runs in a fresh process (its own peak RSS, ``ru_maxrss``):

* **igraph**: ``Graph.Read_Edgelist(FILE)``, the vertices that no line names dropped
  (igraph makes one vertex per id up to the largest), then ``simplify()`` (our loader
  collapses duplicate links and drops self-loops), then ``pagerank()`` (PRPACK,
  damping 0.85, dangling mass spread uniformly as ours).  With ``--simple`` (a file
  without duplicate links or self-loops: ``bench_import.py --simple`` writes one) no
  ``simplify()`` and no ``delete_vertices`` (each builds another copy of the graph):
  igraph ranks every id up to the largest, and its vector restricted to the ids the
  file names, divided by its sum, is compared.  That restriction is exact: a vertex
  without links is dangling and has no in-links, so the random surfer only passes
  through it on a uniform jump and leaves by another; the chain watched on the other
  vertices is the one of the graph without it (a censored Markov chain, whose
  stationary law is the restriction, renormalised).  The igraph process runs under
  an address-space limit (``--igraph-limit-gb``, default 20): past it igraph's
  allocation fails and the process ends, instead of the machine running short.  With
  ``--igraph-limit-gb 0`` there is no limit and the process asks to be the kernel's
  first choice when memory runs out (``oom_score_adj`` 1000): the limit counts address
  space, and ``Read_Edgelist`` grows its edge vector by doubling, so up to half of that
  vector is reserved but never touched (about 4.8 GB at uk-2002's size).
* **webcrawl**: ``import edges`` into a new database (or ``--db`` an imported one),
  ``load_graph(graph="all")`` (every node of the file) and ``pagerank`` (tol 1e-10).

Node ``i`` is the ``i``-th smallest id of the file on both sides.

    PYTHONPATH=. python benchmarks/bench_igraph.py --edges /tmp/uk.tsv [--db /tmp/uk.db]
    PYTHONPATH=. python benchmarks/bench_igraph.py --edges /tmp/uk.tsv --simple  # no simplify()
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

_IGRAPH = """
import json, resource, sys, time
import numpy as np, igraph as ig
t = time.perf_counter(); c = time.process_time()
import resource
limit = int(float(sys.argv[4]) * 2**30)
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
else:  # no address-space limit: if the machine runs short, the kernel ends this one first
    with open("/proc/self/oom_score_adj", "w") as adj:
        adj.write("1000")
simple = sys.argv[3] == "simple"
g = ig.Graph.Read_Edgelist(sys.argv[1], directed=True)
if not simple:
    g.delete_vertices([v for v, d in enumerate(g.degree()) if d == 0])
    g.simplify(multiple=True, loops=True)
load, load_cpu = time.perf_counter() - t, time.process_time() - c
t = time.perf_counter(); c = time.process_time()
scores = np.asarray(g.pagerank(directed=True, damping=0.85, implementation="prpack"))
np.save(sys.argv[2], scores)
print(json.dumps({"load": load, "load_cpu": load_cpu, "pagerank": time.perf_counter() - t,
                  "pagerank_cpu": time.process_time() - c, "n": g.vcount(), "m": g.ecount(),
                  "simplified": not simple,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

_OURS = """
import json, resource, sys, time
from pathlib import Path
import numpy as np
from webcrawl.analysis.graph import load_graph, pagerank
from webcrawl.storage.edgelist import import_edges
db = Path(sys.argv[2])
out = {}
if not db.exists():
    t = time.perf_counter(); c = time.process_time()
    import_edges(sys.argv[1], db)
    out.update(imported=time.perf_counter() - t, imported_cpu=time.process_time() - c)
t = time.perf_counter(); c = time.process_time()
graph = load_graph(db, graph="all")
out.update(load=time.perf_counter() - t, load_cpu=time.process_time() - c)
t = time.perf_counter(); c = time.process_time()
result = pagerank(graph.adjacency)
np.save(sys.argv[3], result.scores)
import pyarrow.compute as pc
np.save(sys.argv[4], pc.cast(graph.urls.arrow, "int64").to_numpy())  # the file's ids
out.update(pagerank=time.perf_counter() - t, pagerank_cpu=time.process_time() - c,
           n=graph.n, m=graph.m, iterations=result.iterations,
           rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
print(json.dumps(out))
"""


def _run(code: str, *args: str) -> dict[str, float]:
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", code, *args], check=False, capture_output=True,
                          text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    if done.returncode != 0:  # e.g. igraph past its address-space limit: say so, and stop
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise SystemExit(f"failed (exit {done.returncode}): {last}")
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=Path, required=True)
    ap.add_argument("--db", type=Path, default=None,
                    help="the file imported already (default: import into a temp folder)")
    ap.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    ap.add_argument("--simple", action="store_true",
                    help="the file has no duplicate links or self-loops: igraph skips simplify()")
    ap.add_argument("--igraph-limit-gb", type=float, default=20.0,
                    help="address-space limit of the igraph process (default 20); 0: none, "
                         "the process first in line for the kernel's out-of-memory killer "
                         "instead (the limit counts the unused half of a vector grown by "
                         "doubling: Read_Edgelist's, at uk-2002's size)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        db = args.db or Path(tmp) / "graph.db"
        ours = _run(_OURS, str(args.edges), str(db), f"{tmp}/ours.npy", f"{tmp}/ids.npy")
        print("webcrawl", json.dumps(ours), flush=True)
        theirs = _run(_IGRAPH, str(args.edges), f"{tmp}/igraph.npy",
                      "simple" if args.simple else "simplify", str(args.igraph_limit_gb))
        print("igraph  ", json.dumps(theirs), flush=True)
        a, b = np.load(f"{tmp}/ours.npy"), np.load(f"{tmp}/igraph.npy")
        if args.simple:  # igraph ranked every id up to the largest: keep the file's
            b = b[np.load(f"{tmp}/ids.npy")]
            b /= b.sum()
    for name, r in (("igraph", theirs), ("webcrawl", ours)):
        print(f"{name:9s} load {r['load']:7.1f} s wall {r['load_cpu']:7.1f} s CPU, "
              f"PageRank {r['pagerank']:6.1f} s wall {r['pagerank_cpu']:6.1f} s CPU, "
              f"peak RSS {r['rss'] / 1024:7,.0f} MB ({r['rss'] * 1024 / r['m']:.1f} bytes a "
              f"link), {int(r['n']):,} nodes {int(r['m']):,} links")
    same = a.shape == b.shape
    print(f"L1 distance of the PageRank vectors: {float(np.abs(a - b).sum()) if same else 'n/a'}"
          f" (n {a.size:,} and {b.size:,})")


if __name__ == "__main__":
    main()
