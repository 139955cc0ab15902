"""Politeness scheduling: how much of each host's allowed request rate a crawl achieves.

A host may be contacted again ``D(F)`` seconds after a request that took ``F`` seconds
(:class:`webcrawl.crawler.politeness.PolitenessPolicy`: ``max(min_delay, delay_factor * F)``), so
a perfect scheduler fetches from a busy host at ``1 / mean(F + D(F))`` requests per
second.  This script serves the fixture web (20 hosts by default) from a separate
process (:func:`fixtures.serve_in_process`), crawls it with ``--min-delay 0.02`` (one
crawl process per run) and, per host, compares

* the **achieved** rate, from the server's own request log (``/__fixture__/requests``:
  server-side start and end of every request, on the server's clock): pairs of
  consecutive page requests over the time between their starts;
* with the **allowed** rate ``1 / mean(F + D(F))``, ``F`` the client's fetch times
  (the crawl database's ``fetches`` rows of that host, which match the server's page
  requests one to one: one request in flight per host).

Only pairs where the host had something to fetch when its wait ended count: a crawl
learns a host's URLs as it goes, and a host whose frontier is empty waits for a link,
not for the scheduler.  A pair counts when some later request's URL was known (the
fetch that discovered it had ended, from ``urls.discovered_seq``) by the end of the
wait; the others are counted and printed as left out.

It prints the per-host ratio achieved/allowed and its median, and the lateness
distribution: for each consecutive pair of page requests, (next start - end) - D(F),
the time between a host's wait ending and its next request, as the server saw it
(``server``: includes the response's last bytes reaching the client, so an upper
bound) and as the client recorded it (``client``: fetch rows' wall-clock times).  The
politeness audit (``min_gap`` = the minimum delay) must report 0 violations.

``--compare REF`` also crawls with the engine of git revision ``REF`` (extracted with
``git archive`` into a temporary folder), alternating with the working tree for
``--rounds`` rounds (A/B/A...), on the same server: before/after in one run.

Usage::

    python benchmarks/bench_politeness.py [--hosts 20] [--pages 4000] [--min-delay 0.02]
        [--rounds 1] [--workers N] [--compare REF] [--profile FILE.html|FILE.txt]

``--profile`` runs the working tree's crawl under pyinstrument and writes its HTML.
Keep sizes small while developing: the machine is shared.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webcrawl.crawler.politeness import PolitenessPolicy  # noqa: E402
from webcrawl.crawler.settings import CrawlSettings  # noqa: E402
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_process  # noqa: E402
from webcrawl.fixtures.process import ProcessFixtureServer  # noqa: E402

from benchmarks._revision import extract  # noqa: E402


@dataclass
class RunResult:
    label: str
    wall: float
    cpu: float
    pages: int
    ratios: dict[str, float]
    server_late: list[float]
    client_late: list[float]
    violations: int
    rate: dict[str, float]
    allowed: dict[str, float]
    starved: int


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def crawl(tree: Path, server: ProcessFixtureServer, db: Path, min_delay: float,
          profile: str | None, workers: int | None = None) -> tuple[float, float]:
    """One crawl of every host in its own process; (wall, CPU seconds)."""
    cmd = [sys.executable]
    if profile:
        renderer = "html" if profile.endswith(".html") else "text"
        cmd += ["-m", "pyinstrument", "-r", renderer, "-o", profile]
    cmd += ["-m", "webcrawl.crawler.cli", "crawl", *server.base_urls, "--db", str(db),
            "--resolve", "*.test=127.0.0.1", "--allow-domain", "test",
            "--min-delay", str(min_delay), "--quiet", "--json"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"crawl failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def client_fetches(db: Path) -> dict[str, list[tuple[float, float, float]]]:
    """Per host (name without port): (started, ended, available) of every fetch, in
    start order; ``available``: when the fetch that discovered its URL ended (the
    earliest the crawler could have known the URL; -inf for seeds)."""
    con = sqlite3.connect(db)
    try:
        found = dict(con.execute("SELECT seq, max(ended_at) FROM fetches GROUP BY seq"))
        rows = con.execute(
            "SELECT h.name, f.started_at, f.ended_at, u.discovered_seq FROM fetches f"
            " JOIN urls u ON u.id = f.url_id JOIN hosts h ON h.id = u.host_id"
            " ORDER BY f.started_at").fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[float, float, float]]] = {}
    for name, started, ended, by in rows:
        available = found.get(by, -math.inf)
        out.setdefault(name.split(":", 1)[0].lower(), []).append((started, ended, available))
    return out


def measure(label: str, server: ProcessFixtureServer, db: Path, policy: PolitenessPolicy,
            wall: float, cpu: float) -> RunResult:
    times = server.request_times()
    audit = server.audit(max_concurrency=1, min_gap=policy.min_delay)
    fetches = client_fetches(db)
    ratios: dict[str, float] = {}
    rate: dict[str, float] = {}
    allowed: dict[str, float] = {}
    server_late: list[float] = []
    client_late: list[float] = []
    pages = starved = 0
    for host, t in sorted(times.items()):
        start = [s for s, r in zip(t["start"], t["robots"], strict=True) if not r]
        end = [e for e, r in zip(t["end"], t["robots"], strict=True) if not r]
        client = fetches.get(host, [])
        pages += len(start)
        if len(start) < 3:
            continue
        if len(client) != len(start):
            print(f"  {host}: {len(start)} page requests on the server, {len(client)} "
                  "fetch rows: skipped", file=sys.stderr)
            continue
        fetch_times = [e - s for s, e, _ in client]
        need = [policy.delay(f) for f in fetch_times]
        # A pair counts when the host had a URL to fetch by the time its wait ended
        # (some later request's URL was known): else the gap is the frontier's
        # starvation, not the scheduler's delay.
        known = list(itertools.accumulate(reversed([a for _, _, a in client]), min))[::-1]
        busy = [i for i in range(len(start) - 1)
                if known[i + 1] <= client[i][1] + need[i]]
        if len(busy) < 2:
            continue
        achieved = len(busy) / sum(start[i + 1] - start[i] for i in busy)
        perfect = 1.0 / statistics.fmean(fetch_times[i] + need[i] for i in busy)
        rate[host], allowed[host] = achieved, perfect
        ratios[host] = achieved / perfect
        starved += len(start) - 1 - len(busy)
        for i in busy:
            server_late.append(start[i + 1] - end[i] - need[i])
            client_late.append(client[i + 1][0] - client[i][1] - need[i])
    return RunResult(label, wall, cpu, pages, ratios, server_late, client_late,
                     int(audit["violation_count"]), rate, allowed, starved)


def report(r: RunResult, per_host: bool) -> None:
    print(f"\n== {r.label}: {r.pages} page requests in {r.wall:.2f} s wall, "
          f"{r.cpu:.2f} s CPU; audit violations: {r.violations}; "
          f"{r.starved} gaps left out (the host had no URL yet)")
    if per_host:
        print(f"  {'host':<14}{'achieved/s':>11}{'allowed/s':>11}{'ratio':>8}")
        for host in r.ratios:
            print(f"  {host:<14}{r.rate[host]:>11.1f}{r.allowed[host]:>11.1f}"
                  f"{r.ratios[host]:>8.3f}")
    ratios = list(r.ratios.values())
    print(f"  median ratio achieved/allowed: {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}, {len(ratios)} hosts)")
    for name, late in (("server", r.server_late), ("client", r.client_late)):
        print(f"  wait end -> next request ({name}): p50 {1000 * pct(late, 0.5):.2f} ms, "
              f"p90 {1000 * pct(late, 0.9):.2f} ms, p99 {1000 * pct(late, 0.99):.2f} ms, "
              f"n={len(late)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--pages", type=int, default=4000)
    ap.add_argument("--min-delay", type=float, default=0.02)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--workers", type=int, default=None, metavar="N",
                    help="crawl --workers N (default: the crawl's own default, the cores)")
    ap.add_argument("--compare", metavar="REF", help="also crawl with git revision REF")
    ap.add_argument("--profile", metavar="FILE.html|FILE.txt")
    ap.add_argument("--per-host", action="store_true", help="print every host's rates")
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = ap.parse_args(argv)
    policy = PolitenessPolicy(CrawlSettings(polite_min_delay=args.min_delay))
    web = FixtureWeb.build(FixtureConfig(pages=args.pages, hosts=args.hosts, seed=1))
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f} on {os.cpu_count()} cores")
    results: list[RunResult] = []
    with tempfile.TemporaryDirectory(prefix="bench-polite-") as tmp, \
            serve_in_process(web) as server:
        trees = [("working tree", ROOT)]
        if args.compare:
            trees.append((args.compare, extract(args.compare, Path(tmp))))
        n = 0
        for _ in range(args.rounds):
            for label, tree in trees:
                n += 1
                db = Path(tmp) / f"crawl{n}.db"
                server.reset_audit()
                profile = args.profile if args.profile and tree == ROOT and n == 1 else None
                wall, cpu = crawl(tree, server, db, args.min_delay, profile, args.workers)
                result = measure(label, server, db, policy, wall, cpu)
                report(result, args.per_host)
                results.append(result)
    print("\nsummary (median ratio per run, in run order):")
    for r in results:
        print(f"  {r.label:<14} {statistics.median(r.ratios.values()):.3f}  "
              f"late p50/p99 (server) {1000 * pct(r.server_late, 0.5):.2f}/"
              f"{1000 * pct(r.server_late, 0.99):.2f} ms  wall {r.wall:.1f} s  "
              f"CPU {r.cpu:.1f} s  violations {r.violations}")
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}")
    if args.json:
        print(json.dumps([{"label": r.label, "median_ratio": statistics.median(r.ratios.values()),
                           "ratios": r.ratios, "wall": r.wall, "cpu": r.cpu,
                           "violations": r.violations} for r in results], indent=1))
    return 1 if any(r.violations for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
