"""Link extraction and URL normalisation throughput (issue 21's WHATWG parser).

Prints links per second for a 3,303-link page shaped like a Sphinx changelog (relative
links, fragments, absolute links to other hosts, queries), parsed from text, and for
``normalize_url`` on distinct absolute URLs (cache misses) and relative references.

``--compare REF`` also times ``crawler/links.py`` and ``crawler/urls.py`` of git revision
``REF`` against the working tree's, in the same process and interleaved round by round
(A/B, then B/A ...), in microseconds of CPU per page (process time: other work on a
shared machine does not count) on the fixture web's pages (``--pages``, rendered as the
fixture server serves them, bytes) and, with ``--html-dir``, on ``--html-files`` real
HTML files spread evenly over a folder tree (a documentation tree, say); every page's
``PageLinks`` must be the same under both, or the script fails.  Before each timed pass
over the pages the URL caches of both revisions are emptied (every ``lru_cache`` of
``urls.py``), as a crawl meets each page once: cache hits come only from links shared
between pages.  Ratios within one run are what to compare; run it from the repository
root::

    PYTHONPATH=. python benchmarks/bench_links.py [--compare REF] [--pages 2000]
        [--html-dir DIR] [--html-files 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from urllib.parse import quote

from webcrawl.crawler import urls as urls_now
from webcrawl.crawler.links import extract_links
from webcrawl.crawler.urls import _normalize_absolute, normalize_url

ROOT = Path(__file__).resolve().parent.parent
PAGE = "https://docs.example.org/en/stable/changelog.html"
#: The site the files of ``--html-dir`` are served from, as far as their links go.
HTML_SITE = "https://docs.example.org/"

Pages = list[tuple[bytes, str]]


def changelog(n: int = 3303) -> str:
    parts = []
    for i in range(n):
        kind = i % 6
        if kind == 0:
            parts.append(f'<a href="#release-{i}">¶</a>')
        elif kind == 1:
            parts.append(f'<a href="api/module{i}.html#func{i}">f</a>')
        elif kind == 2:
            parts.append(f'<a href="https://github.com/org/proj/issues/{i}">#{i}</a>')
        elif kind == 3:
            parts.append(f'<a href="../{i}/index.html">v</a>')
        elif kind == 4:
            parts.append(f'<a href="/search.html?q=term{i}&check_keywords=yes">s</a>')
        else:
            parts.append(f'<a href="//pypi.org/project/pkg{i}/">p</a>')
    return "<!doctype html><html><body>" + "".join(parts) + "</body></html>"


def best(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def module_of_revision(ref: str, path: str) -> ModuleType:
    """``path`` (``crawler/links.py``) as of git revision ``ref``, imported as
    ``_links_<ref>`` (its stem, then ``ref``)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
                            capture_output=True, text=True, check=True).stdout
    name = f"_{Path(path).stem}_" + "".join(c if c.isalnum() else "_" for c in ref)
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, f"{ref}:{path}", "exec"), module.__dict__)
    return module


def links_of_revision(ref: str) -> ModuleType:
    """``crawler/links.py`` of git revision ``ref`` over that revision's ``urls.py``."""
    urls_then = module_of_revision(ref, "crawler/urls.py")
    name = "webcrawl.crawler.urls"
    current = sys.modules[name]
    sys.modules[name] = urls_then  # what links.py imports from
    try:
        return module_of_revision(ref, "crawler/links.py")
    finally:
        sys.modules[name] = current


def clear_url_caches(*modules: ModuleType) -> None:
    """Empty every ``lru_cache`` of these modules (URL normalisation's)."""
    for module in modules:
        for value in vars(module).values():
            if hasattr(value, "cache_clear"):
                value.cache_clear()


def fixture_pages(n: int) -> Pages:
    from webcrawl.fixtures.config import FixtureConfig
    from webcrawl.fixtures.html import PageRenderer
    from webcrawl.fixtures.web import FixtureWeb

    port = 8400
    web = FixtureWeb.build(FixtureConfig(pages=n, hosts=10, seed=1))
    renderer = PageRenderer(web, port)
    return [(renderer.render(p, 0), web.url_of(p, port)) for p in range(web.pages)]


def html_pages(folder: Path, n: int) -> Pages:
    """``n`` HTML files spread evenly over ``folder``'s sorted tree, with their URLs."""
    files = sorted(p for p in folder.rglob("*.html") if p.is_file())
    step = max(len(files) // n, 1)
    pages = []
    for path in files[::step][:n]:
        url = normalize_url(HTML_SITE + quote(path.relative_to(folder).as_posix()))
        if url is not None:
            pages.append((path.read_bytes(), url))
    return pages


def _fields(page: object) -> tuple[object, ...]:
    return tuple(getattr(page, f) for f in ("urls", "nofollow", "meta_nofollow",
                                            "meta_noindex", "cut"))


def compare(label: str, pages: Pages, before: ModuleType, rounds: int) -> None:
    """Check that both revisions give the same links, then time them interleaved."""
    old, new = before.extract_links, extract_links
    links = 0
    for html, url in pages:
        want, got = _fields(old(html, url)), _fields(new(html, url))
        if want != got:
            raise SystemExit(f"{label}: {url} differs\n  before {want}\n  after  {got}")
        links += len(got[0])  # type: ignore[arg-type]
    size = sum(len(html) for html, _ in pages) / len(pages)
    print(f"{label}: {len(pages)} pages, {size / 1024:.1f} KB and {links / len(pages):.1f} "
          "distinct links a page on average, identical PageLinks before and after")
    per_page: dict[str, list[float]] = {"before": [], "after": []}
    for r in range(rounds):
        order = [("before", old), ("after", new)]
        for which, fn in order if r % 2 == 0 else order[::-1]:
            clear_url_caches(urls_now, sys.modules[before.__name__.replace("_links_", "_urls_")])
            t0 = time.process_time()
            for html, url in pages:
                fn(html, url)
            per_page[which].append((time.process_time() - t0) / len(pages) * 1e6)
    b, a = statistics.median(per_page["before"]), statistics.median(per_page["after"])
    ratios = [x / y for x, y in zip(per_page["before"], per_page["after"], strict=True)]
    print(f"  before {b:8.1f} µs/page   after {a:8.1f} µs/page of CPU   (medians of {rounds} "
          f"rounds)   speedup {b / a:.2f}x (per-round {min(ratios):.2f}-{max(ratios):.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", metavar="REF",
                    help="also time crawler/links.py of git revision REF, page by page")
    ap.add_argument("--pages", type=int, default=2000, help="fixture pages (--compare)")
    ap.add_argument("--html-dir", type=Path, help="a tree of real HTML files (--compare)")
    ap.add_argument("--html-files", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    html = changelog()
    n_links = len(extract_links(html, PAGE, max_links=10_000).urls)
    t = best(lambda: extract_links(html, PAGE, max_links=10_000))
    print(f"extract_links: {n_links} distinct links in {t * 1e3:.1f} ms "
          f"({3303 / t:,.0f} anchors/s)")
    urls = [f"https://host{i % 997}.example.com/a/{i}/./b/../c?x={i}#f" for i in range(50_000)]
    _normalize_absolute.cache_clear()
    t0 = time.perf_counter()
    for u in urls:
        normalize_url(u)
    t = time.perf_counter() - t0
    print(f"normalize_url, distinct absolute URLs: {len(urls) / t:,.0f} URLs/s")
    refs = [f"../{i}/x.html?q={i}" for i in range(50_000)]
    t0 = time.perf_counter()
    for r in refs:
        normalize_url(r, PAGE)
    t = time.perf_counter() - t0
    print(f"normalize_url, relative references: {len(refs) / t:,.0f} URLs/s")

    if args.compare:
        before = links_of_revision(args.compare)
        print(f"\ncrawler/links.py: before = {args.compare}, after = the working tree")
        compare("changelog page", [(html.encode(), PAGE)], before, args.rounds)
        compare("fixture pages", fixture_pages(args.pages), before, args.rounds)
        if args.html_dir:
            compare(f"HTML files of {args.html_dir}", html_pages(args.html_dir, args.html_files),
                    before, args.rounds)


if __name__ == "__main__":
    main()
