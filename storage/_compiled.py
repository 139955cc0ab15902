"""Optional compiled inner loops (private): numba when installed, else None (used by the
edge-list parser and, through :mod:`webcrawl.analysis._compiled`, the analyses).

numba is the optional extra ``webcrawl[fast]``; every caller keeps a numpy path for
when it is missing, and the tests check both paths give the same result.  Compiling
happens on first use (about a second a function; later processes load the machine
code numba cached on disk), never at import, so importing the analysis package stays
light.  :func:`worker_count` says how many CPUs the callers' threads and processes
may use (the analyses' threads, the crawl's choice of where its near-duplicate test
runs).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

__all__ = ["compiled", "worker_count"]

_cache: dict[Callable[..., Any], Any] = {}


def worker_count() -> int:
    """The CPUs this process may run on (its affinity), at least one."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def compiled(function: Callable[..., Any], *helpers: str) -> Any:
    """``function`` compiled by numba (nopython, GIL released), or None without numba.

    ``helpers`` names module-level functions that ``function`` calls: they are
    compiled first and bound in its module in place of the Python ones.
    """
    if function not in _cache:
        try:
            import numba
        except ImportError:
            _cache[function] = None
        else:
            space = function.__globals__
            for name in helpers:
                if not hasattr(space[name], "py_func"):
                    space[name] = _jit(numba, space[name])
            _cache[function] = _jit(numba, function)
    return _cache[function]


def _jit(numba: Any, function: Callable[..., Any]) -> Any:
    """numba's compiled ``function``, its machine code cached on disk (numba's
    ``__pycache__`` index, checked against the source file's time stamp): a process
    after the first loads it instead of compiling (about 3 CPU-seconds for the
    replays, 1 for PageRank and bow-tie each).  Without a writable cache location,
    compiled in each process as before."""
    try:
        return numba.njit(cache=True, nogil=True)(function)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return numba.njit(cache=False, nogil=True)(function)
