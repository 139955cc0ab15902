"""Soak test: a long fixture crawl with faults, killed (kill -9) midway and resumed.

Usage::

    python benchmarks/soak.py                    # 1M pages (hours on a small machine)
    python benchmarks/soak.py --pages 200000     # shorter

The fixture web is served from this process (a background thread); the crawl is a
real ``webcrawl crawl`` subprocess with zero politeness delays (one request per host
at a time still holds), killed with SIGKILL once half of the pages are fetched and
then resumed with ``--resume``.  Printed: pages/s, peak RSS of the crawler, the
outcomes table, and the checks that must hold: politeness violations (server-side
audit: concurrency per host, robots.txt first, disallowed paths) = 0, URLs without an
outcome = 0, fetch rows of a URL whose outcome was committed before the kill
taken again after it (a completed fetch repeated) = 0,
``PRAGMA integrity_check`` = ok.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from webcrawl.fixtures import FaultSpec, FixtureConfig, FixtureWeb, serve_in_thread

FAULTS = ("5xx:0.01,429:0.002,503:0.002,slow:0.001,reset:0.005,redirect:0.01,loop:0.005,"
          "oversize:0.002,ctype:0.005,nocharset:0.005,badcharset:0.005,malformed:0.01,"
          "trap@1,robots5xx@2")


def fetch_rows(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT max(rowid) FROM fetches").fetchone()[0] or 0)
    except sqlite3.Error:
        return 0


def crawl_cmd(seed: str, db: Path, args: argparse.Namespace, resume: bool) -> list[str]:
    cmd = [sys.executable, "-m", "webcrawl.crawler.cli", "crawl", "--db", str(db),
           "--resolve", "*.test=127.0.0.1", "--allow-host", "*.test", "--delay-factor", "0",
           "--min-delay", "0", "--max-delay", "0", "--concurrency", str(args.concurrency),
           "--timeout", "2", "--max-depth", str(args.max_depth), "--quiet"]
    return [*cmd, "--resume"] if resume else [*cmd, seed]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=None, help="default: pages // 250")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--max-depth", type=int, default=60,
                        help="bounds the calendar trap (default %(default)s)")
    parser.add_argument("--kill-at", type=float, default=0.5,
                        help="kill -9 when this fraction of the pages is fetched")
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    hosts = args.hosts or max(8, args.pages // 250)
    spec = FaultSpec.parse(FAULTS)
    spec = FaultSpec(fractions=spec.fractions, hosts=spec.hosts, retry_after=1.0,
                     slow_seconds=3.0, oversize_bytes=6_000_000)
    t0 = time.monotonic()
    web = FixtureWeb.build(FixtureConfig(pages=args.pages, hosts=hosts, seed=args.seed,
                                         faults=spec))
    print(f"fixture web: {args.pages} pages, {hosts} hosts, {web.src.shape[0]} edges, "
          f"built in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    tmp = tempfile.TemporaryDirectory(prefix="soak-")
    db = args.db or Path(tmp.name) / "soak.db"
    with serve_in_thread(web) as server:
        target = int(web.reachable().sum() * args.kill_at)
        t_start = time.monotonic()
        proc = subprocess.Popen(crawl_cmd(server.seed_url, db, args, False))
        while proc.poll() is None and fetch_rows(db) < target:
            time.sleep(0.5)
        killed = proc.poll() is None
        if killed:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        t_kill = time.monotonic()
        before = fetch_rows(db)
        with sqlite3.connect(db) as conn:  # URLs whose outcome was committed at the kill
            completed = dict(conn.execute("SELECT id, seq FROM urls WHERE seq IS NOT NULL"))
        print(f"killed with SIGKILL after {before} fetch rows ({t_kill - t_start:.1f} s)"
              if killed else "the crawl ended before the kill point", file=sys.stderr)
        second = subprocess.run(crawl_cmd(server.seed_url, db, args, True), check=False)
        t_end = time.monotonic()
        report = server.audit(max_concurrency=1)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with sqlite3.connect(db) as conn:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        outcomes = conn.execute(
            "SELECT coalesce(outcome, '(none)'), count(*) FROM urls GROUP BY 1"
            " ORDER BY 2 DESC").fetchall()
        requests = conn.execute("SELECT count(*) FROM fetches").fetchone()[0]
        twice = sum(1 for url_id, seq in conn.execute("SELECT url_id, seq FROM fetches")
                    if url_id in completed and completed[url_id] != seq)
        open_urls = conn.execute("SELECT count(*) FROM urls WHERE outcome IS NULL").fetchone()[0]
    requested = sum(n for o, n in outcomes
                    if o not in ("out_of_scope", "robots_excluded", "abandoned", "(none)"))
    seconds = (t_kill - t_start) + (t_end - t_kill)
    print(f"\nsoak: {args.pages} pages, {hosts} hosts, faults {FAULTS}")
    print(f"resume exit code        {second.returncode}")
    print(f"pages requested         {requested}  ({requests} fetch rows incl. retries)")
    print(f"wall time               {seconds:.1f} s (kill at {t_kill - t_start:.1f} s)")
    print(f"pages/s                 {requested / seconds:.0f}")
    print(f"peak RSS (crawler)      {peak_kib / 1024:.0f} MiB")
    print(f"server requests         {report['requests']}")
    print(f"politeness violations   {report['violation_count']}  {report['violations']}")
    print(f"URLs without outcome    {open_urls}")
    print(f"completed fetch repeated {twice}")
    print(f"integrity_check         {integrity}")
    print("\noutcome            URLs")
    for outcome, n in outcomes:
        print(f"{outcome:<18} {n:>8}")
    ok = (second.returncode == 0 and report["violation_count"] == 0 and open_urls == 0
          and twice == 0 and integrity == "ok")
    tmp.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
