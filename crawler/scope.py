"""Crawl scope and trap guards: which discovered URLs are enqueued.

A URL is in scope when it is http(s), its host matches an allowed host glob or lies
under an allowed domain (default: exactly the seeds' hosts), its depth is within
``scope_max_depth``, it trips none of the URL-trap bounds of :mod:`webcrawl.crawler.traps`
(length, path repetition, query parameters, query variants per path, URLs per path
pattern; on by default, counted in :attr:`Scope.traps`), its path does not end with
one of ``scope_skip_extensions`` (binary files), and its host has had fewer than
``scope_max_per_host`` URLs enqueued.  ``scope_max_pages`` is enforced by the engine
when taking URLs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from fnmatch import fnmatchcase

from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.traps import TrapGuard
from webcrawl.crawler.urls import host_key

__all__ = ["Scope", "describe_scope"]


def describe_scope(settings: CrawlSettings, seeds: Iterable[str]) -> str:
    """The hosts a crawl may visit, in words (for the progress line).

    >>> from webcrawl.crawler.settings import CrawlSettings
    >>> describe_scope(CrawlSettings(), ["http://a.test:8400/", "http://a.test:8400/x"])
    "the seeds' host a.test:8400"
    >>> describe_scope(CrawlSettings(scope_domains=("test",), scope_hosts=("x.org",)), [])
    'hosts x.org, domain test'
    """
    parts = []
    if settings.scope_hosts:
        parts.append("hosts " + ", ".join(settings.scope_hosts))
    if settings.scope_domains:
        parts.append(("domain " if len(settings.scope_domains) == 1 else "domains ")
                     + ", ".join(settings.scope_domains))
    if parts:
        return ", ".join(parts)
    hosts = sorted({host_key(s) for s in seeds})
    if not hosts:
        return "the seeds' hosts"
    shown = ", ".join(hosts[:3]) + (f" and {len(hosts) - 3} more" if len(hosts) > 3 else "")
    return f"the seeds' host{'s' if len(hosts) > 1 else ''} {shown}"


def _bare_host(hostport: str) -> str:
    if hostport.startswith("["):
        return hostport[: hostport.index("]") + 1]
    return hostport.rsplit(":", 1)[0] if ":" in hostport else hostport


class Scope:
    """Decides whether a normalised URL is crawled; see the module docstring."""

    def __init__(self, settings: CrawlSettings, seeds: Iterable[str]) -> None:
        self.max_depth = settings.scope_max_depth
        self.max_per_host = settings.scope_max_per_host
        self.skip_ext = tuple(e.lower() for e in settings.scope_skip_extensions)
        self.host_globs = tuple(h.lower() for h in settings.scope_hosts)
        self.domains = tuple(d.lower().strip(".") for d in settings.scope_domains)
        self.exact_hosts: frozenset[str] = frozenset()
        if not self.host_globs and not self.domains:
            # Default: the seeds' hosts (with port, so sibling ports are other sites).
            self.exact_hosts = frozenset(host_key(s) for s in seeds)
        self._host_ok: dict[str, bool] = {}
        self._per_host: Counter[str] = Counter()
        self.traps = TrapGuard(settings)

    def host_allowed(self, hostport: str) -> bool:
        ok = self._host_ok.get(hostport)
        if ok is None:
            ok = self._host_ok[hostport] = self._check_host(hostport)
        return ok

    def _check_host(self, hostport: str) -> bool:
        if hostport in self.exact_hosts:
            return True
        host = _bare_host(hostport)
        if any(fnmatchcase(hostport, g) or fnmatchcase(host, g) for g in self.host_globs):
            return True
        return any(host == d or host.endswith("." + d) for d in self.domains)

    def binary(self, url: str) -> bool:
        """True if the URL's path ends with a skipped (binary) extension."""
        end = url.find("?")
        path = (url[:end] if end >= 0 else url).lower()
        return bool(self.skip_ext) and path.endswith(self.skip_ext)

    def admit(self, url: str, hostport: str, depth: int) -> bool:
        """Whether to enqueue ``url`` (counts it against its host's cap when admitted)."""
        if not self.host_allowed(hostport):
            return False
        if self.max_depth is not None and depth > self.max_depth:
            return False
        if self.binary(url):
            return False
        if self.max_per_host is not None and self._per_host[hostport] >= self.max_per_host:
            return False
        if self.traps.check(url, hostport, count=True) is not None:
            return False
        self._per_host[hostport] += 1
        return True

    def count(self, hostport: str, url: str) -> None:
        """Count an enqueued URL against its host's caps (also on resume)."""
        self._per_host[hostport] += 1
        self.traps.count(url, hostport)
