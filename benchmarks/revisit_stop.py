"""Ctrl-C during ``webcrawl revisit``: is every request the server answered recorded?

Crawls a fixture web once, then runs ``webcrawl revisit`` (a subprocess) ``--trials``
times, each on a fresh copy of the crawl database, and sends it SIGINT at a random
moment (seeded) while revisits are under way (the server takes ``--latency`` seconds
per answer).  After each run it compares the server's log with the copy: the page
requests the server answered to the end (status sent) against the revisit rows
recorded.  Prints one line per trial and the totals; ``dropped`` must be 0.

Usage::

    nice -n 10 .venv/bin/python benchmarks/revisit_stop.py [--trials 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread
from webcrawl.fixtures.audit import PATH_ROBOTS


def _revisit_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        (n,) = conn.execute("SELECT count(*) FROM fetches WHERE kind = 'revisit'").fetchone()
    return int(n)


def _answered(server: object, since: int) -> int:
    log = server.server.log  # type: ignore[attr-defined]
    return sum(1 for i in range(since, len(log))
               if log.status[i] > 0 and log.path_class[i] != PATH_ROBOTS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--latency", type=float, default=0.05)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    web = FixtureWeb.build(FixtureConfig(pages=args.pages, hosts=8, seed=args.seed))
    tmp = Path(tempfile.mkdtemp(prefix="revisit-stop-"))
    crawl_db = tmp / "crawl.db"
    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",),
                                        scope_hosts=("*.test",))
    total_answered = total_dropped = 0
    with serve_in_thread(web, latency=args.latency) as server:
        asyncio.run(Crawler(crawl_db, [server.seed_url], settings).run())
        for trial in range(args.trials):
            db = tmp / f"trial{trial}.db"
            shutil.copy(crawl_db, db)
            time.sleep(0.2)  # the crawl's or the last trial's answers are logged
            since = len(server.server.log)
            proc = subprocess.Popen(
                [sys.executable, "-m", "webcrawl.crawler.cli", "revisit", "--db", str(db),
                 "--budget", "40", "--quiet"], stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 120
            while _answered(server, since) < 5 and time.monotonic() < deadline:
                time.sleep(0.01)  # revisits under way (the imports take a while)
            time.sleep(rng.uniform(0.0, 1.0))
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
            time.sleep(0.2)  # an answer cut short by the exit is logged by now
            answered, recorded = _answered(server, since), _revisit_rows(db)
            total_answered += answered
            total_dropped += answered - recorded
            print(f"trial {trial:2d}: exit {proc.returncode}, answered {answered}, "
                  f"recorded {recorded}, dropped {answered - recorded}"
                  + ("  TRACEBACK" if "Traceback" in err else "")
                  + ("" if err.strip() else "  NO MESSAGE"), flush=True)
    shutil.rmtree(tmp)
    print(f"{args.trials} trials: {total_answered} answered, {total_dropped} dropped")


if __name__ == "__main__":
    main()
