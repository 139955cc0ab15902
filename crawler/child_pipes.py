"""The crawl's child processes: the frames on their pipes, their environment, their end.

The crawl's children (the shard workers, :mod:`webcrawl.crawler.shard`; the
near-duplicate test's process, :mod:`webcrawl.crawler.near_process`) read from their
stdin and write to their stdout frames of one format: a 4-byte big-endian length, then
a pickle of one batch (a list).  Pickle is safe here: both ends are this program, on
this machine.  This module imports nothing heavy: a child that reads frames does not
load asyncio or the crawler for it.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
from collections.abc import MutableMapping, Sequence
from pathlib import Path
from typing import IO, Any

__all__ = ["HEADER", "child_env", "die_with_parent", "encode_frame", "one_blas_thread",
           "read_frame_from"]

#: A frame's length header.
HEADER = struct.Struct(">I")
_PICKLE = pickle.HIGHEST_PROTOCOL
_SOURCE_ROOT = str(Path(__file__).resolve().parents[1])


def encode_frame(batch: Sequence[Any]) -> bytes:
    """One frame: length header and pickle of ``batch`` (a list)."""
    data = pickle.dumps(list(batch), protocol=_PICKLE)
    return HEADER.pack(len(data)) + data


def read_frame_from(stream: IO[bytes]) -> list[Any] | None:
    """The next frame's batch from a blocking stream, or None at its end (also
    mid-frame: the writer died)."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        return None
    batch: list[Any] = pickle.loads(data)  # safe: both ends are this program
    return batch


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a child process of the crawl (``env`` added): it imports this
    very source tree, installed or not."""
    full = {**os.environ, **(env or {})}
    one_blas_thread(full)
    full["PYTHONPATH"] = os.pathsep.join(
        p for p in (_SOURCE_ROOT, full.get("PYTHONPATH", "")) if p)
    return full


def one_blas_thread(environ: MutableMapping[str, str]) -> None:
    """Ask OpenBLAS for one thread, unless the user chose a number (``environ`` is the
    environment a process imports numpy in: set before the import).

    The crawl does no dense linear algebra (its analyses use sparse products, and avoid
    BLAS even for a dot of two vectors), and numpy's OpenBLAS starts a thread per core
    when it loads: ``import numpy`` cost 0.27-0.29 CPU-s against 0.10-0.11 with one
    thread (this 2-core machine, 2026-12-07), paid by every crawl and every child.
    """
    environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def die_with_parent(parent: int | None = None) -> None:
    """Linux: SIGKILL this process when its parent dies (prctl PR_SET_PDEATHSIG); a
    child elsewhere ends at the end of its input.  A forked child gives ``parent``, the
    pid it was forked by: if that one died before the request, it exits at once."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:
        os._exit(0)
