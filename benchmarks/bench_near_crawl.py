"""What the near-duplicate test costs a whole crawl: ``crawl --near-duplicates`` against the
same crawl without it, each run its own process, alternated.

Serves the fixture web with planted near-duplicates (4,000 pages on 20 hosts, 600 planted
pairs, 500 similar pages) as static files with nginx, as ``bench_crawl.py`` serves its
site (installed as it says; without nginx, the aiohttp fixture server, whose own CPU then
shares the machine), and crawls it with zero politeness delays: the crawl is CPU-bound,
the case where the test costs most.  Round after round, in a rotating order, it runs the
crawl without the test (``off``), with it in its own process (the default, ``on``) and
with it in the crawl's own thread (``-s near_process=false``, ``inline``).  For each it
prints the medians of the runs' CPU seconds (user + system of the crawl and its child
processes), wall seconds and pages a second, and the per-round ratios against ``off``
(median, min - max).  ``--workers N`` runs the sharded crawl
instead.  ``--vs PYTHON`` also runs every mode with another interpreter (another source
tree's virtual environment: its ``webcrawl``), in the same rotation, and prints the
ratios of this tree's runs to that one's.  Run from the repository root::

    python benchmarks/bench_near_crawl.py [--rounds 9] [--workers 2] [--vs ../main/.venv/bin/python]
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_crawl
from webcrawl.fixtures import FixtureConfig

HOSTS = 20
#: near copies the last run of each mode found
NEAR_COPIES: dict[str, int] = {}
MODES = {"off": [], "on": ["--near-duplicates"],
         "inline": ["--near-duplicates", "-s", "near_process=false"]}


def webcrawl(python: str | None = None) -> list[str]:
    return [python or sys.executable, "-m", "webcrawl.crawler.cli"]


def crawl(port: int, db: Path, mode: str, workers: int,
          python: str | None = None) -> tuple[float, float, int]:
    """CPU seconds (the crawl and its children), wall seconds, pages fetched; ``mode``
    ending in ``@vs``: the crawl of ``python``'s tree."""
    for leftover in db.parent.glob(db.name + "*"):
        leftover.unlink()
    base = mode.removesuffix("@vs")
    cmd = [*webcrawl(python if mode.endswith("@vs") else None), "crawl",
           *(f"http://site{h}.test:{port}/" for h in range(HOSTS)),
           "--db", str(db),
           "--resolve", "*.test=127.0.0.1", "--allow-domain", "test", "--delay-factor",
           "0", "--min-delay", "0", "--max-delay", "0", "-q", *MODES[base]]
    if workers:
        cmd += ["--workers", str(workers)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with sqlite3.connect(db) as conn:
        pages, near = conn.execute("SELECT count(*), count(near_of) FROM urls"
                                   " WHERE outcome = 'fetched'").fetchone()
    NEAR_COPIES[mode] = near
    return cpu, wall, pages


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--pages", type=int, default=4000)
    ap.add_argument("--pairs", type=int, default=600)
    ap.add_argument("--similar", type=int, default=500)
    ap.add_argument("--modes", default="off,on,inline")
    ap.add_argument("--vs", metavar="PYTHON",
                    help="also run every mode with this interpreter's webcrawl")
    args = ap.parse_args()
    modes = args.modes.split(",")
    if args.vs:
        modes += [f"{m}@vs" for m in modes]
    runs: dict[str, list[tuple[float, float, int]]] = {m: [] for m in modes}
    config = FixtureConfig(pages=args.pages, hosts=HOSTS, seed=0,
                           near_duplicate_pairs=args.pairs, similar_pages=args.similar)
    with tempfile.TemporaryDirectory() as tmp:
        server, port, kind = bench_crawl.start_server(args, Path(tmp), config)
        try:
            db = Path(tmp) / "crawl.db"
            for r in range(args.rounds):
                order = modes[r % len(modes):] + modes[:r % len(modes)]
                for mode in order:
                    runs[mode].append(crawl(port, db, mode, args.workers, args.vs))
        finally:
            server.terminate()
            server.wait()
    load = os.getloadavg()[0]
    print(f"{args.rounds} rounds, --workers {args.workers}, served by {kind},"
          f" load at the end {load:.1f}")
    print("mode    CPU s   wall s  pages/s  CPU/off (median, min-max)  wall/off"
          "                   near copies")
    for mode in modes:
        cpu = [c for c, _, _ in runs[mode]]
        wall = [w for _, w, _ in runs[mode]]
        rate = [p / w for _, w, p in runs[mode]]
        line = f"{mode:9} {statistics.median(cpu):6.2f} {statistics.median(wall):7.2f}" \
               f" {statistics.median(rate):8.0f}"
        off = "off@vs" if mode.endswith("@vs") else "off"
        if mode != off and off in runs:
            line += f"  {_ratios(runs[mode], runs[off], 0)}            " \
                    f"{_ratios(runs[mode], runs[off], 1)}  {NEAR_COPIES[mode]}"
        print(line)
    for mode in (m for m in modes if f"{m}@vs" in runs):
        print(f"{mode} / {mode}@vs: CPU {_ratios(runs[mode], runs[f'{mode}@vs'], 0)},"
              f" wall {_ratios(runs[mode], runs[f'{mode}@vs'], 1)}")
    return 0


def _ratios(runs: list[tuple[float, float, int]], base: list[tuple[float, float, int]],
            field: int) -> str:
    """The per-round ratios of one figure (0: CPU, 1: wall): median (min-max)."""
    r = [a[field] / b[field] for a, b in zip(runs, base, strict=True)]
    return f"{statistics.median(r):.3f} ({min(r):.2f}-{max(r):.2f})"


if __name__ == "__main__":
    sys.exit(main())
