"""The fetch tasks of one dispatcher loop (shared by the crawl and the revisit loops).

A :class:`FetchTasks` group starts the loop's tasks, wakes the loop whenever one ends,
and turns the first exception escaping a task into a stop: fetch failures are recorded
inside the tasks, so what escapes is a store failure (disk full, read-only) that must
end the run, re-raised by the loop as :attr:`FetchTasks.fatal`.  :meth:`FetchTasks.stop`
is safe from a signal handler; a second call is an abort (:attr:`FetchTasks.aborted`),
which ends :meth:`FetchTasks.drain`, the grace a stop gives the requests under way.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

__all__ = ["FetchTasks"]

log = logging.getLogger(__name__)


class FetchTasks:
    """Tasks of one loop, its wake-up event and its stop flag."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        #: the first exception that escaped a task (the loop re-raises it)
        self.fatal: BaseException | None = None
        #: stopped twice (a second Ctrl-C): no grace for the requests under way
        self.aborted = False

    def __len__(self) -> int:
        """Tasks still running."""
        return len(self._tasks)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        """Ask the loop to stop soon (safe from a signal handler); again: abort."""
        if self._stop.is_set():
            self.aborted = True
        self._stop.set()
        self._wake.set()

    def wake(self) -> None:
        """Wake the loop now (new work, a result to apply)."""
        self._wake.set()

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def fail(self, error: BaseException) -> None:
        """End the run with ``error`` (the first one wins): the loop re-raises it."""
        if self.fatal is None:
            self.fatal = error
        self.stop()

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._wake.set()
        if not task.cancelled() and task.exception() is not None:
            self.fail(task.exception())  # type: ignore[arg-type]

    async def wait(self, until: float | None = None) -> None:
        """Sleep until a task ends, :meth:`wake`, :meth:`stop` or monotonic ``until``."""
        timer = None
        if until is not None:
            delay = max(0.0, until - time.monotonic())
            timer = asyncio.get_running_loop().call_later(delay, self._wake.set)
        try:
            await self._wake.wait()
        finally:
            self._wake.clear()
            if timer is not None:
                timer.cancel()

    async def drain(self, grace: float, in_flight: Callable[[], int] | None = None) -> None:
        """After a stop: wait while requests are under way (``in_flight()``, default
        every task) for up to ``grace`` seconds, unless aborted or failed meanwhile."""
        under_way = in_flight or self.__len__
        deadline = time.monotonic() + grace
        while under_way() > 0 and not self.aborted and self.fatal is None:
            if time.monotonic() >= deadline:
                log.info("stop: %d requests still under way after %.0f s: dropped",
                         under_way(), grace)
                return
            await self.wait(deadline)

    async def cancel(self, others: Iterable[asyncio.Task[Any]] = ()) -> None:
        """Cancel every running task (and ``others``) and wait for them to end."""
        tasks: list[asyncio.Task[Any]] = [*self._tasks, *others]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
