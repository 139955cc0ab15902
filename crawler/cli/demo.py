"""``webcrawl demo [--pages N] [--hosts H] [--random-seed N] [--out DIR] [--force] [--json]``.

The whole product in one command, with no network: a fixture web served on loopback,
a polite crawl, the analyses and the HTML report (see :mod:`webcrawl.crawler.cli.demo_job`).
The environment variables ``WEBCRAWL_DEMO_PAGES``, ``WEBCRAWL_DEMO_HOSTS`` and
``WEBCRAWL_DEMO_REVISIT_SECONDS`` change the size defaults (the README's tests run the
README's demo command as written, at a small size).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import add_graph_option, nonneg_float, nonneg_int, positive_int
from webcrawl.crawler.cli._help import add_deprecated_alias

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    from webcrawl.crawler.cli.demo_job import DemoSettings

    d = DemoSettings()
    env = os.environ.get
    p = sub.add_parser(
        "demo", help="crawl a local fixture web, analyse it and write an HTML report",
        description="Start a synthetic multi-host web on a free loopback port (in a "
                    "process of its own), crawl it politely (bfs), run the analyses "
                    "(PageRank, HITS, bow-tie, degree laws, quality over time, orderings, "
                    "revisits) and write OUT/crawl.db and OUT/report.html.  No network is "
                    "used.  Fails (exit 1) if the server's politeness audit finds a "
                    "violation, naming each one.")
    # String defaults go through `type`, so a bad environment value is a usage error.
    p.add_argument("--pages", type=positive_int, default=env("WEBCRAWL_DEMO_PAGES", d.pages),
                   metavar="N", help="pages of the fixture web (default %(default)s; "
                                     "environment WEBCRAWL_DEMO_PAGES)")
    p.add_argument("--hosts", type=positive_int, default=env("WEBCRAWL_DEMO_HOSTS", d.hosts),
                   metavar="H", help="hosts of the fixture web (default %(default)s; "
                                     "environment WEBCRAWL_DEMO_HOSTS)")
    p.add_argument("--random-seed", dest="seed", type=nonneg_int, default=d.seed, metavar="N",
                   help="seed of the fixture web (default %(default)s)")
    add_deprecated_alias(p, "--seed", "--random-seed")
    p.add_argument("--out", type=Path, default=Path("demo-out"), metavar="DIR",
                   help="output folder (default %(default)s)")
    p.add_argument("--revisit-seconds", type=nonneg_float,
                   default=env("WEBCRAWL_DEMO_REVISIT_SECONDS", d.revisit_seconds),
                   metavar="S", help="real seconds of the revisit run (default %(default)s; "
                                     "environment WEBCRAWL_DEMO_REVISIT_SECONDS)")
    add_graph_option(p)
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing OUT/crawl.db")
    p.add_argument("--json", action="store_true",
                   help="print the final figures as JSON on stdout instead of the summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``webcrawl demo``."""
    import sys

    from webcrawl.crawler.cli._common import print_json
    from webcrawl.crawler.cli.demo_job import DemoSettings, run_demo

    settings = DemoSettings(pages=args.pages, hosts=args.hosts, seed=args.seed,
                            revisit_seconds=args.revisit_seconds, force=args.force,
                            graph=args.graph)
    result = run_demo(args.out, settings)
    if args.json:
        print_json(result.as_dict())
    else:
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
