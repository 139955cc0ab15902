"""What the crawl's near-duplicate test found on two versions of one documentation tree.

Serve two versions of the same documentation (for example the Rust books of two
toolchains) under two URL prefixes on loopback, crawl both into one database, then::

    PYTHONPATH=. python benchmarks/near_dup_docs.py --db docs.db \\
        --version http://docs.test:8480/stable/=/srv/stable \\
        --version http://docs.test:8480/nightly/=/srv/nightly

Every page fetched under both prefixes at the same path is a *version pair*.  For each
pair the script reads both files, takes the text the crawl's test reads
(:func:`webcrawl.crawler.shingles.page_text`) and its exact resemblance (the share of
2-word shingles the two texts share, Broder 1997: no sketch, every shingle), and says
whether the crawl put the two pages in one group (byte-identical: ``urls.duplicate_of``;
near copies: ``urls.near_of``).  Prints the pairs by exact resemblance, found and
missed, with examples, and the groups the crawl made between pages at different paths.
"""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser
from webcrawl.crawler.links import decode_page, page_encoding
from webcrawl.crawler.near_seen import decode_sketch
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shingles import page_text, resemblance, shingle_hashes

#: Exact-resemblance classes of the report (lower bounds).
BUCKETS = (1.0, 0.9, 0.8, 0.5, 0.0)


def text_of(path: Path) -> str:
    raw = path.read_bytes()
    return page_text(LexborHTMLParser(decode_page(raw, page_encoding(raw, None))))


def exact_resemblance(a: str, b: str) -> float:
    sa, sb = set(shingle_hashes(a).tolist()), set(shingle_hashes(b).tolist())
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def crawl_groups(db: Path) -> tuple[dict[str, str], dict[str, float], dict[str, bytes]]:
    """Fetched URL -> the URL of its group (itself if none), near copies' stored
    resemblance, and each page's stored sketch."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT u.url, d.url, n.url, u.near_resemblance FROM urls u"
            " LEFT JOIN urls d ON d.id = u.duplicate_of LEFT JOIN urls n ON n.id = u.near_of"
            " WHERE u.outcome = 'fetched'").fetchall()
        sketches = dict(conn.execute(
            "SELECT u.url, f.sketch FROM fetches f JOIN urls u ON u.id = f.url_id"
            " WHERE f.sketch IS NOT NULL ORDER BY f.id").fetchall())
    finally:
        conn.close()
    group: dict[str, str] = {}
    stored: dict[str, float] = {}
    for url, dup, near, res in rows:
        group[url] = dup or near or url
        if near:
            stored[url] = float(res)
    # A near copy of a page that is itself a byte copy: follow to the end.
    for url in group:
        seen = {url}
        while group[group[url]] != group[url] and group[url] not in seen:
            seen.add(group[url])
            group[url] = group[group[url]]
    return group, stored, sketches


def bucket_of(r: float) -> float:
    return next(b for b in BUCKETS if r >= b)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--version", action="append", required=True, metavar="PREFIX=DIR",
                    help="a version's URL prefix and the folder it is served from (twice)")
    ap.add_argument("--examples", type=int, default=4)
    args = ap.parse_args(argv)
    (pa, da), (pb, db) = (v.split("=", 1) for v in args.version)
    group, stored, sketches = crawl_groups(args.db)
    threshold = CrawlSettings().near_min_resemblance
    pairs = []
    for url in sorted(group):
        if not url.startswith(pa) or pb + url[len(pa):] not in group:
            continue
        rel = url[len(pa):].split("#")[0].split("?")[0] or "index.html"
        fa, fb = Path(da) / rel, Path(db) / rel
        if rel.endswith("/"):
            fa, fb = fa / "index.html", fb / "index.html"
        if not (fa.is_file() and fb.is_file()):
            continue
        other = pb + url[len(pa):]
        identical = fa.read_bytes() == fb.read_bytes()
        r = 1.0 if identical else exact_resemblance(text_of(fa), text_of(fb))
        pairs.append((rel, identical, r, group[url] == group[other], url, other))
    print(f"{len(pairs)} version pairs fetched under both prefixes; test threshold "
          f"{threshold}")
    print(f"{'exact resemblance':<22}{'pairs':>7}{'grouped':>9}{'  (byte-identical)':>19}")
    for lo in BUCKETS:
        sel = [p for p in pairs if bucket_of(p[2]) == lo]
        label = "1.0" if lo == 1.0 else f"[{lo}, {BUCKETS[BUCKETS.index(lo) - 1]})"
        print(f"{label:<22}{len(sel):>7}{sum(p[3] for p in sel):>9}"
              f"{sum(p[1] for p in sel):>19}")
    missed = sorted((p for p in pairs if p[2] >= threshold and not p[3]), key=lambda p: p[2])
    found = sorted((p for p in pairs if not p[1] and p[3]), key=lambda p: p[2])
    far = sorted((p for p in pairs if p[2] < threshold and p[3]), key=lambda p: p[2])
    for title, rows in (("grouped, not byte-identical (lowest resemblance first)", found),
                        (f"missed at exact resemblance >= {threshold}", missed),
                        (f"grouped below {threshold}", far)):
        print(f"\n{title}: {len(rows)}")
        for rel, _, r, _, url, other in rows[: args.examples]:
            a, b = sketches.get(url), sketches.get(other)
            est = float("nan") if a is None or b is None else resemblance(
                decode_sketch(a), decode_sketch(b))
            print(f"  {rel}  exact {r:.3f}  sketch {est:.3f}")
    roots = {pa: Path(da), pb: Path(db)}

    def file_of(url: str) -> Path | None:
        for prefix, root in roots.items():
            if url.startswith(prefix):
                rel = url[len(prefix):].split("#")[0].split("?")[0] or "index.html"
                path = root / rel
                return path / "index.html" if rel.endswith("/") else path
        return None

    def rel_of(url: str) -> str:
        return next((url[len(p):] for p in roots if url.startswith(p)), url)

    cross = sorted((u, g) for u, g in group.items() if g != u and rel_of(u) != rel_of(g))
    print(f"\ngrouped with a page at another path: {len(cross)}")
    for u, g in cross[: 3 * args.examples]:
        fu, fg = file_of(u), file_of(g)
        if fu is None or fg is None or not (fu.is_file() and fg.is_file()):
            continue
        tu, tg = text_of(fu), text_of(fg)
        how = "byte copy" if fu.read_bytes() == fg.read_bytes() else (
            f"sketch {stored.get(u, float('nan')):.3f}")
        print(f"  {rel_of(u)} -> {rel_of(g)}: {how}, exact {exact_resemblance(tu, tg):.3f}, "
              f"{len(tu.split())} and {len(tg.split())} words")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
