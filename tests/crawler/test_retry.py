"""The retry policy: which failures are retried, how often, and how long it waits
(exponential backoff with jitter, never shorter than the host's politeness wait)."""

from __future__ import annotations

import random

import pytest
from fakeweb import read_timeout, refused
from webcrawl.crawler.retry import RetryPolicy, is_retryable_status
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import FetchError, HTTPStatusError


def _policy(**kw: object) -> RetryPolicy:
    base: dict[str, object] = dict(retry_attempts=4, retry_backoff=0.5, retry_backoff_max=3.0,
                                   retry_jitter=0.0)
    base.update(kw)
    return RetryPolicy(CrawlSettings(**base), rng=random.Random(1))  # type: ignore[arg-type]


def test_backoff_doubles_up_to_its_cap_plus_bounded_jitter() -> None:
    assert [_policy().backoff(k) for k in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    jittery = _policy(retry_jitter=0.25)
    for k in range(1, 6):
        extra = jittery.backoff(k) - _policy().backoff(k)
        assert 0.0 <= extra <= 0.25


@pytest.mark.parametrize(("status", "retried"), [
    (429, True), (500, True), (503, True), (599, True), (404, False), (301, False), (200, False),
])
def test_retryable_statuses(status: int, retried: bool) -> None:
    assert is_retryable_status(status) is retried


class Script:
    """``fn`` raising the scripted errors, then answering; and a recording sleep."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0
        self.slept: list[float] = []

    async def fn(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "answer"

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


async def test_transient_failures_are_retried_with_backoff() -> None:
    script = Script(refused(), read_timeout(), HTTPStatusError(503, None))
    result = await _policy().call(script.fn, lambda: 0.0, script.sleep)
    assert result == "answer" and script.calls == 4
    assert script.slept == [0.5, 1.0, 2.0]


async def test_a_retry_never_comes_before_the_hosts_politeness_wait() -> None:
    script = Script(refused(), refused())
    await _policy().call(script.fn, lambda: 1.5, script.sleep)
    assert script.slept == [1.5, 1.5]  # the backoff (0.5, 1.0) was shorter


async def test_after_the_last_attempt_the_last_error_is_raised() -> None:
    script = Script(*(refused() for _ in range(3)), read_timeout())
    with pytest.raises(FetchError, match="read timeout"):
        await _policy().call(script.fn, lambda: 0.0, script.sleep)
    assert script.calls == 4 and len(script.slept) == 3


async def test_other_errors_are_not_retried() -> None:
    script = Script(FetchError("not transient"))
    with pytest.raises(FetchError, match="not transient"):
        await _policy().call(script.fn, lambda: 0.0, script.sleep)
    assert script.calls == 1 and script.slept == []


async def test_one_attempt_means_no_retry() -> None:
    script = Script(refused())
    with pytest.raises(FetchError):
        await _policy(retry_attempts=1).call(script.fn, lambda: 0.0, script.sleep)
    assert script.calls == 1 and script.slept == []
