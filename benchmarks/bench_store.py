"""Write throughput of the real ``CrawlStore`` at crawl scale.

Inserts N pages (default 1M) with 10 links each (10M+ links) through ``CrawlStore``
exactly as a crawler would (per page: new URLs, one fetch row, its links, its
outcome, enqueued together; the producer yields to the event loop between chunks of
1000 pages), and prints the write rate of every 100k-page slice (it must not fall as
the file grows), the total time, the file size and the peak RSS.

    .venv/bin/python benchmarks/bench_store.py              # 1M pages
    .venv/bin/python benchmarks/bench_store.py --pages 200000
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._graphdb import write_graph


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--links-per-page", type=int, default=10)
    parser.add_argument("--slice", type=int, default=100_000, help="pages per reported slice")
    parser.add_argument("--db", type=Path, default=Path("bench-out/bench-store.db"))
    args = parser.parse_args()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{args.db}{suffix}").unlink(missing_ok=True)
    args.db.parent.mkdir(parents=True, exist_ok=True)

    print(f"CrawlStore write benchmark: {args.pages:,} pages x {args.links_per_page} links")
    print(f"{'pages':>10}  {'slice s':>8}  {'pages/s':>9}  {'links/s':>10}")

    def on_slice(done: int, seconds: float) -> None:
        pages = (done - 1) % args.slice + 1
        print(f"{done:>10,}  {seconds:>8.2f}  {pages / seconds:>9,.0f}"
              f"  {pages * args.links_per_page / seconds:>10,.0f}", flush=True)

    start = time.perf_counter()
    asyncio.run(write_graph(args.db, args.pages, args.links_per_page, seed=1,
                            on_slice=on_slice, slice_pages=args.slice))
    total = time.perf_counter() - start
    size = sum(Path(f"{args.db}{s}").stat().st_size
               for s in ("", "-wal") if Path(f"{args.db}{s}").exists())
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"total {total:.1f} s ({args.pages / total:,.0f} pages/s, "
          f"{args.pages * args.links_per_page / total:,.0f} links/s); "
          f"file {size / 1e6:,.0f} MB; peak RSS {rss_mb:,.0f} MB")


if __name__ == "__main__":
    main()
