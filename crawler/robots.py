"""robots.txt rules per host (RFC 9309), parsed with Protego.

* 2xx: the file is parsed (longest match wins, Allow wins ties, ``*``/``$`` wildcards);
* 4xx ("unavailable"): everything is allowed;
* 5xx or unreachable: everything is disallowed until the file can be fetched; the
  crawler retries after ``robots_retry_delay`` and, after ``robots_max_attempts``
  failures, treats the host as fully disallowed (its URLs end ``robots_excluded``);
* a fetched file is cached for ``robots_cache_ttl`` (RFC 9309: at most 24 hours).

The crawler fetches ``/robots.txt`` of a host before any other URL of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from protego import Protego

from crawler.settings import CrawlSettings

__all__ = ["RobotsCache", "RobotsRules", "RobotsState"]


class RobotsState(StrEnum):
    UNKNOWN = "unknown"          # not fetched yet (or expired)
    PARSED = "parsed"            # 2xx: rules apply
    ALLOW_ALL = "allow_all"      # 4xx or obeying is off
    UNAVAILABLE = "unavailable"  # 5xx/unreachable: disallow all, retry later
    DISALLOW_ALL = "disallow_all"  # unavailable too many times


@dataclass(slots=True)
class RobotsRules:
    """One host's robots.txt state."""

    state: RobotsState = RobotsState.UNKNOWN
    parser: Any = None
    crawl_delay: float | None = None
    #: monotonic time the current state was learnt
    fetched_at: float = 0.0
    #: consecutive 5xx/unreachable fetches
    failures: int = 0
    #: monotonic time before which an unavailable file is not fetched again
    retry_at: float = 0.0

    def allowed(self, url: str, agent: str) -> bool:
        """Whether ``url`` may be fetched (only meaningful once the state is known)."""
        if self.state is RobotsState.ALLOW_ALL:
            return True
        if self.state is not RobotsState.PARSED:
            return False
        return bool(self.parser.can_fetch(url, agent))


class RobotsCache:
    """robots.txt state of every host, keyed by host id."""

    def __init__(self, settings: CrawlSettings) -> None:
        self.obey = settings.robots_obey
        self.agent = settings.fetch_robots_agent
        self.ttl = settings.robots_cache_ttl
        self.retry_delay = settings.robots_retry_delay
        self.max_attempts = settings.robots_max_attempts
        self.max_size = settings.robots_max_size
        self._rules: dict[int, RobotsRules] = {}

    def rules(self, host_id: int) -> RobotsRules:
        rules = self._rules.get(host_id)
        if rules is None:
            rules = self._rules[host_id] = RobotsRules()
            if not self.obey:
                rules.state = RobotsState.ALLOW_ALL
                rules.fetched_at = float("inf")
        return rules

    def needs_fetch(self, host_id: int, now: float | None = None) -> bool:
        """True if robots.txt must be (re)fetched before another URL of the host."""
        rules = self.rules(host_id)
        now = time.monotonic() if now is None else now
        if rules.state is RobotsState.UNKNOWN:
            return True
        if rules.state is RobotsState.UNAVAILABLE:
            return True
        if rules.state is RobotsState.DISALLOW_ALL:
            return False
        return now - rules.fetched_at > self.ttl

    def wait_until(self, host_id: int) -> float:
        """Monotonic time before which an unavailable robots.txt is not retried."""
        rules = self.rules(host_id)
        return rules.retry_at if rules.state is RobotsState.UNAVAILABLE else 0.0

    def learn(self, host_id: int, status: int | None, body: str | None,
              now: float | None = None) -> RobotsRules:
        """Record a fetch of robots.txt: ``status`` None means unreachable."""
        rules = self.rules(host_id)
        now = time.monotonic() if now is None else now
        if status is not None and 200 <= status < 300:
            rules.parser = Protego.parse((body or "")[: self.max_size])
            rules.state = RobotsState.PARSED
            delay = rules.parser.crawl_delay(self.agent)
            rules.crawl_delay = float(delay) if delay is not None else None
            rules.failures = 0
        elif status is not None and 400 <= status < 500:
            rules.state, rules.parser, rules.crawl_delay, rules.failures = (
                RobotsState.ALLOW_ALL, None, None, 0)
        else:
            rules.failures += 1
            rules.parser = None
            rules.state = (RobotsState.DISALLOW_ALL if rules.failures >= self.max_attempts
                           else RobotsState.UNAVAILABLE)
            rules.retry_at = now + self.retry_delay
        rules.fetched_at = now
        return rules

    def restore(self, host_id: int, status: int | None, body: str | None,
                crawl_delay: float | None) -> None:
        """Rebuild a host's state from the store on resume (treated as freshly fetched)."""
        if status is None:
            return
        self.learn(host_id, status, body)
        if crawl_delay is not None:
            self.rules(host_id).crawl_delay = crawl_delay

    def allowed(self, host_id: int, url: str) -> bool:
        return self.rules(host_id).allowed(url, self.agent)
