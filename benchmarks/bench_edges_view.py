"""The ``edges`` view (``schema.sql``) against a real table of one row per link.

Imports an edge file (``import edges``) and measures, in this process (CPU seconds
beside wall: the machine may be shared):

* the view: ``SELECT count(*) FROM edges``, ``SELECT sum(dst) FROM edges`` (every link
  decoded) and reading ``src_url, dst_url`` of the first ``--rows`` links;
* the alternative the view avoids: a table ``edges_table(src, dst)`` written beside
  the arrays (``INSERT ... SELECT src, dst FROM edges``, then the same scans), its
  time (what an import would pay on top of its own) and the bytes it adds to the file.

    PYTHONPATH=. python benchmarks/bench_edges_view.py --edges /tmp/e20m.tsv
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path


def _timed(conn: sqlite3.Connection, label: str, sql: str, links: int, fetch: int = 0) -> None:
    t, c = time.perf_counter(), time.process_time()
    cur = conn.execute(sql)
    rows = cur.fetchmany(fetch) if fetch else cur.fetchall()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    count = fetch or links
    print(f"{label:44s} {wall:7.2f} s wall {cpu:7.2f} s CPU  {count / cpu:12,.0f} links/CPU-s"
          f"  ({len(rows):,} rows)", flush=True)


def main() -> None:
    from webcrawl.storage.edgelist import import_edges

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=Path, required=True)
    ap.add_argument("--rows", type=int, default=2_000_000,
                    help="links read with their URLs (default 2M)")
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        db = Path(tmp) / "g.db"
        t = time.perf_counter()
        result = import_edges(args.edges, db)
        print(f"import edges: {result.edges:,} links in {time.perf_counter() - t:.1f} s wall; "
              f"file {db.stat().st_size / result.edges:.2f} bytes a link")
        conn = sqlite3.connect(db)
        m = result.edges
        _timed(conn, "view: count(*)", "SELECT count(*) FROM edges", m)
        _timed(conn, "view: sum(dst) (every link decoded)", "SELECT sum(dst) FROM edges", m)
        _timed(conn, f"view: src_url, dst_url of {args.rows:,} links",
               "SELECT src_url, dst_url FROM edges", m, args.rows)
        before = db.stat().st_size
        t, c = time.perf_counter(), time.process_time()
        conn.execute("CREATE TABLE edges_table (src INTEGER NOT NULL, dst INTEGER NOT NULL)")
        conn.execute("INSERT INTO edges_table SELECT src, dst FROM edges")
        conn.commit()
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        grown = db.stat().st_size - before
        print(f"a real table beside the arrays: filled in {wall:.1f} s wall {cpu:.1f} s CPU "
              f"(decoding included), {grown / m:.2f} bytes a link more on disk "
              f"({grown / 1e6:,.0f} MB)")
        _timed(conn, "table: count(*)", "SELECT count(*) FROM edges_table", m)
        _timed(conn, "table: sum(dst)", "SELECT sum(dst) FROM edges_table", m)
        conn.close()


if __name__ == "__main__":
    main()
