"""The event loop a crawl runs on: uvloop when it is installed, else asyncio's own.

uvloop (libuv under Cython) runs the crawl's callbacks, timers and socket reads with
less interpreter work than asyncio's selector loop: the measured fetch cost of one
loopback request falls by a fifth to a third (``benchmarks/bench_fetch.py``), and the
shard workers are CPU-bound.  It is a hard dependency on POSIX (``pyproject.toml``);
when it cannot be imported (Windows, or a hand-made install) asyncio's loop is used,
with the same behaviour.  ``WEBCRAWL_LOOP=asyncio`` forces asyncio's loop (to compare,
or to rule uvloop out when a crawl misbehaves).

uvloop's clock (``loop.time()``) has millisecond resolution and is read once per loop
iteration, so a timer may fire up to about a millisecond early against
``time.monotonic()``: politeness waits therefore use :func:`webcrawl.crawler.politeness.sleep_until`
(which re-checks the clock), never a bare ``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["loop_name", "run"]

T = TypeVar("T")

#: the environment variable that picks the loop (``asyncio`` or ``uvloop``)
LOOP_ENV = "WEBCRAWL_LOOP"


def _uvloop() -> Any | None:
    if os.environ.get(LOOP_ENV, "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop


def loop_name() -> str:
    """``"uvloop"`` or ``"asyncio"``: the loop :func:`run` would use."""
    return "asyncio" if _uvloop() is None else "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the crawl's loop (see the module docstring)."""
    uvloop = _uvloop()
    if uvloop is None:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)
