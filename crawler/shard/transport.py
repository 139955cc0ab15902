"""How orders and results travel: the :class:`Transport` interface and its pipe version.

A transport connects the coordinator to one worker.  The coordinator sends batches of
orders (:data:`~webcrawl.crawler.shard.protocol.WorkerOrder`) and receives batches of results
(:data:`~webcrawl.crawler.shard.protocol.WorkerReply`); ``receive`` returning None means the
worker is gone (killed, crashed), and the coordinator then starts a new one.  Three
methods, so the same coordinator drives child processes (:class:`PipeTransport`) or
Ray actors.

:class:`PipeTransport` runs ``python -m webcrawl.crawler.shard`` with its stdin and stdout
as pipes carrying frames: a 4-byte big-endian length, then a pickle of one batch
(a list: :mod:`webcrawl.crawler.child_pipes`).  The
worker's stderr is the coordinator's (its log lines show up as the crawl's).
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import sys
from collections.abc import Sequence
from typing import Any, Protocol

from webcrawl.crawler.child_pipes import HEADER, child_env, encode_frame
from webcrawl.crawler.shard.protocol import WorkerOrder, WorkerReply

__all__ = ["PipeTransport", "Transport", "encode_frame", "read_frame"]

#: Reads from a pipe in chunks of this size at most (asyncio's stream limit).
_PIPE_LIMIT = 1 << 24


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


class PipeTransport:
    """A worker child process over pipes (``python -m webcrawl.crawler.shard``)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        #: frame bytes written to and read from the worker (the exchange volume)
        self.bytes_sent = 0
        self.bytes_received = 0

    @classmethod
    async def spawn(cls, env: dict[str, str] | None = None) -> PipeTransport:
        """Start a worker process (it waits for its :class:`StartWorker` order)."""
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "webcrawl.crawler.shard",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env=child_env(env), limit=_PIPE_LIMIT)
        return cls(process)

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
