"""Dead hosts are named: a host the crawl cannot reach is said when it happens.

Two failures are reported at the default verbosity (log records at WARNING, which the
CLI prints as ``webcrawl: warning: ...``), each with its cause in the words of
:func:`~webcrawl.crawler.outcomes.error_cause` (``connection refused``, ``no address``,
``TLS: ...``, ``connect timeout``, ``HTTP 503``):

* a robots.txt that cannot be fetched (a connection error, a timeout, a 5xx): RFC 9309
  reads it as "disallow all", so the host's URLs wait for the retries
  (``robots_max_attempts`` fetches, ``robots_retry_delay`` apart) and then end
  ``robots_unreachable``, never ``robots_excluded``: the host's rules excluded nothing.
  Every robots.txt failure of a seed's host is said; of other hosts the first
  :data:`WARN_HOSTS`, the rest at INFO level (``-v``) and in the summary;
* a seed URL whose request failed (a network error or a timeout after its retries).

The crawl statistics keep the causes (:attr:`CrawlStats.unreachable
<webcrawl.crawler.engine.stats.CrawlStats.unreachable>`, :attr:`~CrawlStats.failed_seeds`)
for the summary line and the CLI's exit status; the database keeps the cause of each
unreachable host in the meta key ``robots_unreachable:<host[:port]>`` (emptied when the
file is fetched again), which the page export shows as the ``error`` of the host's
``robots_unreachable`` URLs and the report names, and a failed
request's cause in its ``fetches.error`` (``NetworkError: connection refused``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from webcrawl.crawler.orders import Attempt
from webcrawl.crawler.robots import RobotsRules, RobotsState
from webcrawl.crawler.urls import host_key
from webcrawl.storage.records import Outcome

if TYPE_CHECKING:
    from webcrawl.crawler.engine.core import Crawler

__all__ = ["META_ROBOTS_UNREACHABLE", "WARN_HOSTS", "DeadHosts"]

log = logging.getLogger(__name__)

#: Meta key prefix of an unreachable host's cause (``robots_unreachable:<host[:port]>``).
META_ROBOTS_UNREACHABLE = "robots_unreachable:"
#: Hosts (beyond the seeds') whose unreachable robots.txt is said at WARNING level.
WARN_HOSTS = 10


class DeadHosts:
    """Reports the hosts a crawl cannot reach (see the module docstring)."""

    def __init__(self, crawl: Crawler) -> None:
        self.crawl = crawl
        self._warned = 0
        self._seeds: frozenset[str] = frozenset()
        self._seed_hosts: frozenset[str] = frozenset()

    def open(self) -> None:
        """The crawl's seeds are known (a resume merged the stored ones)."""
        self._seeds = frozenset(self.crawl.seeds)
        self._seed_hosts = frozenset(host_key(u) for u in self._seeds)

    def _level(self, host: str) -> int:
        """WARNING for a seed's host and the first WARN_HOSTS others, then INFO."""
        if host in self._seed_hosts:
            return logging.WARNING
        self._warned += 1
        if self._warned <= WARN_HOSTS:
            return logging.WARNING
        if self._warned == WARN_HOSTS + 1:
            log.warning("more hosts have an unreachable robots.txt: counted in the "
                        "summary, named with -v")
        return logging.INFO

    def robots_answer(self, host_id: int, status: int | None, error: str | None,
                      rules: RobotsRules) -> None:
        """A robots.txt fetch ended: a failure is said and kept with its cause."""
        crawl = self.crawl
        host = crawl.registry.host_name(host_id)
        key = META_ROBOTS_UNREACHABLE + host
        if rules.state not in (RobotsState.UNAVAILABLE, RobotsState.DISALLOW_ALL):
            # Reachable (again): a cause stored before no longer holds.
            if crawl.stats.unreachable.pop(host, None) is not None or crawl.stored_meta(key):
                crawl.set_meta(key, "")
            return
        cause = error or (f"HTTP {status}" if status is not None else "unreachable")
        first = host not in crawl.stats.unreachable
        crawl.stats.unreachable[host] = cause
        crawl.set_meta(key, cause)
        attempts = crawl.settings.robots_max_attempts
        if rules.state is RobotsState.DISALLOW_ALL:
            log.log(self._level(host) if first else logging.WARNING,
                    "robots.txt of %s unreachable (%s) after %d attempts: its URLs are not "
                    "requested (%s)", host, cause, rules.failures,
                    Outcome.ROBOTS_UNREACHABLE.value)
        elif first:
            log.log(self._level(host),
                    "robots.txt of %s unreachable (%s): its URLs wait; attempt %d of %d, "
                    "the next in %g s", host, cause, rules.failures, attempts,
                    crawl.settings.robots_retry_delay)

    def page_failed(self, url_id: int, failed: Attempt) -> None:
        """A URL's request failed for good: a seed's failure is said with its cause."""
        crawl = self.crawl
        if failed.outcome not in (Outcome.NETWORK_ERROR, Outcome.TIMEOUT):
            return
        url = crawl.registry.url(url_id)
        if url not in self._seeds:
            return
        cause = (failed.error or "").partition(": ")[2] or failed.outcome.value
        crawl.stats.failed_seeds[url] = cause
        log.warning("seed %s could not be fetched: %s", url, cause)
