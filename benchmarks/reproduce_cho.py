"""Cho and Garcia-Molina on the fixture web: crawl, revisit daily on a simulated clock, analyse.

    PYTHONPATH=. python benchmarks/reproduce_cho.py [--days 120] [--seed 3]
        [--out benchmarks/results/cho]

Serves a 300-page, 10-host fixture web with 20% of its pages born and 10% dying within
120 days (Cho's four-month window); crawls it at simulated day 0, then revisits every
page once a simulated day (``--add-new``: pages found while revisiting join) for
``--days`` days, and prints ``webcrawl analyze changes`` (both interval estimates:
1 / rate and the paper's span / changes) and writes its figures.

Time is simulated (:class:`webcrawl.crawler.revisit.clock.SimulatedClock`, shared by
the revisit loop and the fixture server): a fetch takes no simulated time and the clock
jumps to the next visit once nothing is in flight, so the visits, their times and every
printed figure depend on ``--seed`` and ``--days`` only, not on the machine's speed or
load.  One simulated day is 86,400 simulated seconds (HTTP dates keep their meaning).
The initial crawl runs one fetch at a time while the clock stands at day 0 (so its
order, and the order of the first round of revisits, is fixed) and its rows are dated
day 0 (the crawl engine itself keeps the wall clock); the revisits start at day 2, every
page overdue, and the budget (one visit per page per day, no burst) spaces them 288
simulated seconds apart.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from webcrawl.crawler import CrawlSettings, RevisitCrawler, RevisitSettings, crawl
from webcrawl.crawler.cli import main as cli
from webcrawl.crawler.revisit.clock import SimulatedClock
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

DAY = 86400.0
PAGES = 300
#: Simulated day the revisits start: after the crawl (day 0) and one planned interval.
START_DAY = 2.0
#: Wall time (Unix seconds) of simulated day 0.
EPOCH = 1_000_000_000.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/cho"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    db = Path(tempfile.mkdtemp()) / "cho.db"
    web = FixtureWeb.build(FixtureConfig(pages=PAGES, hosts=10, seed=args.seed,
                                         day_seconds=DAY, birth_fraction=0.2,
                                         death_fraction=0.1, lifetime_days=120.0))
    clock = SimulatedClock()
    settings = CrawlSettings.polite_off(scope_hosts=("*.test",), resolve=("*.test=127.0.0.1",),
                                        concurrency=1)
    t0 = time.perf_counter()
    with serve_in_thread(web, clock=clock.monotonic) as server:
        stats = crawl([server.seed_url], db, settings)
        # The crawl engine dates its fetches by the wall clock; the crawl happened at
        # simulated day 0 (the server's clock stood still), so its rows are dated so.
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE fetches SET started_at = ?, ended_at = ? "
                         "WHERE kind = 'crawl'", (EPOCH, EPOCH))
        clock.epoch = EPOCH
        clock.advance_to(START_DAY * DAY)
        revisit = RevisitSettings(policy="uniform", budget=PAGES / DAY,
                                  duration=args.days * DAY, day_seconds=DAY, add_new=True)
        rstats = asyncio.run(RevisitCrawler(db, revisit, settings, clock=clock).run())
    print(f"crawl: {stats.pages} pages; revisit: {rstats.fetches} fetches over "
          f"{args.days:g} simulated days, {rstats.added} pages joined the window "
          f"(seed {args.seed})")
    print(f"(took {time.perf_counter() - t0:.0f} s of this machine's time; the figures "
          "do not depend on it)", file=sys.stderr)
    # The fixture server's port (an ephemeral one, five digits) is the one thing a
    # run picks for itself: host names are printed without it (table cells padded to
    # keep their columns), so two runs' outputs compare byte for byte.
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        cli(["analyze", "changes", "--db", str(db), "--out", str(args.out)])
    port = f":{server.port}"
    print(report.getvalue().replace(port + " ", " " * (len(port) + 1)).replace(port, ""),
          end="")


if __name__ == "__main__":
    main()
