"""Near-duplicate test: precision and recall on the fixture's planted pages, and its cost.

Builds a fixture web with planted near-duplicates (``--pairs`` pairs, of the six kinds
of :mod:`webcrawl.fixtures.near`) and ``--similar`` distinct-but-similar pages, renders
every page as the fixture server serves it, takes each page's fingerprint through the
crawl's own path (:func:`webcrawl.crawler.links.extract_links` with ``sketch``)
and runs the crawl's test (:class:`webcrawl.crawler.near_seen.NearSeen`) over the
pages in page-id order and in a shuffled order.  Prints, for the default threshold
and for every threshold of ``--curve``:

* recall per kind: planted pairs whose two pages end in one group;
* precision: of the pairs of pages put in one group, the share that are planted
  pairs (per kind: the pairs that hold a page of that kind); for the similar pages,
  the pairs of them merged (every one a false merge);

and, with ``--variants``, the same for other shingle lengths (1, 3 and 4 words: Broder
et al. used 10, later work 4) and for Charikar's 64-bit simhash of the same shingles
at Hamming distance k (Manku et al. 2007: k = 3), against which the default was
chosen.

Cost: microseconds per page of link extraction alone and with the sketch, on
the same rendered pages, interleaved round by round (A, B, A, B ...), and of the test
itself; to see what the sketch's cost is made of, also the sketch of a fixed 10-word
text after each page's link extraction (what a page pays whatever its text: numpy's
per-call cost, paid with the caches cold from the parse) and the pages' text
sketches back to back with no parse between, and the link extraction taking the text,
sketched 16 or 64 pages at once (``shingles.text_sketches``); the texts sketched 2, 16
and 64 at once with no parse between (a shard worker's answer frames against a commit's
pages); the page's text alone after the parse, as
:func:`~webcrawl.crawler.page_text.page_text` finds the furniture and with the one
selector of tags and role values it replaced (the same text); ``--html-dir`` adds the
same on real HTML files.  ``--figure PATH`` writes the threshold curve (PNG).  Run from
the repository root::

    PYTHONPATH=. python benchmarks/bench_near_dup.py [--pages 8000 --pairs 1200
        --similar 1000] [--curve 0.5,0.8,...] [--variants] [--html-dir DIR]
        [--figure out.png]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from selectolax.lexbor import LexborCSSSelector, LexborHTMLParser
from webcrawl.crawler.encodings import decode_page, page_encoding
from webcrawl.crawler.links import extract_links
from webcrawl.crawler.near_seen import NearSeen
from webcrawl.crawler.page_text import _FURNITURE  # the one-selector reference
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shingles import (
    MIN_WORDS,
    page_text,
    shingle_hashes,
    text_sketch,
    text_sketches,
)
from webcrawl.fixtures import FixtureConfig, FixtureWeb
from webcrawl.fixtures.html import PageRenderer
from webcrawl.fixtures.near import NEAR_KINDS

PORT = 8400
Groups = dict[int, int]  # page -> its group's leader (every tested page)


def fixture_pages(pages: int, hosts: int, pairs: int, similar: int,
                  seed: int) -> tuple[FixtureWeb, list[tuple[bytes, str]]]:
    web = FixtureWeb.build(FixtureConfig(pages=pages, hosts=hosts, seed=seed,
                                         near_duplicate_pairs=pairs, similar_pages=similar))
    renderer = PageRenderer(web, PORT)
    return web, [(renderer.render(p, 0), web.url_of(p, PORT)) for p in range(web.pages)]


def groups_of(sketches: Sequence[np.ndarray | None], threshold: float,
              order: Sequence[int]) -> Groups:
    seen = NearSeen(threshold)
    for page in order:
        seen.see(page, sketches[page])
    out = {}
    for page in order:
        if sketches[page] is not None:
            near = seen.near_of(page)
            out[page] = page if near is None else near[0]
    return out


def score(web: FixtureWeb, groups: Groups) -> dict[str, tuple[float, float, int]]:
    """Per kind (and ``all``): (recall, precision, pairs merged)."""
    plan = web.near
    members: dict[int, list[int]] = defaultdict(list)
    for page, leader in groups.items():
        members[leader].append(page)
    kind_of = {p: ("similar" if k == len(NEAR_KINDS) else NEAR_KINDS[k])
               for p, k in enumerate(plan.kind.tolist()) if k >= 0}
    merged: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for group in members.values():
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                good = plan.group[a] >= 0 and plan.group[a] == plan.group[b]
                kinds = {kind_of.get(a, "other"), kind_of.get(b, "other")}
                for kind in kinds | {"all"}:
                    merged[kind] += 1
                    right[kind] += good
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for source in np.flatnonzero(plan.copy >= 0).tolist():
        kind = NEAR_KINDS[plan.kind[source]]
        copy = int(plan.copy[source])
        hit = source in groups and copy in groups and groups[source] == groups[copy]
        for key in (kind, "all"):
            total[key] += 1
            found[key] += hit
    out = {}
    for kind in (*NEAR_KINDS, "similar", "all"):
        recall = found[kind] / total[kind] if total[kind] else float("nan")
        precision = right[kind] / merged[kind] if merged[kind] else 1.0
        out[kind] = (recall, precision, merged[kind])
    return out


def print_table(title: str, table: dict[str, tuple[float, float, int]]) -> None:
    print(f"\n{title}")
    print(f"{'kind':<11} {'recall':>7} {'precision':>9} {'pairs merged':>12}")
    for kind, (r, p, m) in table.items():
        rs = "-" if r != r else f"{r:.3f}"
        print(f"{kind:<11} {rs:>7} {p:>9.3f} {m:>12,}")


def simhash_groups(texts: list[str], k: int, order: Sequence[int], w: int = 2) -> Groups:
    """Charikar's 64-bit simhash of the same shingles (each occurrence weighted 1), leader
    clustering at Hamming distance <= ``k`` (Manku et al. 2007: k = 3): the reference
    the default was chosen against (all leaders compared)."""
    prints: list[int | None] = []
    for text in texts:
        features = shingle_hashes(text, w)
        if features.size <= MIN_WORDS - w:
            prints.append(None)
            continue
        bits = np.unpackbits(features.astype("<u8").view(np.uint8))
        ones = bits.reshape(-1, 64).sum(axis=0)
        prints.append(int.from_bytes(np.packbits(2 * ones > features.size).tobytes(),
                                     "little"))
    leaders: list[tuple[int, int]] = []
    out: Groups = {}
    for page in order:
        fp = prints[page]
        if fp is None:
            continue
        best = min(leaders, key=lambda lf: ((lf[1] ^ fp).bit_count(), lf[0]), default=None)
        if best is not None and (best[1] ^ fp).bit_count() <= k:
            out[page] = best[0]
        else:
            leaders.append((page, fp))
            out[page] = page
    return out


def interleaved(fns: dict[str, Callable[[], None]], rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.process_time()
            fn()
            times[name].append(time.process_time() - t0)
    return {name: statistics.median(v) for name, v in times.items()}


#: A text of 10 words: its sketch costs what any page's costs whatever its length.
_TINY = "one two three four five six seven eight nine ten"


def cost(label: str, pages: list[tuple[bytes, str]], rounds: int) -> None:
    s = CrawlSettings()

    def links_only() -> None:
        for body, url in pages:
            extract_links(body, url, max_links=s.links_max_per_page)

    def with_sketch() -> None:
        for body, url in pages:
            extract_links(body, url, max_links=s.links_max_per_page, sketch=True)

    def batched(size: int) -> Callable[[], None]:
        def with_batched_sketches() -> None:
            texts: list[str] = []
            for body, url in pages:
                text = extract_links(body, url, max_links=s.links_max_per_page,
                                     text=True).text
                texts.append(text or "")
                if not size:
                    texts.clear()
                elif len(texts) == size:
                    text_sketches(texts)
                    texts.clear()
            text_sketches(texts)
        return with_batched_sketches

    def with_tiny_sketch() -> None:
        for body, url in pages:
            extract_links(body, url, max_links=s.links_max_per_page)
            text_sketch(_TINY)

    sketches = [extract_links(b, u, sketch=True).sketch for b, u in pages]
    texts = [page_text(LexborHTMLParser(body)) for body, _ in pages]

    def sketches_only() -> None:
        for text in texts:
            text_sketch(text)

    def sketches_by(size: int) -> Callable[[], None]:
        def sketches_in_batches() -> None:
            for start in range(0, len(texts), size):
                text_sketches(texts[start:start + size])
        return sketches_in_batches

    def test_only() -> None:
        seen = NearSeen(s.near_min_resemblance)
        for i, sk in enumerate(sketches):
            seen.see(i, sk)

    t = interleaved({"links": links_only, "links+sketch": with_sketch,
                     "links+text": batched(0), "links+batch16": batched(16),
                     "links+batch64": batched(64),
                     "links+tiny": with_tiny_sketch, "sketches": sketches_only,
                     "sketches2": sketches_by(2), "sketches16": sketches_by(16),
                     "sketches64": sketches_by(64), "test": test_only}, rounds)
    text, text_full = text_costs(pages, rounds)
    n = len(pages)
    base, fp = t["links"] / n * 1e6, t["links+sketch"] / n * 1e6
    print(f"\ncost on {label} ({n:,} pages, median of {rounds} interleaved rounds, CPU):")
    print(f"  link extraction            {base:8.1f} us a page")
    print(f"  + text sketch              {fp - base:8.1f} us a page ({fp / base - 1:+.1%})")
    print(f"  + the text only            {t['links+text'] / n * 1e6 - base:8.1f} us a page"
          " (no sketch)")
    for size in (16, 64):
        fb = t[f"links+batch{size}"] / n * 1e6
        print(f"  + text, sketched {size:2} at once {fb - base:8.1f} us a page"
              f" ({fb / base - 1:+.1%})")
    print(f"  + sketch of a 10-word text {t['links+tiny'] / n * 1e6 - base:8.1f} us a page"
          " (the fixed part)")
    print(f"  text sketches back to back {t['sketches'] / n * 1e6:8.1f} us a page"
          " (no parse between)")
    for size in (2, 16, 64):
        print(f"  text sketches, {size:2} at once  {t[f'sketches{size}'] / n * 1e6:8.1f} us a page"
              " (no parse between)")
    print(f"  the page's text            {text:8.1f} us a page (after the parse and the links)")
    print(f"  the text, full selector    {text_full:8.1f} us a page"
          " (the five role values in the selector)")
    print(f"  near-duplicate test        {t['test'] / n * 1e6:8.1f} us a page")


def text_costs(pages: list[tuple[bytes, str]], rounds: int) -> tuple[float, float]:
    """Microseconds a page of :func:`page_text` and of :func:`_full_selector_text`, each
    timed alone on a freshly parsed page whose links were walked, paired page by page
    (the order alternating): a loop of one function over all pages against a loop of the
    other moved with the machine's load by more than their difference."""
    html = [decode_page(body, page_encoding(body, None)) for body, _ in pages]
    total = [0, 0]
    fns = (page_text, _full_selector_text)
    for r in range(rounds):
        for i, doc in enumerate(html):
            for k in ((0, 1) if (i + r) % 2 else (1, 0)):
                tree = LexborHTMLParser(doc)
                tree.tags("a")
                t0 = time.thread_time_ns()
                fns[k](tree)
                total[k] += time.thread_time_ns() - t0
    n = rounds * len(html) * 1e3
    return total[0] / n, total[1] / n


def _full_selector_text(tree: LexborHTMLParser) -> str:
    """:func:`page_text` with the furniture found by the one selector :data:`_FURNITURE`
    (tags and the five role values), as it was found before: the same text."""
    found = _SELECTOR.find(_FURNITURE, tree.root) if tree.root is not None else []
    for node in reversed(list({node.mem_id: node for node in found}.values())):
        node.decompose()
    return "" if tree.body is None else tree.body.text(deep=True, separator=" ")


_SELECTOR = LexborCSSSelector()


def html_files(folder: Path, limit: int) -> list[tuple[bytes, str]]:
    files = sorted(folder.rglob("*.html"))
    step = max(1, len(files) // limit)
    return [(f.read_bytes(), "https://docs.example.org/" + str(f.relative_to(folder)))
            for f in files[::step][:limit]]


def figure(curve: list[tuple[float, dict[str, tuple[float, float, int]]]], path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6))
    ax = fig.add_subplot()
    ks = [k for k, _ in curve]
    ax.plot(ks, [t["all"][0] for _, t in curve], marker="o", label="recall")
    ax.plot(ks, [t["all"][1] for _, t in curve], marker="s", label="precision")
    ax.axhline(0.95, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("least estimated resemblance (2-word shingles)")
    ax.set_ylabel("pairs")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right")
    ax.set_title("Near-duplicate test on the fixture's planted pages")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\nwrote {path}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=8000)
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=1200)
    ap.add_argument("--similar", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--curve", default="0.3,0.4,0.5,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95,1.0",
                    help="thresholds, comma-separated")
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cost-pages", type=int, default=2000)
    ap.add_argument("--html-dir", type=Path)
    ap.add_argument("--html-files", type=int, default=500)
    ap.add_argument("--figure", type=Path)
    ap.add_argument("--cost-only", action="store_true", help="only the cost figures")
    args = ap.parse_args(argv)

    web, pages = fixture_pages(args.pages, args.hosts, args.pairs, args.similar, args.seed)
    print(f"fixture: {web.pages:,} pages on {web.hosts} hosts, {args.pairs:,} planted pairs "
          f"({args.pairs // len(NEAR_KINDS)} of each of {len(NEAR_KINDS)} kinds), "
          f"{args.similar:,} similar pages")
    if args.cost_only:
        cost("fixture pages", pages[: args.cost_pages], args.rounds)
        if args.html_dir:
            cost(str(args.html_dir), html_files(args.html_dir, args.html_files), args.rounds)
        return 0
    sketches = [extract_links(body, url, sketch=True).sketch for body, url in pages]
    default = CrawlSettings().near_min_resemblance
    by_id = list(range(web.pages))
    shuffled = np.random.default_rng(args.seed).permutation(web.pages).tolist()
    print_table(f"default test (resemblance >= {default}), pages in id order",
                score(web, groups_of(sketches, default, by_id)))
    print_table(f"default test (resemblance >= {default}), pages in a shuffled order",
                score(web, groups_of(sketches, default, shuffled)))
    thresholds = [float(x) for x in args.curve.split(",")]
    curve = [(t, score(web, groups_of(sketches, t, by_id))) for t in thresholds]
    print("\nthreshold curve (all kinds, id order)")
    print(f"{'least r':>7} {'recall':>7} {'precision':>9} {'pairs merged':>12}  worst kind")
    for t, table in curve:
        r, p, m = table["all"]
        worst = min(NEAR_KINDS, key=lambda kind: table[kind][0])
        print(f"{t:>7.2f} {r:>7.3f} {p:>9.3f} {m:>12,}  {worst} {table[worst][0]:.3f}")
    if args.figure:
        figure(curve, args.figure)
    if args.variants:
        texts = [page_text(LexborHTMLParser(body)) for body, _ in pages]
        for w in (1, 3, 4):
            vs = [text_sketch(t, w=w) for t in texts]
            for t in (0.7, default, 0.9):
                tab = score(web, groups_of(vs, t, by_id))
                worst = min(NEAR_KINDS, key=lambda kind: tab[kind][0])
                print(f"variant {w}-word shingles, r >= {t}: recall {tab['all'][0]:.3f} "
                      f"(worst {worst} {tab[worst][0]:.3f}), precision {tab['all'][1]:.3f}, "
                      f"similar pairs merged {tab['similar'][2]:,}")
        for k in (3, 4, 6, 8):
            tab = score(web, simhash_groups(texts, k, by_id))
            worst = min(NEAR_KINDS, key=lambda kind: tab[kind][0])
            print(f"simhash 64-bit, 2-word shingles, k = {k}: recall {tab['all'][0]:.3f} "
                  f"(worst {worst} {tab[worst][0]:.3f}), precision {tab['all'][1]:.3f}, "
                  f"similar pairs merged {tab['similar'][2]:,}")
    cost("fixture pages", pages[: args.cost_pages], args.rounds)
    if args.html_dir:
        cost(str(args.html_dir), html_files(args.html_dir, args.html_files), args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
