"""The crawl's event loop (uvloop when importable) and waits that never end early."""

from __future__ import annotations

import asyncio
import importlib.util
import time

import pytest
from webcrawl.crawler import eventloop
from webcrawl.crawler.politeness import sleep_for, sleep_until

HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None
LOOPS = ["asyncio", pytest.param("uvloop", marks=pytest.mark.skipif(
    not HAVE_UVLOOP, reason="uvloop not installed"))]


def test_loop_choice_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBCRAWL_LOOP", "asyncio")
    assert eventloop.loop_name() == "asyncio"
    assert eventloop.run(_loop_module()) == "asyncio"
    monkeypatch.delenv("WEBCRAWL_LOOP")
    expected = "uvloop" if HAVE_UVLOOP else "asyncio"
    assert eventloop.loop_name() == expected
    assert eventloop.run(_loop_module()) == expected


async def _loop_module() -> str:
    module = type(asyncio.get_running_loop()).__module__
    return "uvloop" if module.startswith("uvloop") else "asyncio"


def test_run_returns_the_coroutine_result_and_raises_its_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def fail() -> None:
        raise KeyError("boom")

    for loop in ("asyncio", "uvloop"):
        monkeypatch.setenv("WEBCRAWL_LOOP", loop)
        assert eventloop.run(answer()) == 42
        with pytest.raises(KeyError):
            eventloop.run(fail())


@pytest.mark.parametrize("loop", LOOPS)
def test_sleep_until_never_returns_before_the_deadline(
        loop: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """uvloop's clock is millisecond-grained: a bare ``asyncio.sleep`` there can end up
    to a millisecond early, which for a host means a request before its time."""
    monkeypatch.setenv("WEBCRAWL_LOOP", loop)

    async def main() -> list[float]:
        early = []
        for i in range(60):
            deadline = time.monotonic() + 0.0002 + (i % 7) * 0.0004
            await sleep_until(deadline)
            early.append(deadline - time.monotonic())
            start = time.monotonic()
            await sleep_for(0.0013)
            early.append(start + 0.0013 - time.monotonic())
        return early

    assert max(eventloop.run(main())) <= 0


def test_sleep_in_the_past_returns_at_once() -> None:
    async def main() -> None:
        await sleep_until(time.monotonic() - 5)
        await sleep_for(-1)
        await sleep_for(0)

    asyncio.run(asyncio.wait_for(main(), 5))
