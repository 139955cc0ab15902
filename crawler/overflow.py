"""Host overflows: a host's frontier URLs beyond its in-memory head, FIFO, spilled to disk.

A host's :class:`Overflow` is a FIFO of 4-byte URL ids in three parts, oldest first:

* the *front*: a batch of ids read back from the spill file (at most :attr:`SpillFile.batch`);
* *segments* on disk, in append order;
* the *tail*: a growable in-memory array new ids are appended to.

Without a spill file the tail is the whole overflow (4 bytes a URL in memory).  With
one, a tail that reaches :attr:`SpillFile.spill_at` ids is written out as one segment, so
a host holds at most about ``2 * spill_at`` ids in memory however long its queue is; the
memory budget lowers ``spill_at`` under pressure (:meth:`SpillFile.tighten`).  Reads
refill the front a batch at a time, so a head refill costs one ``pread`` per batch.

:class:`SpillFile` is an unlinked temporary file beside the crawl database (as the URL
texts' side file, :class:`~webcrawl.crawler.url_texts.UrlTexts`): a kill, a crash or a
finished crawl leave nothing behind, and nothing in it is ever needed again -- it is a
cache of the frontier, which a resume rebuilds from the crawl database.  Segments are
appended; the space of segments read back is garbage until the file is rewritten with
the live segments only (:meth:`SpillFile.compact`, once garbage exceeds both the live
ids and :data:`COMPACT_MIN`): amortised O(1) file work per id.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from webcrawl.crawler.columns import Column

__all__ = ["Meter", "Overflow", "SpillFile"]

#: Ids a host's in-memory tail holds before it is written to the spill file.
SPILL_AT = 1 << 12
#: ``spill_at`` under memory pressure (:meth:`SpillFile.tighten`): a host then holds at
#: most about 512 bytes of ids in memory.
SPILL_AT_TIGHT = 1 << 6
#: Garbage ids tolerated in the spill file before a compaction (and beyond the live ids).
COMPACT_MIN = 1 << 20
#: Estimated bytes of one segment's bookkeeping (a list slot and a two-int list).
SEGMENT_BYTES = 120
_ITEM = 4  # bytes of an id (uint32)


class SpillFile:
    """Segments of uint32 ids in an unlinked file (see the module docstring)."""

    def __init__(self, directory: str | Path | None = None, spill_at: int = SPILL_AT) -> None:
        if spill_at < 1:
            raise ValueError(f"spill_at must be at least 1, not {spill_at}")
        self._directory = directory
        self.spill_at = spill_at
        self._fd = self._open()
        self._closer = weakref.finalize(self, os.close, self._fd)
        self._end = 0          # ids written (the file's size in ids)
        self.live = 0          # ids in segments not read back yet

    def _open(self) -> int:
        fd, name = tempfile.mkstemp(prefix="webcrawl-frontier-", dir=self._directory)
        os.unlink(name)  # unlinked at once: nothing is left behind, even by a kill
        return fd

    @property
    def batch(self) -> int:
        """Ids read back into a host's front at a time."""
        return self.spill_at

    @property
    def garbage(self) -> int:
        return self._end - self.live

    def tighten(self, spill_at: int = SPILL_AT_TIGHT) -> None:
        """Hold fewer ids in memory per host from now on."""
        self.spill_at = min(self.spill_at, spill_at)

    def write(self, ids: np.ndarray) -> list[int]:
        """Append ids; their segment ``[offset, count]`` (offset in ids)."""
        data = np.ascontiguousarray(ids, dtype=np.uint32).tobytes()
        offset = self._end
        view, at = memoryview(data), offset * _ITEM
        while view:
            written = os.pwrite(self._fd, view, at)
            at += written
            view = view[written:]
        self._end += len(ids)
        self.live += len(ids)
        return [offset, len(ids)]

    def read(self, offset: int, count: int) -> np.ndarray:
        """``count`` ids from ``offset`` (they become garbage: read once)."""
        self.live -= count
        return _pread_ids(self._fd, offset, count)

    def dropped(self, count: int) -> None:
        """``count`` ids of segments were discarded without a read."""
        self.live -= count

    def wants_compaction(self) -> bool:
        return self.garbage > max(self.live, COMPACT_MIN)

    def compact(self, overflows: Iterable[Overflow]) -> None:
        """Rewrite the file with the live segments only (every overflow using it)."""
        old_fd, old_closer = self._fd, self._closer
        self._fd = self._open()
        self._closer = weakref.finalize(self, os.close, self._fd)
        self._end = self.live = 0
        for over in overflows:
            segments = over.segments
            if segments:
                ids = np.concatenate([_pread_ids(old_fd, offset, count)
                                      for offset, count in segments])
                over.segments = [self.write(ids)]
                over.meter.nbytes -= SEGMENT_BYTES * (len(segments) - 1)
        old_closer()

    def close(self) -> None:
        self._closer()


def _pread_ids(fd: int, offset: int, count: int) -> np.ndarray:
    """``count`` uint32 ids at id ``offset`` of file ``fd``."""
    size, at = count * _ITEM, offset * _ITEM
    data = bytearray()
    while len(data) < size:
        chunk = os.pread(fd, size - len(data), at + len(data))
        if not chunk:
            raise OSError(f"frontier spill file ends before byte {at + size}")
        data += chunk
    return np.frombuffer(data, dtype=np.uint32)


class Meter:
    """Memory held by a set of overflows (the sum of their :attr:`Overflow.nbytes`),
    kept up to date as they change, so a memory check need not visit every host."""

    __slots__ = ("nbytes",)

    def __init__(self) -> None:
        self.nbytes = 0


class Overflow:
    """A FIFO of URL ids: front, segments on disk, in-memory tail (module docstring).

    :meth:`peek` returns the next ids of one part without consuming them;
    :meth:`advance` then consumes some of them.  Every change of :attr:`nbytes` is
    added to ``meter``.
    """

    __slots__ = ("_front", "_front_pos", "_peeked", "file", "meter", "segments", "start",
                 "tail")

    def __init__(self, file: SpillFile | None = None, meter: Meter | None = None) -> None:
        self.file = file
        self.meter = Meter() if meter is None else meter
        self.tail = Column(np.uint32)
        self.start = 0                           # tail ids before it were consumed
        self.segments: list[list[int]] = []      # [offset, count] on disk, in order
        self._front = np.empty(0, dtype=np.uint32)
        self._front_pos = 0
        self._peeked = 0                         # 0: front, 1: tail (what peek read)

    @property
    def empty(self) -> bool:
        return (self._front_pos >= len(self._front) and not self.segments
                and self.start >= len(self.tail))

    def __len__(self) -> int:
        """Ids not consumed yet (dead ones included)."""
        return (len(self._front) - self._front_pos + sum(c for _, c in self.segments)
                + len(self.tail) - self.start)

    @property
    def nbytes(self) -> int:
        """Memory held: front and tail ids, segment bookkeeping (not the file)."""
        return (int(self._front.nbytes) + self.tail.nbytes
                + SEGMENT_BYTES * len(self.segments))

    def append(self, url_id: int) -> None:
        tail = self.tail
        tail.append(url_id)
        self.meter.nbytes += _ITEM
        file = self.file
        if file is not None and len(tail) - self.start >= file.spill_at:
            self.flush()

    def extend(self, ids: np.ndarray) -> None:
        """Append ids in order (written to the spill file at once if that many, or
        with the tail once it holds that many)."""
        file = self.file
        before = self.nbytes
        if file is not None and len(ids) >= file.spill_at:
            self._flush()
            self.segments.append(file.write(ids))
        else:
            self.tail.extend(ids)
            if file is not None and len(self.tail) - self.start >= file.spill_at:
                self._flush()
        self.meter.nbytes += self.nbytes - before

    def flush(self) -> None:
        """Write the tail to the spill file as one segment."""
        before = self.nbytes
        self._flush()
        self.meter.nbytes += self.nbytes - before

    def _flush(self) -> None:
        file = self.file
        if file is None or len(self.tail) <= self.start:
            return
        self.segments.append(file.write(self.tail.slice(self.start)))
        self.tail, self.start = Column(np.uint32), 0

    def peek(self, n: int) -> np.ndarray:
        """Up to ``n`` of the next ids, all from one part (empty: the FIFO is empty)."""
        if self._front_pos >= len(self._front) and self.segments:
            before = self.nbytes
            file = self.file
            assert file is not None
            seg = self.segments[0]
            count = min(seg[1], max(file.batch, n))
            self._front, self._front_pos = file.read(seg[0], count), 0
            seg[0] += count
            seg[1] -= count
            if not seg[1]:
                del self.segments[0]
            self.meter.nbytes += self.nbytes - before
        if self._front_pos < len(self._front):
            self._peeked = 0
            return self._front[self._front_pos:self._front_pos + n]
        self._peeked = 1
        return self.tail.slice(self.start, self.start + n)

    def advance(self, n: int) -> None:
        """Consume ``n`` of the ids the last :meth:`peek` returned."""
        before = self.nbytes
        if self._peeked == 0:
            self._front_pos += n
            if self._front_pos >= len(self._front):
                self._front, self._front_pos = np.empty(0, dtype=np.uint32), 0
        else:
            self.start += n
            tail = self.tail
            if self.start >= len(tail):
                self.tail, self.start = Column(np.uint32), 0
            elif self.start > len(tail) // 2:  # drop the consumed half (amortised O(1))
                rest = Column(np.uint32)
                rest.extend(tail.slice(self.start))
                self.tail, self.start = rest, 0
        self.meter.nbytes += self.nbytes - before

    def drain(self) -> np.ndarray:
        """Every id not consumed yet, in order; the FIFO is then empty."""
        self.meter.nbytes -= self.nbytes
        parts = [self._front[self._front_pos:]]
        file = self.file
        for offset, count in self.segments:
            assert file is not None
            parts.append(file.read(offset, count))
        parts.append(self.tail.slice(self.start))
        self.segments = []
        self._front, self._front_pos = np.empty(0, dtype=np.uint32), 0
        self.tail, self.start = Column(np.uint32), 0
        return np.concatenate(parts)

    def discard(self) -> None:
        """Forget every id (their file space becomes garbage)."""
        self.meter.nbytes -= self.nbytes
        if self.file is not None:
            self.file.dropped(sum(c for _, c in self.segments))
        self.segments = []
        self._front, self._front_pos = np.empty(0, dtype=np.uint32), 0
        self.tail, self.start = Column(np.uint32), 0
