"""Cho and Garcia-Molina on the fixture web: crawl, revisit with the page window, analyse.

    PYTHONPATH=. python benchmarks/reproduce_cho.py [--days 120] [--out benchmarks/results/cho]

Serves a 300-page, 10-host fixture web whose simulated day lasts 0.5 s, with 20% of
its pages born and 10% dying within 120 days (Cho's four-month window); crawls it,
revisits it daily-ish (``--add-new``: pages found while revisiting join) for ``--days``
simulated days, then prints ``webcrawl analyze changes`` and writes its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from webcrawl.crawler import CrawlSettings, RevisitCrawler, RevisitSettings, crawl
from webcrawl.crawler.cli import main as cli
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

DAY = 0.5


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=float, default=120.0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/cho"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    db = Path(tempfile.mkdtemp()) / "cho.db"
    web = FixtureWeb.build(FixtureConfig(pages=300, hosts=10, seed=3, day_seconds=DAY,
                                         birth_fraction=0.2, death_fraction=0.1,
                                         lifetime_days=120.0))
    settings = CrawlSettings.polite_off(scope_hosts=("*.test",), resolve=("*.test=127.0.0.1",),
                                        concurrency=32)
    t0 = time.perf_counter()
    with serve_in_thread(web) as server:
        stats = crawl([server.seed_url], db, settings)
        # At most one visit per page per simulated day (Cho's daily visits); the loop's
        # throughput on loopback (about 100 fetches/s) gives every ~6 days in practice.
        revisit = RevisitSettings(policy="uniform", budget=300 / DAY,
                                  duration=args.days * DAY, day_seconds=DAY, add_new=True)
        rstats = asyncio.run(RevisitCrawler(db, revisit, settings).run())
    print(f"crawl: {stats.pages} pages; revisit: {rstats.fetches} fetches over "
          f"{args.days:g} simulated days, {rstats.added} pages joined the window "
          f"({time.perf_counter() - t0:.0f} s)")
    cli(["analyze", "changes", "--db", str(db), "--day-seconds", str(DAY),
         "--out", str(args.out)])


if __name__ == "__main__":
    main()
