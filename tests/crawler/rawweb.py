"""A scripted loopback HTTP/1.x server for client tests: raw bytes, counted connections.

Each request head is parsed (GET requests, no body) and handed with the connection's
writer to the test's ``answer`` coroutine, which writes whatever bytes the test wants and
returns whether to keep reading requests on that connection.  The server counts
connections (opened, closed, requests in flight), so tests assert keep-alive and the
one-connection-per-origin rule from the server's side.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RawRequest:
    conn: int                        # the connection's number, from 0
    line: str                        # the request line
    headers: list[tuple[str, str]] = field(default_factory=list)
    #: ``time.monotonic()`` when the server had read the request's head
    at: float = field(default_factory=time.monotonic)

    @property
    def path(self) -> str:
        return self.line.split(" ")[1]

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


Answer = Callable[[RawRequest, asyncio.StreamWriter], Awaitable[bool]]


def response(body: bytes = b"ok", status: str = "200 OK", *headers: str,
             version: str = "HTTP/1.1") -> bytes:
    """A response with Content-Length and the given extra header lines."""
    lines = [f"{version} {status}", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def reset(writer: asyncio.StreamWriter) -> None:
    """Abort the connection with a TCP reset instead of a FIN."""
    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
    writer.transport.abort()


def tls_for(host: str, folder: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context for ``host`` from a new trustme CA, and the CA's file in ``folder``."""
    import trustme

    ca = trustme.CA()
    ca_file = folder / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(host).configure_cert(server_ctx)
    return server_ctx, ca_file


async def keep_alive(req: RawRequest, writer: asyncio.StreamWriter) -> bool:
    """The default answer: the path as the body, connection kept."""
    writer.write(response(req.path.encode()))
    return True


class RawServer:
    """``async with RawServer(answer) as s``: listening on ``s.port`` of 127.0.0.1."""

    def __init__(self, answer: Answer = keep_alive, ssl_context: ssl.SSLContext | None = None
                 ) -> None:
        self.answer = answer
        self.ssl_context = ssl_context
        self.port = 0
        self.requests: list[RawRequest] = []
        self.connections = 0
        self.closed = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.max_open = 0
        #: set when the server stops: answers that stall wait on it
        self.stop = asyncio.Event()
        self._changed = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0,
                                                  ssl=self.ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop.set()
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        await self._server.wait_closed()

    def url(self, path: str = "/", host: str = "127.0.0.1", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    @property
    def open(self) -> int:
        return self.connections - self.closed

    async def wait_closed(self, count: int) -> None:
        """Until ``count`` connections have closed (the test's timeout bounds it)."""
        while self.closed < count:
            self._changed.clear()
            await self._changed.wait()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        number = self.connections
        self.connections += 1
        self.max_open = max(self.max_open, self.open)
        try:
            while await self._one(number, reader, writer):
                pass
        finally:
            self._writers.discard(writer)
            writer.transport.abort()
            self.closed += 1
            self._changed.set()
            self._tasks.discard(task)

    async def _one(self, number: int, reader: asyncio.StreamReader,
                   writer: asyncio.StreamWriter) -> bool:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            return False
        line, *rest = head.decode("latin-1").split("\r\n")
        req = RawRequest(number, line, [tuple(h.split(": ", 1)) for h in rest if h])  # type: ignore[misc]
        self.requests.append(req)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            keep = await self.answer(req, writer)
            with contextlib.suppress(ConnectionError):
                await writer.drain()
        finally:
            self.in_flight -= 1
        return keep
