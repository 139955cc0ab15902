"""``webcrawl demo [--pages N] [--hosts H] [--seed S] [--out DIR] [--force]``.

The whole product in one command, with no network: a fixture web served on loopback,
a polite crawl, the analyses and the HTML report (see :mod:`crawler.cli.demo_job`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from crawler.cli._common import add_graph_option, nonneg_float, nonneg_int, positive_int

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    from crawler.cli.demo_job import DemoSettings

    d = DemoSettings()
    p = sub.add_parser(
        "demo", help="crawl a local fixture web, analyse it and write an HTML report",
        description="Start a synthetic multi-host web on a free loopback port, crawl it "
                    "politely (bfs), run the analyses (PageRank, HITS, bow-tie, degree "
                    "laws, quality over time, orderings, revisits) and write "
                    "OUT/crawl.db and OUT/report.html.  No network is used.")
    p.add_argument("--pages", type=positive_int, default=d.pages, metavar="N",
                   help="pages of the fixture web (default %(default)s)")
    p.add_argument("--hosts", type=positive_int, default=d.hosts, metavar="H",
                   help="hosts of the fixture web (default %(default)s)")
    p.add_argument("--seed", type=nonneg_int, default=d.seed, metavar="S",
                   help="seed of the fixture web (default %(default)s)")
    p.add_argument("--out", type=Path, default=Path("demo-out"), metavar="DIR",
                   help="output folder (default %(default)s)")
    p.add_argument("--revisit-seconds", type=nonneg_float, default=d.revisit_seconds, metavar="S",
                   help="real seconds of the revisit run (default %(default)s)")
    add_graph_option(p)
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing OUT/crawl.db")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``webcrawl demo``."""
    import sys

    from crawler.cli.demo_job import DemoSettings, run_demo

    settings = DemoSettings(pages=args.pages, hosts=args.hosts, seed=args.seed,
                            revisit_seconds=args.revisit_seconds, force=args.force,
                            graph=args.graph)
    result = run_demo(args.out, settings)
    print("\n".join(result.summary))
    if result.crawl.get("stopped") != "done":
        print(f"webcrawl: error: the crawl did not finish (stopped: "
              f"{result.crawl.get('stopped')})", file=sys.stderr)
        return 1
    if result.audit_violations:
        print(f"webcrawl: error: the server's politeness audit found "
              f"{result.audit_violations} violation(s): " + "; ".join(result.audit_failures),
              file=sys.stderr)
        return 1
    return 0
