"""Sitemap change signals against the fixture's true rates, in simulation (no network).

Every page of a fixture web is revisited once a day (the phases spread over the day) for
``--days`` days from day ``start``, and every host's sitemap read ``--reads-per-day``
times a day; the :class:`~webcrawl.analysis.change.refresh.RevisitPlanner` estimates each
page's change rate with and without the signals, and the median relative error against
the fixture's rates is printed per seed.  Scenarios: truthful or lying ``lastmod`` (false
touches once a page a day), with or without ``changefreq`` as the prior's centre, for
pages created when the revisits begin (``start`` 0) or ``--age`` days before.

Usage::

    .venv/bin/python benchmarks/bench_change_signals.py [--pages 200] [--days 20]
        [--reads-per-day 2] [--age 365] [--seeds 1,2]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from webcrawl.analysis.change.refresh import PlannerSettings, RevisitPlanner
from webcrawl.analysis.change.signals import changefreq_rate
from webcrawl.fixtures.changes import PageClock
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb, changefreq_word


def median_error(web: FixtureWeb, *, signals: bool, start: float = 0.0,
                 changefreq: bool = True, days: int = 20,
                 reads_per_day: int = 2) -> tuple[float, RevisitPlanner]:
    """The median relative error of the planner's rates after the revisit window, and
    the planner (``tests/analysis/change/test_signals.py`` asserts on both)."""
    n = web.pages
    planner = RevisitPlanner(PlannerSettings(policy="uniform", budget_per_day=float(n),
                                             signals=signals, recompute_every=10**9))
    keys = list(range(n))
    planner.update_many(keys, np.full(n, start), [None] * n)
    planner.set_hosts(keys, web.host_of.tolist())
    if changefreq:
        planner.set_changefreq(keys, changefreq_rate([changefreq_word(float(r))
                                                      for r in web.rates]))
    clock = PageClock(web.changes)
    version = np.array([clock.state(p, start)[0] for p in keys], dtype=np.int64)
    phase = (np.arange(n) + 0.5) / n
    visits = [(start + d + float(phase[p]), p) for d in range(1, days) for p in keys]
    reads = [(start + r / reads_per_day, -1) for r in range(1, days * reads_per_day)]
    for t, p in sorted(visits + reads):
        if p < 0:
            stated = [web.lastmod_at(q, t) for q in keys]
            planner.read_sitemap(keys, t, [np.nan if v is None else v for v in stated])
            continue
        v = clock.state(p, t)[0]
        planner.update(p, t, bool(v != version[p]))
        version[p] = v
    live = web.rates > 0
    est = planner.rates()[live]
    return float(np.median(np.abs(est - web.rates[live]) / web.rates[live])), planner


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--days", type=int, default=20)
    ap.add_argument("--reads-per-day", type=int, default=2)
    ap.add_argument("--age", type=float, default=365.0,
                    help="days the pages have existed when the revisits begin")
    ap.add_argument("--seeds", default="1,2")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    scenarios = (  # label, sitemap mode, signals, start, changefreq
        ("none (revisits alone), pages created at the start", "true", False, 0.0, False),
        ("truthful lastmod and changefreq", "true", True, 0.0, True),
        ("lying lastmod, changefreq", "lie", True, 0.0, True),
        ("truthful lastmod alone", "true", True, 0.0, False),
        (f"none, pages {args.age:g} days old", "true", False, args.age, False),
        (f"truthful lastmod alone, pages {args.age:g} days old", "true", True, args.age,
         False),
        (f"lying lastmod alone, pages {args.age:g} days old", "lie", True, args.age, False),
    )
    t0 = time.perf_counter()
    print(f"{'sitemap':52s} " + " ".join(f"{'seed ' + str(s):>8s}" for s in seeds))
    for label, mode, signals, start, changefreq in scenarios:
        errors = []
        for seed in seeds:
            web = FixtureWeb.build(FixtureConfig(pages=args.pages, hosts=args.hosts, seed=seed,
                                                 robots_disallow_fraction=0.0,
                                                 sitemap_lastmod=(mode,)))
            errors.append(median_error(web, signals=signals, start=start,
                                       changefreq=changefreq, days=args.days,
                                       reads_per_day=args.reads_per_day)[0])
        print(f"{label:52s} " + " ".join(f"{e:8.3f}" for e in errors), flush=True)
    print(f"{args.pages} pages on {args.hosts} hosts revisited daily for {args.days} days, "
          f"sitemaps read {args.reads_per_day} times a day; median relative error of the "
          f"rate estimates; {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
