"""Revisit policies under one budget against the live fixture web (real fetches).

Crawls a fixture web once (accelerated clock), then for each policy copies the crawl
database and runs ``webcrawl revisit`` (a subprocess) with the SAME budget and duration
against a fresh fixture server whose simulated clock resumes where the crawl ended, so
every policy sees the same pages, the same change times and the same simulated window.
The copy's fetch times are shifted by the offset between the two servers' clocks, so the
stored crawl visits sit at their true simulated times.  The server is reached through
``--resolve '*.test:PORT=127.0.0.1:NEWPORT'`` so the stored URLs stay valid.

Freshness and age are integrated exactly against the fixture's change times
(:func:`webcrawl.analysis.change.revisit_eval.evaluate_revisit`) over one common simulated window;
"estimated" is what the crawler infers from its own observations (no truth).

Usage::

    .venv/bin/python benchmarks/bench_revisit.py [--pages 500] [--hosts 20]
        [--budget 80] [--per-page-day 0.5] [--days 20] [--seed 1]

``--per-page-day`` sets the budget relative to the collection (fetches per page per
simulated day; the fixture's pages change about 0.66 times a day on average), from which
``day_seconds = per_page_day * pages / budget`` follows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from webcrawl.analysis.change.revisit_eval import SimClock, evaluate_revisit, load_refreshes
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread, write_truth

POLICIES = (("uniform", "uniform", False), ("proportional (estimated)", "proportional", False),
            ("proportional (true rates)", "proportional", True),
            ("optimal (estimated)", "optimal", False), ("optimal (true rates)", "optimal", True))
STARTUP = 2.0  # seconds from launch before the window opens (interpreter start, loading)


def clock_pair(server: object) -> tuple[float, float]:
    return time.time(), server.sim_days()  # type: ignore[attr-defined]


def crawl(web: FixtureWeb, db: Path, day_seconds: float) -> tuple[int, float, tuple[float, float]]:
    """Crawl ``web``; return (port, simulated day at the end, clock pair)."""
    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                        concurrency=32)
    with serve_in_thread(web, day_seconds=day_seconds) as server:
        pair = clock_pair(server)
        asyncio.run(Crawler(db, [server.seed_url], settings).run())
        return server.port, server.sim_days(), pair


def run_policy(args: argparse.Namespace, web: FixtureWeb, base: Path, work: Path, port: int,
               end_day: float, crawl_pair: tuple[float, float], day_seconds: float,
               policy: str, oracle: bool, truth_tsv: Path) -> tuple[Path, SimClock, float]:
    db = work / f"{policy}{'-true' if oracle else ''}.db"
    shutil.copy(base, db)
    with serve_in_thread(web, day_seconds=day_seconds, start_day=end_day) as server:
        pair = clock_pair(server)
        # Both servers' wall time of simulated day 0; their difference moves the crawl rows.
        shift = (pair[0] - pair[1] * day_seconds) - (crawl_pair[0] - crawl_pair[1] * day_seconds)
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE fetches SET started_at = started_at + ?, "
                         "ended_at = ended_at + ?", (shift, shift))
        cmd = [sys.executable, "-m", "webcrawl.crawler.cli", "revisit", "--db", str(db),
               "--budget", f"{args.budget}/s", "--policy", policy,
               "--duration", str(args.duration), "--day-seconds", str(day_seconds),
               "--resolve", f"*.test:{port}=127.0.0.1:{server.port}",
               "--delay-factor", "0", "--min-delay", "0", "--max-delay", "0", "--quiet",
               "--json"]
        if oracle:
            cmd += ["--true-rates", str(truth_tsv)]
        launched = time.time()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"revisit failed: {done.stderr}")
        summary = json.loads(done.stdout)
        print(f"  {policy}{' (true rates)' if oracle else ''}: {summary['fetches']} revisits, "
              f"{summary['changed']} changed, {100 * summary['budget_use']:.0f}% of the budget",
              file=sys.stderr)
        clock = SimClock(pair[0], pair[1], day_seconds)
        return db, clock, launched


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--budget", type=float, default=80.0, help="fetch starts per second")
    ap.add_argument("--per-page-day", type=float, default=0.5,
                    help="budget in fetches per page per simulated day")
    ap.add_argument("--days", type=float, default=20.0, help="simulated days per policy")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    web = FixtureWeb.build(FixtureConfig(pages=args.pages, hosts=args.hosts, seed=args.seed))
    with tempfile.TemporaryDirectory(prefix="bench_revisit_") as tmp:
        work = Path(tmp)
        base = work / "crawl.db"
        # A first guess of day_seconds for the crawl; the crawl takes a fraction of a day.
        n_guess = args.pages
        day_seconds = args.per_page_day * n_guess / args.budget
        t0 = time.perf_counter()
        port, end_day, crawl_pair = crawl(web, base, day_seconds)
        n = load_refreshes(base).n_pages
        print(f"crawl: {n} pages fetched as HTML in {time.perf_counter() - t0:.1f} s "
              f"({end_day:.2f} simulated days)", file=sys.stderr)
        args.duration = args.days * day_seconds + STARTUP
        truth_tsv, _ = write_truth(web, port, work / "truth")
        index = {}
        for i, p in enumerate(web.truth_pages(port)):
            index[p.url] = i
            index[p.final_url] = i
        rows = []
        window: tuple[float, float] | None = None
        for name, policy, oracle in POLICIES:
            db, clock, launched = run_policy(args, web, base, work, port, end_day, crawl_pair,
                                             day_seconds, policy, oracle, truth_tsv)
            if window is None:  # one simulated window for every policy
                lo = float(clock.days(launched + STARTUP))
                window = (lo, lo + args.days - STARTUP / day_seconds)
            urls = load_refreshes(db).urls
            until = window[1] + 1.0
            change_times = {u: web.change_times(index[u], until) for u in urls}
            wall = (clock.wall_ref + (window[0] - clock.sim_day) * day_seconds,
                    clock.wall_ref + (window[1] - clock.sim_day) * day_seconds)
            ev = evaluate_revisit(db, change_times, clock, *wall)
            ref = load_refreshes(db)
            revisits = int(ref.page.size - ref.n_pages)
            rows.append((name, ev.freshness, ev.age, ev.estimated_freshness, ev.estimated_age,
                         revisits / (args.duration)))
        lam = web.rates[[index[u] for u in load_refreshes(base).urls]]
        print(f"{n} pages, {args.hosts} hosts, budget {args.budget:g} fetches/s = "
              f"{args.per_page_day:g} per page per simulated day ({day_seconds:.2f} s/day), "
              f"total change rate {lam.sum() / n:.2f} per page per day; window "
              f"{window[1] - window[0]:.1f} simulated days" if window else "")
        print(f"{'policy':26s} {'freshness':>9s} {'age(d)':>8s} {'est.fresh':>9s} "
              f"{'est.age':>8s} {'fetch/s':>8s}")
        for name, fr, age, efr, eage, rate in rows:
            print(f"{name:26s} {fr:9.4f} {age:8.3f} {efr:9.4f} {eage:8.3f} {rate:8.1f}")
        f = {name: fr for name, fr, *_ in rows}
        ratio = f["optimal (estimated)"] / f["optimal (true rates)"]
        print(f"optimal(estimated) / optimal(true rates): {ratio:.3f}")
        # The literature's "uniform beats proportional" is for known rates; proportional on
        # estimated rates is tempered (a Bernoulli estimate saturates at the visit rate).
        ok = (ratio >= 0.95 and f["optimal (estimated)"] > f["uniform"]
              and f["optimal (true rates)"] > f["uniform"] > f["proportional (true rates)"])
        print("expected: optimal > uniform > proportional (true rates) and optimal estimated "
              ">= 95% of true: " + ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
