"""Fixtures of the crawler tests (helpers live in ``miniweb.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any

import pytest
from miniweb import MiniWeb


@pytest.fixture
async def mini_web() -> AsyncIterator[MiniWeb]:
    web_ = MiniWeb()
    await web_.start()
    try:
        yield web_
    finally:
        await web_.stop()



@pytest.fixture
def loops(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The package of the running loop, recorded at every ``eventloop.run``."""
    from webcrawl.crawler import eventloop

    seen: list[str] = []
    real = eventloop.run

    def spy(coro: Coroutine[Any, Any, Any]) -> Any:
        async def noted() -> Any:
            seen.append(type(asyncio.get_running_loop()).__module__.split(".")[0])
            return await coro

        return real(noted())

    monkeypatch.setattr(eventloop, "run", spy)
    yield seen
