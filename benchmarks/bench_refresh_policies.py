"""Refresh policies under one budget on the fixture web's change process (simulation).

Every policy refreshes the same pages (the fixture web's, with its Cho and Garcia-Molina
rate mixture) with the same budget of fetches per simulated day; freshness and age are
integrated exactly against the true change times (:func:`webcrawl.analysis.change.freshness.
evaluate_freshness`).  ``optimal (estimated)`` is the :class:`RevisitPlanner` learning
the rates as it goes, from the prior, using only "changed since last visit" bits.  No
network: the real-crawler version comes with the revisit loop.

Usage::

    .venv/bin/python benchmarks/bench_refresh_policies.py [--pages 2000] [--days 100]
        [--budget 0.5] [--seed 1]

``--budget`` is in fetches per page per day (0.5: each page every two days on average).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from webcrawl.analysis.change.allocation import allocate
from webcrawl.analysis.change.freshness import evaluate_freshness
from webcrawl.analysis.change.objectives import mean_freshness
from webcrawl.analysis.change.refresh import PlannerSettings, RevisitPlanner
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb


def change_times(web: FixtureWeb, pages: np.ndarray, days: float) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    times = [web.change_times(int(p), days) for p in pages]
    cp = np.repeat(np.arange(pages.size), [t.size for t in times])
    return cp, (np.concatenate(times) if times else np.zeros(0))


def fixed_schedule(freqs: np.ndarray, days: float, rng: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Refresh times at fixed intervals 1/f, random phases; every page fetched at 0."""
    pages, times = [np.arange(freqs.size)], [np.zeros(freqs.size)]
    on = np.flatnonzero(freqs > 0)
    counts = np.ceil(days * freqs[on]).astype(np.int64) + 1
    page = np.repeat(on, counts)
    k = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    phase = rng.uniform(0, 1, on.size)
    t = (np.repeat(phase, counts) + k) / freqs[page]
    keep = t < days
    pages.append(page[keep])
    times.append(t[keep])
    return np.concatenate(pages), np.concatenate(times)


def planner_schedule(budget: float, cp: np.ndarray, ct: np.ndarray, n: int, days: float,
                     step: float) -> tuple[np.ndarray, np.ndarray, RevisitPlanner]:
    """Drive a RevisitPlanner against the change process: visit what is due each step."""
    order = np.lexsort((ct, cp))
    cp, ct = cp[order], ct[order]
    starts = np.searchsorted(cp, np.arange(n + 1))
    planner = RevisitPlanner(PlannerSettings(policy="optimal", budget_per_day=budget,
                                             recompute_every=max(1, int(budget))))
    planner.update_many(list(range(n)), np.zeros(n), [None] * n)
    last = np.zeros(n)
    rp, rt = [np.arange(n)], [np.zeros(n)]
    now = step
    while now < days:
        due = np.asarray(planner.next_due(now), dtype=np.int64)
        if due.size:
            # Changed since the last visit: any change time in (last, now].
            lo = starts[due] + np.array([np.searchsorted(ct[starts[p]:starts[p + 1]], last[p],
                                                         side="right") for p in due])
            hi = starts[due] + np.array([np.searchsorted(ct[starts[p]:starts[p + 1]], now,
                                                         side="right") for p in due])
            planner.update_many(due.tolist(), np.full(due.size, now), (hi > lo).tolist())
            last[due] = now
            rp.append(due)
            rt.append(np.full(due.size, now))
        now += step
    return np.concatenate(rp), np.concatenate(rt), planner


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--days", type=float, default=100.0)
    ap.add_argument("--budget", type=float, default=0.5, help="fetches per page per day")
    ap.add_argument("--step", type=float, default=0.02, help="planner time step, days")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    web = FixtureWeb.build(FixtureConfig(pages=args.pages, seed=args.seed))
    pages = np.flatnonzero((web.birth == 0) & np.isinf(web.death))
    lam = web.rates[pages]
    n, days = pages.size, args.days
    budget = args.budget * n
    cp, ct = change_times(web, pages, days)
    rng = np.random.default_rng(args.seed)
    print(f"{n} pages, {days:g} simulated days, budget {budget:g} fetches/day, "
          f"{ct.size} changes", file=sys.stderr)

    rows = []
    for policy in ("uniform", "proportional", "optimal"):
        freqs = allocate(policy, lam, budget)
        rp, rt = fixed_schedule(freqs, days, rng)
        res = evaluate_freshness(cp, ct, rp, rt, n, 0.0, days)
        rows.append((f"{policy} (true rates)", res.freshness,
                     float(mean_freshness(lam, freqs).mean()), res.age, rt.size / days))
    t0 = time.perf_counter()
    rp, rt, planner = planner_schedule(budget, cp, ct, n, days, args.step)
    res = evaluate_freshness(cp, ct, rp, rt, n, 0.0, days)
    late = evaluate_freshness(cp, ct, rp, rt, n, days / 2, days)
    learned = float(mean_freshness(lam, allocate("optimal", planner.rates(), budget)).mean())
    rows.append(("optimal (estimated, learning)", res.freshness, learned, res.age,
                 rt.size / days))
    print(f"planner run: {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    print(f"{'policy':32s} {'freshness':>9s} {'formula':>8s} {'age(d)':>8s} {'fetch/d':>8s}")
    for name, fr, formula, age, rate in rows:
        print(f"{name:32s} {fr:9.4f} {formula:8.4f} {age:8.3f} {rate:8.1f}")
    opt_true = rows[2][1]
    print(f"optimal(estimated) / optimal(true): {res.freshness / opt_true:.3f} over the whole "
          f"run, {late.freshness / opt_true:.3f} over its second half")
    ok = (res.freshness >= 0.95 * opt_true and rows[2][1] > rows[0][1] > rows[1][1])
    print("expected ordering optimal > uniform > proportional and est >= 95% of true: "
          + ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
