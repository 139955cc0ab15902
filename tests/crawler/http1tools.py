"""Client-side helpers of the HTTP/1.1 client tests: a client, a GET read to the end, the
event loops to run under."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import pytest
from webcrawl.crawler.http1 import Http1Client, Http1Response


def make_client(**overrides: Any) -> Http1Client:
    base: dict[str, Any] = dict(limit=8, keepalive=10.0, connect_timeout=5.0,
                                read_timeout=5.0, total_timeout=10.0)
    base.update(overrides)
    return Http1Client(**base)


@contextlib.asynccontextmanager
async def client_of(**overrides: Any) -> AsyncIterator[Http1Client]:
    client = make_client(**overrides)
    try:
        yield client
    finally:
        await client.close()


async def read_all(resp: Http1Response) -> bytes:
    out = bytearray()
    while chunk := await resp.read():
        out += chunk
    return bytes(out)


async def get(client: Http1Client, url: str, method: str = "GET"
              ) -> tuple[Http1Response, bytes]:
    resp = await client.request(method, url, [("User-Agent", "test/1")])
    try:
        return resp, await read_all(resp)
    finally:
        resp.close()


async def until(condition: Callable[[], bool]) -> None:
    """Yield to the loop until ``condition`` holds (the test's timeout bounds it)."""
    while not condition():
        await asyncio.sleep(0.001)


def event_loops() -> list[Any]:
    """``pytest.param`` s of the loop factories: asyncio's, and uvloop's when installed."""
    loops: list[Any] = [pytest.param(asyncio.new_event_loop, id="asyncio")]
    try:
        import uvloop
    except ImportError:  # pragma: no cover - depends on the environment
        return loops
    return [*loops, pytest.param(uvloop.new_event_loop, id="uvloop")]


def run_on(new_loop: Callable[[], asyncio.AbstractEventLoop],
           main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` to the end on a fresh loop of ``new_loop``."""
    loop = new_loop()
    try:
        loop.run_until_complete(main)
    finally:
        loop.close()
