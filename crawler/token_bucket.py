"""A token bucket: the revisit loop's fetch budget (:mod:`webcrawl.crawler.revisit.loop`)."""

from __future__ import annotations

import time

__all__ = ["TokenBucket"]


class TokenBucket:
    """At most ``rate`` takes per second on average, ``capacity`` at once (monotonic clock)."""

    def __init__(self, rate: float, capacity: float = 1.0, now: float | None = None) -> None:
        self.rate = float(rate)
        self.capacity = float(capacity)
        self.tokens = float(capacity)
        self.stamp = time.monotonic() if now is None else now

    def _refill(self, now: float) -> None:
        if now > self.stamp:
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now

    def wait(self, now: float) -> float:
        """Seconds until a token is available (0 if one is)."""
        self._refill(now)
        return 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate

    def take(self, now: float) -> None:
        self._refill(now)
        self.tokens -= 1.0


