"""kill -9 of one worker of ``webcrawl crawl --workers 2`` at a random moment.

Serves a fixture web (1,500 pages on 8 hosts) and runs ``--trials`` crawls (real
``webcrawl crawl`` subprocesses, 1,200-page limit); in each, after a random delay
(seeded), one of the worker processes (the coordinator's children) is killed with
SIGKILL.  The coordinator must restart it and finish: exit 0, no traceback.  A trial
whose workers were not up yet at the kill moment kills nothing and says so.  Prints one
line per trial and the totals.

Usage::

    nice -n 10 .venv/bin/python benchmarks/shard_worker_kill.py [--trials 11] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread


def _workers(pid: int) -> list[int]:
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True,
                              check=False).stdout.split()
    found = []
    for child in children:
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"webcrawl.crawler.shard" in cmdline:
            found.append(int(child))
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=11)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    web = FixtureWeb.build(FixtureConfig(pages=1500, hosts=8, seed=5))
    kills = bad = 0
    with serve_in_thread(web) as server:
        for trial in range(args.trials):
            db = Path(tempfile.mkdtemp(prefix="worker-kill-")) / "c.db"
            proc = subprocess.Popen(
                [sys.executable, "-m", "webcrawl.crawler.cli", "crawl", server.seed_url,
                 "--db", str(db), "--resolve", "*.test=127.0.0.1", "--allow-host", "*.test",
                 "--delay-factor", "0", "--min-delay", "0.05", "--max-delay", "1",
                 "--concurrency", "16", "--workers", "2", "--max-pages", "1200", "--quiet"],
                stderr=subprocess.PIPE, text=True)
            time.sleep(rng.uniform(5, 14))
            workers = _workers(proc.pid)
            victim = rng.choice(workers) if workers else None
            if victim is not None:
                os.kill(victim, signal.SIGKILL)
                kills += 1
            _, err = proc.communicate(timeout=600)
            failed = proc.returncode != 0 or "Traceback" in err
            bad += failed
            print(f"trial {trial:2d}: {'killed a worker' if victim else 'no worker up yet'}, "
                  f"exit {proc.returncode}{', TRACEBACK' if 'Traceback' in err else ''}",
                  flush=True)
            if failed:
                print(err[-2000:], flush=True)
    print(f"{args.trials} trials, {kills} workers killed, {bad} failed")


if __name__ == "__main__":
    main()
