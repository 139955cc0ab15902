"""Revisit policies under a budget and per-host politeness, in simulation (no network).

A fixture web with one big host (``--big-share`` of the pages, one request every
``--big-delay`` seconds) and small unlimited ones is revisited for ``--days`` simulated
days by the :class:`~webcrawl.analysis.change.refresh.RevisitPlanner`, driven the way the
revisit loop drives it: at most one fetch start per ``1 / budget``, the most overdue page
whose host is ready first, each host ready again ``Crawl-delay`` after a request, a
fetch taking no time.  Hosts with a sitemap have it read every ``--sitemap-every``
days (a request like any other).  Freshness, age and harmonic staleness are integrated
exactly against the fixture's change times
(:func:`webcrawl.analysis.change.freshness.evaluate_freshness`), the rate estimates
compared with the true rates.

Policies: uniform; proportional; Cho's optimal for the budget alone, held to each host's
limit at fetch time ("throttled"); the politeness-aware optimal (Kolobov et al.); each
with the true rates (an oracle) and with rates estimated as it goes, the latter with and
without change signals (sitemap lastmod and changefreq, Last-Modified).  The optimum an
independent solver (scipy's SLSQP) finds for the true rates and limits is printed
beside them as a reference line.

Usage::

    .venv/bin/python benchmarks/bench_polite_refresh.py [--pages 300] [--days 60]
        [--objective freshness] [--shape 1] [--sitemaps true] [--seeds 1,2,3]

Each row is the mean over seeds with the spread (min-max) in brackets.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from webcrawl.analysis.change.allocation import polite_allocation
from webcrawl.analysis.change.freshness import evaluate_freshness
from webcrawl.analysis.change.objectives import page_utility
from webcrawl.analysis.change.refresh import PlannerSettings, RevisitPlanner
from webcrawl.analysis.change.signals import changefreq_rate
from webcrawl.fixtures.changes import PageClock
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb, changefreq_word

#: (label, policy, true rates, signals)
RUNS = (
    ("uniform", "uniform", False, False),
    ("proportional (true rates)", "proportional", True, False),
    ("Cho optimal, throttled (true rates)", "optimal", True, False),
    ("polite optimal (true rates)", "polite_optimal", True, False),
    ("Cho optimal, throttled (estimated)", "optimal", False, False),
    ("polite optimal (estimated)", "polite_optimal", False, False),
    ("Cho optimal, throttled (estimated, signals)", "optimal", False, True),
    ("polite optimal (estimated, signals)", "polite_optimal", False, True),
)


@dataclass
class Scenario:
    pages: int
    hosts: int
    days: float
    per_page_day: float
    big_share: float
    big_delay: float
    day_seconds: float
    objective: str
    shape: float
    sitemaps: str
    sitemap_every: float
    seed: int

    def web(self) -> FixtureWeb:
        small = (1.0 - self.big_share) / (self.hosts - 1)
        return FixtureWeb.build(FixtureConfig(
            pages=self.pages, hosts=self.hosts, seed=self.seed, robots_disallow_fraction=0.0,
            host_weights=(self.big_share, *([small] * (self.hosts - 1))),
            host_crawl_delays=((0, self.big_delay),), change_shape=self.shape,
            sitemap_lastmod=(self.sitemaps,), day_seconds=self.day_seconds))


@dataclass
class Outcome:
    freshness: float
    age: float
    harmonic: float
    rate_error: float
    fetches: int


def simulate(sc: Scenario, web: FixtureWeb, policy: str, true_rates: bool,
             signals: bool) -> Outcome:
    """One revisit run over ``sc.days`` (see the module docstring)."""
    n = web.pages
    host = web.host_of
    budget = sc.per_page_day * n
    delay = np.zeros(web.hosts)
    delay[0] = sc.big_delay / sc.day_seconds          # days between requests
    has_sitemap = sc.sitemaps != "none"
    reads_per_day = 1.0 / sc.sitemap_every if has_sitemap else 0.0
    planner = RevisitPlanner(PlannerSettings(
        policy=policy, objective=sc.objective, budget_per_day=budget - reads_per_day * web.hosts,
        recompute_every=max(1, n // 20), signals=signals))
    keys = list(range(n))
    planner.update_many(keys, np.zeros(n), [None] * n)  # the crawl, at day 0
    planner.set_hosts(keys, host.tolist())
    limits = {0: 1.0 / delay[0] - reads_per_day}
    planner.set_host_limits(limits)
    if true_rates:
        planner.rate_oracle = lambda pages: web.rates[np.asarray(pages, dtype=np.int64)]
    clock, touch = PageClock(web.changes), PageClock(web.touches)
    version = np.zeros(n, dtype=np.int64)
    host_ready = np.zeros(web.hosts)
    next_read = np.where(has_sitemap, 0.0, np.inf) * np.ones(web.hosts)
    on_host = [np.flatnonzero(host == h) for h in range(web.hosts)]
    if has_sitemap and signals and sc.sitemaps in ("true", "lie"):
        planner.set_changefreq(keys, changefreq_rate(
            [changefreq_word(float(r)) for r in web.rates]))
    rp, rt = [np.arange(n)], [np.zeros(n)]
    now, next_token, fetches = 0.0, 0.0, 0
    while now < sc.days:
        now = max(now, next_token)
        ready = host_ready <= now
        reads = np.flatnonzero((next_read <= now) & ready)
        if reads.size:
            h = int(reads[0])
            if sc.sitemaps in ("true", "lie") and signals:
                pages = on_host[h]
                lastmod = [max(clock.state(p, now)[1], touch.state(p, now)[1])
                           for p in pages.tolist()]
                planner.read_sitemap(pages.tolist(), now, lastmod)
            next_read[h] = now + sc.sitemap_every
            host_ready[h] = now + delay[h]
            next_token = now + 1.0 / budget
            continue
        due = planner.due_times()
        ok = (due <= now) & ready[host]
        if ok.any():
            i = int(np.flatnonzero(ok)[np.argmin(due[ok])])
            v, last = clock.state(i, now)
            changed = v != version[i]
            version[i] = v
            planner.update(i, now, bool(changed), last if changed else None)
            rp.append(np.array([i]))
            rt.append(np.array([now]))
            fetches += 1
            host_ready[host[i]] = now + delay[host[i]]
            next_token = now + 1.0 / budget
            continue
        wake = np.maximum(due, host_ready[host]).min(initial=np.inf)
        wake = min(wake, float(np.maximum(next_read, host_ready).min()))
        now = max(wake, next_token, np.nextafter(now, np.inf))
    cp = np.repeat(np.arange(n), [web.change_times(p, sc.days).size for p in range(n)])
    ct = np.concatenate([web.change_times(p, sc.days) for p in range(n)])
    res = evaluate_freshness(cp, ct, np.concatenate(rp), np.concatenate(rt), n, 0.0, sc.days)
    est = planner.rates()
    return Outcome(res.freshness, res.age, res.harmonic,
                   float(np.median(np.abs(est - web.rates) / web.rates)), fetches)


def scipy_optimum(sc: Scenario, web: FixtureWeb) -> tuple[float, float]:
    """Expected objective of the politeness-aware optimum for the true rates: ours, and
    the one SLSQP finds (an independent solver); per page, in the objective's terms."""
    n = web.pages
    budget = sc.per_page_day * n
    reads = (1.0 / sc.sitemap_every if sc.sitemaps != "none" else 0.0)
    limit = np.full(web.hosts, np.inf)
    limit[0] = sc.day_seconds / sc.big_delay - reads
    spend = budget - reads * web.hosts
    ours = polite_allocation(web.rates, spend, web.host_of, limit, objective=sc.objective).freq
    big = web.host_of == 0
    cons = [{"type": "ineq", "fun": lambda f: spend - f.sum()},
            {"type": "ineq", "fun": lambda f: limit[0] - f[big].sum()}]
    start = np.where(big, 0.9 * limit[0] / big.sum(), 0.9 * (spend - limit[0]) / (~big).sum())
    res = optimize.minimize(lambda f: -page_utility(sc.objective, web.rates, f).sum(), start,
                            bounds=[(1e-6, spend)] * n, constraints=cons, method="SLSQP",
                            options={"ftol": 1e-10, "maxiter": 500})
    return (float(page_utility(sc.objective, web.rates, ours).mean()),
            float(-res.fun / n))


def _spread(values: list[float]) -> str:
    a = np.asarray(values)
    return f"{a.mean():.4f} [{a.min():.4f}-{a.max():.4f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--days", type=float, default=60.0)
    ap.add_argument("--per-page-day", type=float, default=0.5,
                    help="budget in fetches per page per simulated day")
    ap.add_argument("--big-share", type=float, default=0.35)
    ap.add_argument("--big-delay", type=float, default=2.0, help="big host's Crawl-delay, s")
    ap.add_argument("--day-seconds", type=float, default=40.0)
    ap.add_argument("--objective", default="freshness")
    ap.add_argument("--shape", type=float, default=1.0, help="Weibull shape of change")
    ap.add_argument("--sitemaps", default="true", help="none, true, missing or lie")
    ap.add_argument("--sitemap-every", type=float, default=0.5, help="days between reads")
    ap.add_argument("--seeds", default="1,2,3")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    rows: dict[str, list[Outcome]] = {label: [] for label, *_ in RUNS}
    reference: list[tuple[float, float]] = []
    t0 = time.perf_counter()
    for seed in seeds:
        sc = Scenario(args.pages, args.hosts, args.days, args.per_page_day, args.big_share,
                      args.big_delay, args.day_seconds, args.objective, args.shape,
                      args.sitemaps, args.sitemap_every, seed)
        web = sc.web()
        reference.append(scipy_optimum(sc, web))
        for label, policy, true_rates, signals in RUNS:
            rows[label].append(simulate(sc, web, policy, true_rates, signals))
    big = args.big_share * 100
    print(f"{args.pages} pages on {args.hosts} hosts (host 0: {big:.0f}% of the pages, one "
          f"request every {args.big_delay:g} s = {args.day_seconds / args.big_delay:g} per "
          f"simulated day), budget {args.per_page_day:g} fetches per page per day, "
          f"{args.days:g} days, change shape {args.shape:g}, sitemaps {args.sitemaps} "
          f"(read every {args.sitemap_every:g} days), objective {args.objective}, seeds "
          f"{args.seeds}; {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(f"{'policy':44s} {'freshness':>24s} {'harmonic staleness':>24s} "
          f"{'age (days)':>24s} {'rate error':>8s}")
    for label, outs in rows.items():
        print(f"{label:44s} {_spread([o.freshness for o in outs]):>24s} "
              f"{_spread([o.harmonic for o in outs]):>24s} {_spread([o.age for o in outs]):>24s}"
              f" {np.median([o.rate_error for o in outs]):8.3f}")
    ours, slsqp = zip(*reference, strict=True)
    print(f"{'reference: optimum for the true rates':44s} ours {_spread(list(ours))}, "
          f"SLSQP {_spread(list(slsqp))} (expected {args.objective} per page)")
    key = "freshness" if args.objective == "freshness" else "harmonic"
    sign = 1.0 if key == "freshness" else -1.0
    polite = [sign * getattr(o, key) for o in rows["polite optimal (true rates)"]]
    cho = [sign * getattr(o, key) for o in rows["Cho optimal, throttled (true rates)"]]
    margin = np.subtract(polite, cho)
    print(f"polite optimal - Cho throttled (true rates, {key}): {_spread(list(margin))}")
    if args.objective in ("freshness", "harmonic"):
        ratio = np.asarray(polite) / np.asarray(ours) if key == "freshness" else \
            np.asarray(ours) / np.asarray(polite)
        print(f"polite optimal (true rates) / optimum: {_spread(list(ratio))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
