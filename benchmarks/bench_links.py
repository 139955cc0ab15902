"""Link extraction and URL normalisation throughput (issue 21's WHATWG parser).

Prints links per second for a 3,303-link page shaped like a Sphinx changelog (relative
links, fragments, absolute links to other hosts, queries), parsed from text, and for
``normalize_url`` on distinct absolute URLs (cache misses) and relative references.
Ratios within one run are what to compare; run it from the repository root::

    PYTHONPATH=. python benchmarks/bench_links.py
"""

from __future__ import annotations

import time

from crawler.links import extract_links
from crawler.urls import _normalize_absolute, normalize_url

PAGE = "https://docs.example.org/en/stable/changelog.html"


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


def best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
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


if __name__ == "__main__":
    main()
