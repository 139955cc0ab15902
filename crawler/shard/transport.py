"""How orders and results travel: the :class:`Transport` interface and its pipe version.

A transport connects the coordinator to one worker.  The coordinator sends batches of
orders (:data:`~webcrawl.crawler.shard.protocol.WorkerOrder`) and receives batches of results
(:data:`~webcrawl.crawler.shard.protocol.WorkerReply`); ``receive`` returning None means the
worker is gone (killed, crashed), and the coordinator then starts a new one.  Three
methods, so the same coordinator drives child processes (:class:`PipeTransport`) or
Ray actors.

:class:`PipeTransport` talks to a worker process (forked by
:mod:`webcrawl.crawler.shard.forks`) over its stdin and stdout, pipes carrying frames: a
4-byte big-endian length, then a pickle of one batch (a list:
:mod:`webcrawl.crawler.child_pipes`).  The worker's stderr is the coordinator's (its log
lines show up as the crawl's).
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
from collections.abc import Sequence
from typing import Any, Protocol

from webcrawl.crawler.child_pipes import HEADER, encode_frame
from webcrawl.crawler.shard.protocol import WorkerOrder, WorkerReply

__all__ = ["PipeTransport", "Transport", "WorkerProcess", "encode_frame", "read_frame"]


async def read_frame(reader: asyncio.StreamReader) -> list[Any] | None:
    """The next frame's batch, or None at end of stream (also mid-frame: the writer died)."""
    return (await _read_sized(reader))[0]


async def _read_sized(reader: asyncio.StreamReader) -> tuple[list[Any] | None, int]:
    try:
        header = await reader.readexactly(HEADER.size)
        (size,) = HEADER.unpack(header)
        data = await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        return None, 0
    batch: list[Any] = pickle.loads(data)  # safe: both ends are this program
    return batch, HEADER.size + size


class Transport(Protocol):
    """A connection to one worker (see the module docstring)."""

    async def send(self, orders: Sequence[WorkerOrder]) -> None:
        """Send one batch of orders (the worker answers each, in any order)."""

    async def receive(self) -> list[WorkerReply] | None:
        """The next batch of results (the last one ends with the worker's
        :class:`~webcrawl.crawler.shard.protocol.WorkerStopped`); None once the worker
        is gone."""

    async def close(self) -> None:
        """Stop the worker (if still there) and release the connection."""


class WorkerProcess(Protocol):
    """What :class:`PipeTransport` needs of a worker process: an asyncio child process,
    or a :class:`~webcrawl.crawler.shard.forks.ForkedWorker`."""

    @property
    def stdin(self) -> asyncio.StreamWriter | None: ...

    @property
    def stdout(self) -> asyncio.StreamReader | None: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def pid(self) -> int: ...

    async def wait(self) -> int: ...

    def kill(self) -> None: ...


class PipeTransport:
    """A worker process over pipes (forked: :mod:`webcrawl.crawler.shard.forks`)."""

    def __init__(self, process: WorkerProcess) -> None:
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        #: frame bytes written to and read from the worker (the exchange volume)
        self.bytes_sent = 0
        self.bytes_received = 0

    @property
    def pid(self) -> int:
        return self._process.pid

    async def send(self, orders: Sequence[WorkerOrder]) -> None:
        if self._stdin.is_closing():
            # The worker is gone and its pipe closed: receive() reports it.  (Writing
            # would raise RuntimeError under uvloop, which escaped a send task as a
            # traceback in 1 of 6 kills of a worker.)
            return
        frame = encode_frame(orders)
        self.bytes_sent += len(frame)
        try:
            self._stdin.write(frame)
            await self._stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the worker is gone: receive() reports it

    async def receive(self) -> list[WorkerReply] | None:
        batch, size = await _read_sized(self._stdout)
        self.bytes_received += size
        return batch

    async def close(self) -> None:
        if self._process.returncode is None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._stdin.close()
            try:
                await asyncio.wait_for(self._process.wait(), _CLOSE_WAIT)
            except TimeoutError:
                self._process.kill()
                await self._process.wait()


#: Seconds a worker gets to exit after its input closed before it is killed.
_CLOSE_WAIT = 5.0
