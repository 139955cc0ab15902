"""The client's connections: one per origin, a cap on all of them, idle ones kept alive.

Contract (Mercator's politeness, on the client's side):

* **One request in flight per origin** (scheme, host, port): a request takes the
  origin's *turn* (:meth:`ConnectionPool.take_turn`); requests to a busy origin wait for
  it in arrival order (:meth:`~ConnectionPool.wait_turn`, FIFO) and
  :meth:`~ConnectionPool.pass_turn` hands it on.
* **At most ``limit`` connections** open or being opened (:meth:`~ConnectionPool.take_slot`):
  at the cap the least recently used idle connection is closed and its slot taken, else
  the request waits for a slot (FIFO).
* **Keep-alive**: a connection whose exchange ended reusable goes idle
  (:meth:`~ConnectionPool.release`) for its ``keepalive`` seconds, unless a request
  waits for a slot and none waits for its origin (then it is closed and its slot passed
  on); :meth:`~ConnectionPool.reuse` takes it back for the origin's next request.
* :meth:`~ConnectionPool.close` aborts every connection, idle or busy, and waits (1 s at
  most) until the transports are gone.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from webcrawl.storage.errors import FetchTimeoutError, NetworkError

if TYPE_CHECKING:
    from webcrawl.crawler.http1.connection import Connection
    from webcrawl.crawler.http1.wire import Origin

__all__ = ["ConnectionPool"]

#: seconds close() waits for the aborted transports to be gone
_CLOSE_WAIT = 1.0


class ConnectionPool:
    """Turns per origin, connection slots and idle connections (see the module docstring)."""

    def __init__(self, *, limit: int, keepalive: float) -> None:
        self.limit = limit
        #: seconds an idle connection is kept (less when its server says so)
        self.keepalive = keepalive
        self.closed = False
        #: connections whose transport has not called connection_lost yet
        self.live: set[Connection] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._open = 0                                   # connections holding a slot
        self._slot_waiters: deque[asyncio.Future[None]] = deque()
        self._busy: dict[Origin, deque[asyncio.Future[None]]] = {}  # origin -> its queue
        self._idle: dict[Origin, Connection] = {}        # least recently used first

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    @property
    def open_connections(self) -> int:
        """Connections open or being opened."""
        return self._open

    # -- an origin's turn ----------------------------------------------------------------
    def take_turn(self, origin: Origin) -> bool:
        """Take ``origin``'s turn if it is free (then the caller passes it on when done)."""
        if origin in self._busy:
            return False
        self._busy[origin] = deque()
        return True

    async def wait_turn(self, origin: Origin, deadline: float, url: str) -> None:
        """Wait for ``origin``'s turn after the requests before (FIFO)."""
        await self._queue(self._busy[origin], deadline, url, lambda: self.pass_turn(origin))

    def pass_turn(self, origin: Origin) -> None:
        """The request holding ``origin``'s turn is done: the next in line gets it."""
        queue = self._busy[origin]
        while queue:
            fut = queue.popleft()
            if not fut.done():
                fut.set_result(None)  # the turn passes on, the origin stays busy
                return
        del self._busy[origin]

    def reuse(self, origin: Origin) -> Connection | None:
        """``origin``'s idle connection, if it is still open (else it is closed)."""
        conn = self._idle.pop(origin, None)
        if conn is None:
            return None
        timer = conn.idle_timer  # (inline: this is every request's path)
        if timer is not None:
            timer.cancel()
            conn.idle_timer = None
        assert conn.transport is not None
        if not conn.lost and not conn.transport.is_closing():
            return conn
        self.discard(conn, clean=False)
        return None

    # -- slots ---------------------------------------------------------------------------
    async def take_slot(self, deadline: float, url: str) -> None:
        """A slot for a new connection: free, an idle connection's, or the next to free."""
        if self._open < self.limit:
            self._open += 1
            return
        if self._idle:  # close the least recently used idle connection, take its slot
            conn = next(iter(self._idle.values()))
            conn.counted = False
            self.discard(conn, clean=True)
            return
        await self._queue(self._slot_waiters, deadline, url, self.free_slot)
        if self.closed:
            self.free_slot()
            raise NetworkError(f"client closed fetching {url}")

    def free_slot(self) -> None:
        while self._slot_waiters:
            fut = self._slot_waiters.popleft()
            if not fut.done():
                fut.set_result(None)  # the slot passes on: _open unchanged
                return
        self._open -= 1

    async def _queue(self, queue: deque[asyncio.Future[None]], deadline: float, url: str,
                     give_back: Callable[[], None]) -> None:
        """Wait in ``queue`` until handed the turn; ``give_back`` returns an unused turn."""
        fut = self.loop.create_future()
        queue.append(fut)
        try:
            async with asyncio.timeout_at(deadline):
                await fut
        except BaseException as exc:
            if fut.done() and not fut.cancelled():
                give_back()
            if isinstance(exc, TimeoutError):
                raise FetchTimeoutError(f"total timeout fetching {url} (queued)") from None
            raise

    # -- the end of an exchange ----------------------------------------------------------
    def release(self, conn: Connection, reusable: bool) -> None:
        """The exchange on ``conn`` is over: keep it idle or close it; next in line."""
        origin = conn.origin
        if reusable and not self.closed and (not self._slot_waiters or self._busy[origin]):
            self._idle[origin] = conn
            conn.idle_timer = self.loop.call_later(conn.keepalive, self._expire, conn)
        else:
            self.discard(conn, clean=reusable)
        self.pass_turn(origin)

    def _expire(self, conn: Connection) -> None:
        conn.idle_timer = None
        self.discard(conn, clean=True)

    @staticmethod
    def _cancel_idle(conn: Connection) -> None:
        if conn.idle_timer is not None:
            conn.idle_timer.cancel()
            conn.idle_timer = None

    def discard(self, conn: Connection, clean: bool) -> None:
        """Close ``conn`` (idempotent); its slot goes to a waiter or back to the pool."""
        if self._idle.get(conn.origin) is conn:
            del self._idle[conn.origin]
        self._cancel_idle(conn)
        transport = conn.transport
        if transport is not None and not conn.lost and not transport.is_closing():
            if clean:
                transport.close()
            else:
                transport.abort()
        if conn.counted:
            conn.counted = False
            self.free_slot()

    async def close(self) -> None:
        """Abort every connection; wait (a second at most) for their transports to go."""
        self.closed = True
        for conn in list(self.live):
            conn.shut()
        for conn in list(self._idle.values()):
            self.discard(conn, clean=False)
        pending = [conn.gone() for conn in self.live]
        if pending:
            await asyncio.wait(pending, timeout=_CLOSE_WAIT)
