"""What the near-duplicate test's look-up costs a page as the crawl grows: ``NearSeen.see``
over the text sketches of a fixture web's pages, in page order, back to back.

The fixture's ordinary pages draw their words from a small vocabulary, so their bands
collide and a page's buckets hold more leaders the more pages were tested (the case of
the crawl's 20,000-page benchmark, ``bench_near_crawl.py --pages 20000``).  Prints the
look-up's thread CPU a page (median of the rounds, and each quarter of the pages), the
leaders and the near copies.  To compare two source trees, run it with each tree's
Python in turn::

    python benchmarks/bench_near_lookup.py [--pages 20000 --pairs 3000 --similar 2500]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from selectolax.lexbor import LexborHTMLParser
from webcrawl.crawler.near_seen import NearSeen
from webcrawl.crawler.page_text import page_text
from webcrawl.crawler.shingles import text_sketches
from webcrawl.fixtures import FixtureConfig, FixtureWeb
from webcrawl.fixtures.html import PageRenderer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=20000)
    ap.add_argument("--pairs", type=int, default=3000)
    ap.add_argument("--similar", type=int, default=2500)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    web = FixtureWeb.build(FixtureConfig(pages=args.pages, hosts=20, seed=0,
                                         near_duplicate_pairs=args.pairs,
                                         similar_pages=args.similar))
    renderer = PageRenderer(web, 8400)
    texts = [page_text(LexborHTMLParser(renderer.render(p, 0))) for p in range(web.pages)]
    sketches = text_sketches(texts)
    quarter = len(sketches) // 4
    totals: list[float] = []
    quarters: list[list[float]] = [[] for _ in range(4)]
    for _ in range(args.rounds):
        seen = NearSeen(0.8)
        for q in range(4):
            part = sketches[q * quarter:(q + 1) * quarter]
            t0 = time.thread_time_ns()
            for i, sk in enumerate(part, q * quarter):
                seen.see(i, sk)
            quarters[q].append((time.thread_time_ns() - t0) / len(part) / 1e3)
        totals.append(sum(qs[-1] for qs in quarters) / 4)
    print(f"{len(sketches):,} pages, {args.rounds} rounds: look-up {statistics.median(totals):.1f}"
          f" us a page (rounds {min(totals):.1f}-{max(totals):.1f}); by quarter of the pages "
          + ", ".join(f"{statistics.median(qs):.1f}" for qs in quarters)
          + f"; {len(seen) - seen.near_duplicates:,} leaders, {seen.near_duplicates:,}"
          " near copies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
