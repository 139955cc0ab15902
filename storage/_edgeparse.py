"""A compiled byte parser for integer edge lists (private).

Contract: :func:`parse_int_edges` returns the first two columns of a plain (not gzip)
edge file as int32 arrays in parts, exactly as the pyarrow reader of
:mod:`webcrawl.storage.edgelist` would, or None whenever the file is anything but
well-formed integer lines whose ids fit int32 (or numba is not installed): then the
caller reads it with pyarrow as before, errors and wider types included.  So the
parser only has to be right on the lines it accepts; it never has to explain a
rejection.

Accepted, line by line after the leading comment/blank/header lines (``start``):
``#`` comment lines and blank lines anywhere (pyarrow's fallback path drops them
too), optional blanks before the first field, fields separated by runs of spaces or
tabs, ``-`` signs, ``\\r\\n`` line ends, trailing blanks, and as many fields as the first
data line has (the columns after two are skipped unread; with a header row they may
not hold a ``"``, as quoted fields could hide a line break).

Cost: the file is read in blocks of :data:`BLOCK_BYTES` into reused buffers (one
input and two int32 output buffers a slot, three slots: about 150 MB whatever the
file's size), each block parsed by one compiled pass over its bytes, two blocks at a
time on two threads (the loop releases the GIL), and its links copied out: 8 bytes a
link of output.  Measured (``docs/results/import.md``): the loop parses about 600 MB
of text a CPU-second, the whole reading 180-400 MB against pyarrow's 110-150.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from webcrawl.storage._compiled import compiled

__all__ = ["BLOCK_BYTES", "count_ids", "parse_int_edges", "remap_into", "sources_into"]

#: Bytes of the file parsed by one call of the compiled loop.
BLOCK_BYTES = 16 << 20
#: Blocks parsed at once (two cores).
_THREADS = 2
#: A transparent huge page: parsed parts start on one (see :func:`_copy_aligned`).
_HUGE_PAGE = 1 << 21


def parse_int_edges(path: Path, start: int, fields: int,
                    quoted: bool) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    """Source and destination ids (int32 parts) of the plain edge file ``path``, from
    byte ``start`` on; ``fields`` is the number of fields of its first data line,
    ``quoted`` whether it has a header row (fields may then be quoted).  None: not
    accepted (see the module docstring), or numba is missing."""
    kernel = compiled(_parse_block)
    if kernel is None or fields < 2:
        return None
    # One input buffer and two output buffers a slot, reused (first-touched memory
    # costs about as much as the parsing): a slot is refilled only once its block is
    # parsed and copied out.  A link line has at least 4 bytes ("1 2\n").
    slots = [(np.empty(BLOCK_BYTES, np.uint8), np.empty(BLOCK_BYTES // 4, np.int32),
              np.empty(BLOCK_BYTES // 4, np.int32)) for _ in range(_THREADS + 1)]
    src: list[np.ndarray] = []
    dst: list[np.ndarray] = []
    pending: deque[Future[tuple[np.ndarray, np.ndarray] | None]] = deque()

    def parse(data: np.ndarray, a: np.ndarray,
              b: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        # The copies out are made here too: on the parsing threads, not the reader.
        count = kernel(data, fields, quoted, a, b)
        return None if count < 0 else (_copy_aligned(a[:count]), _copy_aligned(b[:count]))

    def collect() -> bool:
        parsed = pending.popleft().result()
        if parsed is None:
            return False
        src.append(parsed[0])
        dst.append(parsed[1])
        return True

    with open(path, "rb", buffering=0) as f, ThreadPoolExecutor(_THREADS, "edge-parse") as pool:
        f.seek(start)
        carry = np.zeros(0, np.uint8)
        slot = 0
        ok = True
        while ok:
            if len(pending) >= _THREADS and not collect():
                ok = False
                break
            data = slots[slot][0]
            data[:carry.size] = carry
            got = f.readinto(data[carry.size:].data)
            size = carry.size + got
            if got == 0:  # the end: a last line without its line break
                if size == 0 or not bytes(data[:size]).strip():
                    break
                if size == data.size:
                    ok = False  # one line longer than a block
                    break
                data[size] = 10
                cut = size + 1
            else:
                newline = _last_newline(data, size)
                if newline.size == 0:
                    if size == data.size:
                        ok = False  # one line longer than a block
                        break
                    carry = data[:size].copy()  # the last line, its break missing
                    continue
                cut = size - int(newline[0])
            carry = data[cut:size].copy()
            pending.append(pool.submit(parse, data[:cut], slots[slot][1], slots[slot][2]))
            slot = (slot + 1) % len(slots)
            if got == 0:
                break
        while pending:
            if not ok:
                pending.popleft().result()
                continue
            ok = collect()
    return (src, dst) if ok else None


def count_ids(src: list[np.ndarray], dst: list[np.ndarray],
              high: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """One compiled pass over the parsed columns (ids in ``0 .. high``): which ids occur
    (uint8 flags), each id's out-link count (int64) and whether the sources ascend.
    None without numba (the caller counts with numpy: index and bincount copies of
    8 bytes a link)."""
    kernel = compiled(_count_part)
    if kernel is None:
        return None
    present = np.zeros(high + 1, np.uint8)
    counts = np.zeros(high + 1, np.int64)
    ascending = True
    last = -1
    for a, b in zip(src, dst, strict=True):
        if a.size:
            ascending = kernel(a, b, present, counts) and ascending and int(a[0]) >= last
            last = int(a[-1])
        elif b.size:
            kernel(a, b, present, counts)
    return present, counts, ascending


def remap_into(out: np.ndarray, ids: np.ndarray, table: np.ndarray | None) -> None:
    """``out[:] = table[ids]`` (``ids`` as they are if ``table`` is None), compiled
    when numba is there: no index copy, the GIL released."""
    if table is None:
        out[:] = ids
        return
    kernel = compiled(_remap)
    if kernel is None:
        np.take(table, ids, out=out)
    else:
        kernel(out, ids, table)


def sources_into(out: np.ndarray, indptr: np.ndarray, lo: int) -> None:
    """The source node of links ``lo .. lo + out.size - 1`` of the CSR ``indptr``."""
    hi = lo + out.size
    first = int(np.searchsorted(indptr, lo, side="right")) - 1
    last = int(np.searchsorted(indptr, hi, side="left"))
    kernel = compiled(_sources)
    if kernel is None:
        sizes = np.clip(indptr[first + 1:last + 1], lo, hi) - np.clip(indptr[first:last], lo, hi)
        out[:] = np.repeat(np.arange(first, last, dtype=out.dtype), sizes)
    else:
        kernel(out, indptr, first, lo)


def _count_part(a: Any, b: Any, present: Any, counts: Any) -> bool:  # pragma: no cover
    """Flag the ids of ``a`` and ``b``, count ``a``'s; whether ``a`` ascends."""
    ascending = True
    previous = a[0] if a.size else 0
    for j in range(a.size):
        v = a[j]
        if v < previous:
            ascending = False
        previous = v
        present[v] = 1
        counts[v] += 1
    for j in range(b.size):
        present[b[j]] = 1
    return ascending


def _remap(out: Any, ids: Any, table: Any) -> None:  # pragma: no cover - compiled
    for j in range(ids.size):
        out[j] = table[ids[j]]


def _sources(out: Any, indptr: Any, node: int, lo: int) -> None:  # pragma: no cover
    j = 0
    while j < out.size:
        stop = min(indptr[node + 1] - lo, out.size)
        while j < stop:
            out[j] = node
            j += 1
        node += 1


def _copy_aligned(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` that starts on a 2 MB boundary when it is that large.

    numpy asks for transparent huge pages on large arrays, but Linux backs only the
    2 MB-aligned stretches of them: aligned, a part is first touched a fault per 2 MB
    instead of per 4 KB (30M links: 3k page faults instead of 24k)."""
    if values.nbytes < _HUGE_PAGE:
        return values.copy()
    raw = np.empty(values.nbytes + _HUGE_PAGE, np.uint8)
    start = -raw.ctypes.data % _HUGE_PAGE
    out = raw[start:start + values.nbytes].view(values.dtype)
    out[:] = values
    return out


def _last_newline(data: np.ndarray, size: int) -> np.ndarray:
    """Distance from ``size`` to just after the last line break in ``data[:size]``, in a
    one-element array (empty: none)."""
    back = 1 << 16
    while True:
        lo = max(0, size - back)
        hits = np.flatnonzero(data[lo:size] == 10)
        if hits.size:
            return np.array([size - (lo + int(hits[-1]) + 1)])
        if lo == 0:
            return hits
        back *= 4


def _parse_block(data: Any, fields: int, quoted: bool, a: Any,
                 b: Any) -> int:  # pragma: no cover - compiled by numba
    """Parse ``data`` (whole lines, the last ending in ``\\n``) into ``a``, ``b`` (at
    least ``data.size // 4`` long); the number of links, or -1 at the first line not
    accepted."""
    end = data.size
    i = 0
    k = 0
    low = -2147483648
    high = 2147483647
    while i < end:
        c = data[i]
        while c == 32 or c == 9:
            i += 1
            c = data[i]
        if c == 10:
            i += 1
            continue
        if c == 13 and data[i + 1] == 10:
            i += 2
            continue
        if c == 35:  # '#': a comment line
            while data[i] != 10:
                i += 1
            i += 1
            continue
        for column in range(2):
            negative = c == 45
            if negative:
                i += 1
                c = data[i]
            value = 0
            digits = 0
            while 48 <= c <= 57 and digits <= 10:
                value = value * 10 + (c - 48)
                digits += 1
                i += 1
                c = data[i]
            if digits == 0 or digits > 10:
                return -1
            if negative:
                value = -value
            if value < low or value > high:
                return -1
            if column == 0:
                if c != 32 and c != 9:
                    return -1
                a[k] = value
                while c == 32 or c == 9:
                    i += 1
                    c = data[i]
            else:
                b[k] = value
        seen = 2
        # The rest of the line: blanks, further fields (counted), its end.
        while True:
            if c == 32 or c == 9:
                i += 1
                c = data[i]
            elif c == 10:
                break
            elif c == 13:
                if data[i + 1] != 10:
                    return -1
                i += 1
                c = 10
                break
            else:
                if seen == 2 and data[i - 1] != 32 and data[i - 1] != 9:
                    return -1  # digits run into other characters: not an integer
                seen += 1
                while c != 32 and c != 9 and c != 10 and c != 13:
                    if quoted and c == 34:
                        return -1
                    i += 1
                    c = data[i]
        if seen != fields:
            return -1
        i += 1
        k += 1
    return k
