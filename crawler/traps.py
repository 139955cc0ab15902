"""URL-trap bounds, on by default: which discovered URLs look like an endless URL space.

Calendars (``/calendar/2024/5`` linking to the next month forever), session ids in the
query, faceted navigation (every combination of filters), relative links that pile up
path segments: a site can generate URLs without end.  Each rule below stops one
family; each is a setting (``None`` or a huge value turns it off) and counts how often
it fired, which the crawl summary shows.

=================  ===================================  =================================
rule               setting (default)                    stops
=================  ===================================  =================================
``url_length``     ``scope_max_url_length`` (2048)      ever-growing URLs
``path_repeat``    ``scope_max_path_repeat`` (3)        ``/a/b/a/b/a/b/...`` relative links
``query_params``   ``scope_max_query_params`` (32)      parameter pile-ups
``query_variants`` ``scope_max_query_variants`` (1000)  session ids, facets: distinct
                                                        queries of one path of one host
``path_pattern``   ``scope_max_pattern_urls`` (10000)   calendars, numbered pages: URLs
                                                        of one host whose path has the
                                                        same shape (digit runs as ``#``)
=================  ===================================  =================================

The last two are counts per host, so they are rebuilt on resume (:meth:`TrapGuard.count`).
Heritrix bounds traps similarly (``maxPathDepth``, ``maxHops``, path repetition);
Mercator removed them by URL patterns found by hand.
"""

from __future__ import annotations

import re
from collections import Counter

from webcrawl.crawler.settings import CrawlSettings

__all__ = ["TRAP_RULES", "TrapGuard", "path_pattern"]

#: Names of the rules, in the order they are checked.
TRAP_RULES = ("url_length", "path_repeat", "query_params", "query_variants", "path_pattern")

_DIGITS = re.compile(r"\d+")


def _split(url: str) -> tuple[str, str | None]:
    """(path, query or None) of a normalised absolute URL (no fragment)."""
    start = url.find("/", url.index("//") + 2)
    if start < 0:
        return "/", None
    rest = url[start:]
    path, sep, query = rest.partition("?")
    return path, (query if sep else None)


def path_pattern(path: str, query: str | None) -> str:
    """The shape of a path and its query keys: digit runs become ``#``, values drop.

    >>> path_pattern("/calendar/2024/11", None)
    '/calendar/#/#'
    >>> path_pattern("/view", "id=12&lang=en")
    '/view?id&lang'
    """
    shape = _DIGITS.sub("#", path)
    if query is None:
        return shape
    keys = sorted({p.partition("=")[0] for p in query.split("&") if p})
    return shape + "?" + "&".join(keys)


class TrapGuard:
    """The trap rules of one crawl (see the module docstring)."""

    def __init__(self, settings: CrawlSettings) -> None:
        self.max_url_length = settings.scope_max_url_length
        self.max_repeat = settings.scope_max_path_repeat
        self.max_params = settings.scope_max_query_params
        self.max_variants = settings.scope_max_query_variants
        self.max_pattern = settings.scope_max_pattern_urls
        #: times each rule kept a URL out
        self.fired: Counter[str] = Counter()
        self._variants: Counter[tuple[str, str]] = Counter()
        self._patterns: Counter[tuple[str, str]] = Counter()

    def check(self, url: str, hostport: str, *, count: bool = False) -> str | None:
        """The rule ``url`` breaks (counted in :attr:`fired`), or None; with ``count``,
        a URL that breaks none is counted as :meth:`count` does (its path and pattern
        worked out once)."""
        rule = self._rule(url, hostport, count)
        if rule is not None:
            self.fired[rule] += 1
        return rule

    def _rule(self, url: str, hostport: str, count: bool = False) -> str | None:
        if len(url) > self.max_url_length:
            return "url_length"
        path, query = _split(url)
        if self._repeats(path):
            return "path_repeat"
        if query is not None:
            if self.max_params is not None and query.count("&") + 1 > self.max_params:
                return "query_params"
            if (self.max_variants is not None
                    and self._variants[(hostport, path)] >= self.max_variants):
                return "query_variants"
        pattern = None
        if self.max_pattern is not None:
            pattern = (hostport, path_pattern(path, query))
            if self._patterns[pattern] >= self.max_pattern:
                return "path_pattern"
        if count:
            self._count(hostport, path, query, pattern)
        return None

    def _repeats(self, path: str) -> bool:
        segments = [s for s in path.split("/") if s]
        if len(segments) <= self.max_repeat:
            return False
        return max(Counter(segments).values()) > self.max_repeat

    def count(self, url: str, hostport: str) -> None:
        """Count a URL that was enqueued (after :meth:`check` passed, or on resume)."""
        path, query = _split(url)
        pattern = None if self.max_pattern is None else (hostport, path_pattern(path, query))
        self._count(hostport, path, query, pattern)

    def _count(self, hostport: str, path: str, query: str | None,
               pattern: tuple[str, str] | None) -> None:
        if query is not None and self.max_variants is not None:
            self._variants[(hostport, path)] += 1
        if pattern is not None:
            self._patterns[pattern] += 1
