"""Retries of transient fetch failures, with tenacity.

Retried: connection errors (:class:`~webcrawl.storage.errors.NetworkError`), timeouts
(:class:`~webcrawl.storage.errors.FetchTimeoutError`) and retryable statuses (5xx, 429, raised
by the engine as :class:`~webcrawl.storage.errors.HTTPStatusError`).  The wait before attempt
``k + 1`` is ``min(retry_backoff_max, retry_backoff * 2**(k-1)) + U(0, retry_jitter)``,
and never shorter than the host's politeness wait (which includes ``Retry-After``):
a retry is a request like any other.  After ``retry_attempts`` attempts the last error
is re-raised and becomes the URL's outcome.  The engine records every attempt as a
fetch row.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import FetchTimeoutError, HTTPStatusError, NetworkError

__all__ = ["RETRYABLE_ERRORS", "RetryPolicy", "is_retryable_status"]

if TYPE_CHECKING:
    from tenacity import AsyncRetrying

T = TypeVar("T")
RETRYABLE_ERRORS = (NetworkError, FetchTimeoutError, HTTPStatusError)


def is_retryable_status(status: int) -> bool:
    return status == 429 or 500 <= status < 600


class RetryPolicy:
    """Builds a tenacity controller per URL (see the module docstring)."""

    def __init__(self, settings: CrawlSettings, *, rng: random.Random | None = None) -> None:
        self.attempts = settings.retry_attempts
        self.base = settings.retry_backoff
        self.cap = settings.retry_backoff_max
        self.jitter = settings.retry_jitter
        self._rng = rng or random.Random()

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter after failed attempt number ``attempt`` (1-based)."""
        base = min(self.cap, self.base * 2.0 ** (attempt - 1))
        return base + self._rng.uniform(0.0, self.jitter)

    async def call(self, fn: Callable[[], Awaitable[T]], polite_wait: Callable[[], float],
                   sleep: Callable[[float], Awaitable[Any]]) -> T:
        """``await fn()`` with retries; the first attempt bypasses tenacity (hot path)."""
        try:
            return await fn()
        except RETRYABLE_ERRORS:
            if self.attempts <= 1:
                raise
        await sleep(max(self.backoff(1), polite_wait()))
        return await self.retrying(polite_wait, sleep, first_attempt=2)(fn)

    def retrying(self, polite_wait: Callable[[], float],
                 sleep: Callable[[float], Awaitable[Any]], *,
                 first_attempt: int = 1) -> AsyncRetrying:
        """A controller for attempts ``first_attempt..retry_attempts``.

        It waits ``max(backoff, polite_wait())`` between attempts, sleeping with ``sleep``.
        """
        # Imported here: only a retry needs it (4-5 ms at every worker's start).
        from tenacity import (
            AsyncRetrying,
            RetryCallState,
            retry_if_exception_type,
            stop_after_attempt,
        )

        offset = first_attempt - 1

        def wait(state: RetryCallState) -> float:
            return max(self.backoff(state.attempt_number + offset), polite_wait())

        return AsyncRetrying(
            stop=stop_after_attempt(self.attempts - offset),
            wait=wait,
            retry=retry_if_exception_type(RETRYABLE_ERRORS),
            sleep=sleep,
            reraise=True,
        )
