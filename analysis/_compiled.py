"""Optional compiled inner loops (private): numba when installed, else None; and the
threads that run them side by side, as many as the CPUs and the memory allow.

The one implementation of the compiler's set-up lives in
:mod:`webcrawl.storage._compiled` (the edge-list parser below the analyses uses it
too); this name keeps the analyses' import short.  Compiled functions release the
GIL, so :func:`run_parallel` runs several calls of them at once on plain threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from webcrawl.storage._compiled import compiled, worker_count

__all__ = ["available_memory", "compiled", "parallel_slots", "run_parallel", "worker_count"]


def available_memory() -> int | None:
    """Bytes of memory the system can give without swapping (``MemAvailable`` of
    ``/proc/meminfo``: free memory plus what the page cache can drop), or None where
    it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def parallel_slots(tasks: int, bytes_each: int, *, workers: int | None = None) -> int:
    """How many of ``tasks`` calls needing ``bytes_each`` bytes each to run at once:
    ``workers`` if given, else one a CPU (:func:`worker_count`) while the memory
    available now (:func:`available_memory`) holds them all with a quarter to spare;
    at least one, at most ``tasks``."""
    if workers is None:
        workers = worker_count()
        free = available_memory()
        if free is not None and bytes_each > 0:
            workers = min(workers, int(free * 0.75) // bytes_each)
    return max(1, min(workers, tasks))


def run_parallel(calls: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]]) -> list[Any]:
    """``[function(*arguments) for function, arguments in calls]``, the calls run on
    threads at once (one call: in this thread).  The functions must release the GIL
    (compiled ones do) for the threads to overlap; results in the order of ``calls``;
    the first exception raised is re-raised once every call has ended."""
    if len(calls) == 1:
        function, arguments = calls[0]
        return [function(*arguments)]
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        futures = [pool.submit(function, *arguments) for function, arguments in calls]
        return [future.result() for future in futures]
