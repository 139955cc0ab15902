"""A pipe transport to a worker that is gone: sending is a no-op, receiving says it ended.

The coordinator sends batches from tasks nobody awaits; a worker killed between two
sends closed its pipe, and under uvloop a write to the closed pipe raised
``RuntimeError`` ("the handler is closed"), which escaped as a traceback on the crawl's
stderr.  Here the worker is a child that exits at once (no kill timing involved): every
send after its end, the first one that meets the broken pipe and the ones after it, must
return quietly, on asyncio's loop and uvloop alike.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

import pytest
from http1tools import event_loops, run_on
from webcrawl.crawler.shard.protocol import StopWorker
from webcrawl.crawler.shard.transport import PipeTransport

pytestmark = pytest.mark.timeout(60)


async def _sends_after_the_end() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-S", "-c", "pass",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    transport = PipeTransport(process)
    assert await transport.receive() is None  # its stdout ended: the worker is gone
    await process.wait()
    for _ in range(5):  # EPIPE first, then a closed pipe
        await transport.send([StopWorker()] * 10_000)
        await asyncio.sleep(0)
    assert await transport.receive() is None
    await transport.close()


@pytest.mark.parametrize("new_loop", event_loops())
def test_sends_to_a_lost_worker_are_dropped_quietly(
        new_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
    errors: list[dict[str, object]] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: errors.append(ctx))
        await _sends_after_the_end()

    run_on(new_loop, main())
    assert errors == []
