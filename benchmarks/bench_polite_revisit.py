"""Cho's optimal, throttled, against the politeness-aware optimal, through the live revisit loop.

A fixture web with one big host (``--big-share`` of the pages; robots.txt
``Crawl-delay: --big-delay`` seconds) and small hosts without a delay is crawled once
at simulated day 0, then revisited for ``--days`` simulated days by
:class:`~webcrawl.crawler.revisit.loop.RevisitCrawler` (real HTTP requests to the
fixture server, conditional GETs, the crawl's politeness with the Crawl-delay) under
each policy in turn, on a simulated clock shared by the loop and the server
(:class:`~webcrawl.crawler.revisit.clock.SimulatedClock`: the visits and every figure
depend on the seed and the settings only, not on the machine's speed or load).  A
simulated day is ``--day-seconds`` simulated seconds, so the big host allows
``day_seconds / big_delay`` requests a day.  The crawl itself ignores the Crawl-delay
(``polite_max_crawl_delay`` 0, so it takes no time); every revisit obeys it.

Freshness, age and harmonic staleness are integrated exactly against the fixture's
change times (:func:`webcrawl.analysis.change.revisit_eval.evaluate_revisit`) over the
revisit window.  The reference is the expected objective of the optimum for the true
rates and limits that scipy's SLSQP finds (an independent solver), per page.

Usage::

    .venv/bin/python benchmarks/bench_polite_revisit.py [--pages 200] [--days 30]
        [--seeds 1,2,3] [--objective freshness] [--estimated]

Each row is the mean over seeds with the spread (min-max) in brackets.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import optimize
from webcrawl.analysis.change.objectives import page_utility
from webcrawl.analysis.change.revisit_eval import SimClock, evaluate_revisit, load_refreshes
from webcrawl.crawler import CrawlSettings, RevisitCrawler, RevisitSettings, crawl
from webcrawl.crawler.revisit.clock import SimulatedClock
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

EPOCH = 1_000_000_000.0
#: Simulated day the revisits start: the crawl is at day 0.
START_DAY = 1.0


@dataclass
class Run:
    freshness: float
    age: float
    harmonic: float
    revisits: int
    big_share_of_fetches: float
    expected: float          # expected objective per page of the planner's last allocation


class Clocks:
    """The clock the fixture server reads: the current policy run's simulated clock."""

    def __init__(self) -> None:
        self.clock = SimulatedClock(epoch=EPOCH)

    def monotonic(self) -> float:
        return self.clock.monotonic()


def _web(args: argparse.Namespace, seed: int) -> FixtureWeb:
    small = (1.0 - args.big_share) / (args.hosts - 1)
    return FixtureWeb.build(FixtureConfig(
        pages=args.pages, hosts=args.hosts, seed=seed, robots_disallow_fraction=0.0,
        host_weights=(args.big_share, *([small] * (args.hosts - 1))),
        host_crawl_delays=((0, args.big_delay),), change_shape=args.shape,
        day_seconds=args.day_seconds))


def _revisit(args: argparse.Namespace, web: FixtureWeb, base: Path, clocks: Clocks,
             port: int, policy: str, work: Path) -> Run:
    db = work / f"{policy}.db"
    with sqlite3.connect(base) as src, sqlite3.connect(db) as dst:
        src.backup(dst)  # the write-ahead log too, which a file copy would miss
    day = args.day_seconds
    clocks.clock = clock = SimulatedClock(epoch=EPOCH)
    clock.advance_to(START_DAY * day)
    n = load_refreshes(db).n_pages
    urls = load_refreshes(db).urls
    index = {web.url_of(p, port): p for p in range(web.pages)}
    settings = RevisitSettings(policy=policy, objective=args.objective,
                               budget=args.per_page_day * n / day, duration=args.days * day,
                               day_seconds=day)
    true = None if args.estimated else {u: float(web.rates[index[u]]) for u in urls}
    crawler = RevisitCrawler(db, settings, _settings(), true_rates=true, clock=clock,
                             overrides={"polite_max_crawl_delay": 60.0})
    asyncio.run(crawler.run())
    assert crawler.planner is not None
    with sqlite3.connect(db) as conn:
        url_of = dict(conn.execute("SELECT id, url FROM urls").fetchall())
    page_of = [index[url_of[int(k)]] for k in crawler.planner.pages]
    expected = float(page_utility(args.objective, web.rates[page_of],
                                  crawler.planner.frequencies()).mean())
    until = START_DAY + args.days + 1.0
    change_times = {u: web.change_times(index[u], until) for u in urls}
    lo, hi = EPOCH + START_DAY * day, EPOCH + (START_DAY + args.days) * day
    ev = evaluate_revisit(db, change_times, SimClock(EPOCH, 0.0, day), lo, hi)
    ref = load_refreshes(db)
    revisit = ref.time > EPOCH
    on_big = np.array([web.host_of[index[u]] == 0 for u in urls])
    big = float(np.mean(on_big[ref.page[revisit]])) if revisit.any() else 0.0
    return Run(ev.freshness, ev.age, ev.result.harmonic, int(revisit.sum()), big, expected)


def _settings(**extra: object) -> CrawlSettings:
    return CrawlSettings.polite_off(scope_hosts=("*.test",), resolve=("*.test=127.0.0.1",),
                                    concurrency=1, **extra)


def scipy_optimum(args: argparse.Namespace, web: FixtureWeb, pages: np.ndarray) -> float:
    """Expected objective per page of the optimum for the true rates of ``pages`` under
    the budget and the big host's limit, by SLSQP (independent of our solver)."""
    rates = web.rates[pages]
    big = web.host_of[pages] == 0
    budget = args.per_page_day * pages.size
    limit = args.day_seconds / args.big_delay
    cons = [{"type": "ineq", "fun": lambda f: budget - f.sum()},
            {"type": "ineq", "fun": lambda f: limit - f[big].sum()}]
    start = np.where(big, 0.5 * limit / big.sum(), 0.5 * (budget - limit) / (~big).sum())
    res = optimize.minimize(lambda f: -page_utility(args.objective, rates, f).sum(), start,
                            bounds=[(1e-9, budget)] * pages.size, constraints=cons,
                            method="SLSQP", options={"ftol": 1e-12, "maxiter": 1000})
    return float(-res.fun / pages.size)


def one_seed(args: argparse.Namespace, seed: int) -> tuple[dict[str, Run], float]:
    web = _web(args, seed)
    clocks = Clocks()
    with tempfile.TemporaryDirectory(prefix="bench_polite_") as tmp, \
            serve_in_thread(web, clock=clocks.monotonic) as server:
        work = Path(tmp)
        base = work / "crawl.db"
        crawl([server.seed_url], base, _settings(polite_max_crawl_delay=0.0))
        with sqlite3.connect(base) as conn:  # the crawl happened at simulated day 0
            conn.execute("UPDATE fetches SET started_at = ?, ended_at = ? WHERE kind = 'crawl'",
                         (EPOCH, EPOCH))
        index = {web.url_of(p, server.port): p for p in range(web.pages)}
        pages = np.array([index[u] for u in load_refreshes(base).urls])
        runs = {policy: _revisit(args, web, base, clocks, server.port, policy, work)
                for policy in ("optimal", "polite_optimal")}
    return runs, scipy_optimum(args, web, pages)


def _spread(values: list[float]) -> str:
    a = np.asarray(values)
    return f"{a.mean():.4f} [{a.min():.4f}-{a.max():.4f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--hosts", type=int, default=6)
    ap.add_argument("--days", type=float, default=30.0)
    ap.add_argument("--per-page-day", type=float, default=0.5)
    ap.add_argument("--big-share", type=float, default=0.4)
    ap.add_argument("--big-delay", type=float, default=2.0)
    ap.add_argument("--day-seconds", type=float, default=40.0)
    ap.add_argument("--objective", default="freshness")
    ap.add_argument("--shape", type=float, default=1.0)
    ap.add_argument("--estimated", action="store_true", help="plan with estimated rates")
    ap.add_argument("--seeds", default="1,2,3")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    results = [one_seed(args, int(s)) for s in args.seeds.split(",")]
    print(f"{args.pages} pages on {args.hosts} hosts (host 0: {100 * args.big_share:.0f}% of "
          f"the pages, Crawl-delay {args.big_delay:g} s = {args.day_seconds / args.big_delay:g}"
          f" requests per simulated day), budget {args.per_page_day:g} revisits per page per "
          f"day, {args.days:g} days, {'estimated' if args.estimated else 'true'} rates, "
          f"objective {args.objective}, seeds {args.seeds}; {time.perf_counter() - t0:.0f} s",
          file=sys.stderr)
    print(f"{'policy':16s} {'freshness':>24s} {'harmonic staleness':>24s} {'age (days)':>24s}"
          f" {'expected':>8s} {'on big':>7s}")
    for policy in ("optimal", "polite_optimal"):
        runs = [r[policy] for r, _ in results]
        print(f"{policy:16s} {_spread([r.freshness for r in runs]):>24s} "
              f"{_spread([r.harmonic for r in runs]):>24s} {_spread([r.age for r in runs]):>24s}"
              f" {np.mean([r.expected for r in runs]):8.4f} "
              f"{np.mean([r.big_share_of_fetches for r in runs]):7.3f}")
    key = {"freshness": "freshness", "harmonic": "harmonic", "age": "age"}[args.objective]
    sign = 1.0 if key == "freshness" else -1.0
    margin = [sign * (getattr(r["polite_optimal"], key) - getattr(r["optimal"], key))
              for r, _ in results]
    print(f"polite optimal - Cho optimal throttled ({key}, measured; higher is better): "
          f"{_spread(margin)}")
    ref = [opt for _, opt in results]
    print(f"SLSQP optimum, expected {args.objective} utility per page: {_spread(ref)}")
    if args.objective == "freshness":
        ratio = [r["polite_optimal"].freshness / opt for r, opt in results]
        print(f"polite optimal measured freshness / SLSQP optimum: {_spread(ratio)}")
    ratio = [r["polite_optimal"].expected / opt if args.objective == "freshness"
             else opt / r["polite_optimal"].expected for r, opt in results]
    print(f"polite optimal planned (expected) / SLSQP optimum: {_spread(ratio)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
