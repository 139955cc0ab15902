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
instead.  Run from the repository root::

    python benchmarks/bench_near_crawl.py [--rounds 9] [--workers 2]
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


def webcrawl() -> list[str]:
    return [sys.executable, "-m", "webcrawl.crawler.cli"]


def crawl(port: int, db: Path, mode: str, workers: int) -> tuple[float, float, int]:
    """CPU seconds (the crawl and its children), wall seconds, pages fetched."""
    for leftover in db.parent.glob(db.name + "*"):
        leftover.unlink()
    cmd = [*webcrawl(), "crawl", *(f"http://site{h}.test:{port}/" for h in range(HOSTS)),
           "--db", str(db),
           "--resolve", "*.test=127.0.0.1", "--allow-domain", "test", "--delay-factor",
           "0", "--min-delay", "0", "--max-delay", "0", "-q", *MODES[mode]]
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
    args = ap.parse_args()
    modes = args.modes.split(",")
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
                    runs[mode].append(crawl(port, db, mode, args.workers))
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
        line = f"{mode:7} {statistics.median(cpu):6.2f} {statistics.median(wall):7.2f}" \
               f" {statistics.median(rate):8.0f}"
        if mode != "off" and "off" in runs:
            rc = [a / b for a, b in zip(cpu, (c for c, _, _ in runs["off"]), strict=True)]
            rw = [a / b for a, b in zip(wall, (w for _, w, _ in runs["off"]), strict=True)]
            line += f"  {statistics.median(rc):.3f} ({min(rc):.2f}-{max(rc):.2f})" \
                    f"            {statistics.median(rw):.3f} ({min(rw):.2f}-{max(rw):.2f})" \
                    f"  {NEAR_COPIES[mode]}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
