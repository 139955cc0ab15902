"""Compact per-URL state: the URL-seen test on 64-bit fingerprints, URL text on disk.

A crawl discovers URLs far faster than it fetches them, so its per-URL memory sets how
far it can grow.  Mercator's answer, kept here: the URL-seen test works on 64-bit
fingerprints, and the URL strings are not held in memory.

:class:`UrlSeen` maps a normalised URL to its dense id.  Fingerprints live in a sorted
``int64`` array with a parallel ``uint32`` array of ids (12 bytes per URL), plus a dict
of recent additions merged into the arrays in batches (a batch is a sixteenth of the
arrays, so merges cost O(1) amortised per URL and the dict adds at most a few bytes per
URL).  A lookup is a dict probe and one binary search.

Collisions never merge two URLs: a fingerprint hit is confirmed against the URL's
stored text (``text_of``, one ``pread``), and a URL whose fingerprint another URL
already has is kept, exactly, in a small dict of its own.  So the test is exact; a
collision costs that URL a dict entry.  The fingerprint is Python's ``hash`` of the
string (64-bit SipHash, keyed per process): it is never stored -- a resume rebuilds
the set from the stored URLs -- and no input can be crafted to collide on purpose.

:class:`UrlTexts` keeps the URL strings in an unlinked temporary file beside the crawl
database (the ``urls`` table is their durable copy): an append buffer, then the file,
read back with ``os.pread``; memory holds 8 bytes (an end offset) per URL.  The file's
pages are the kernel's page cache, which it drops under pressure, not the process's
heap; a kill leaves nothing behind.

:class:`Column` is the growable array the per-URL fields use (amortised O(1) appends).
"""

from __future__ import annotations

import array
import os
import tempfile
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Column", "UrlSeen", "UrlTexts"]

#: Fewest recent additions merged into the sorted arrays at once.
MERGE_MIN = 1 << 16
#: Recent additions are merged once they reach this fraction of the sorted arrays.
MERGE_FRACTION = 1 / 16
#: Bytes of URL text buffered before one write to the side file.
TEXT_BUFFER = 1 << 20
#: ``array.array`` type codes of the numpy types a :class:`Column` holds.
_TYPECODES = {"i4": "i", "u4": "I", "i8": "q", "f8": "d", "u1": "B"}


class Column:
    """A growable one-dimensional array of numbers (``array.array``: C-speed appends and
    item access, about 12 % spare capacity), read as numpy arrays by copy."""

    __slots__ = ("_a", "_dtype", "append")

    def __init__(self, dtype: Any) -> None:
        self._dtype = np.dtype(dtype)
        self._a = array.array(_TYPECODES[self._dtype.str[1:]])
        #: append one value (the array's own method: no Python-level frame)
        self.append = self._a.append

    def __len__(self) -> int:
        return len(self._a)

    def __getitem__(self, i: int) -> Any:
        return self._a[i]

    def __setitem__(self, i: int, value: Any) -> None:
        self._a[i] = value

    def extend(self, values: Any) -> None:
        self._a.frombytes(np.asarray(values, dtype=self._dtype).tobytes())

    def resize(self, n: int) -> None:
        """Grow to ``n`` entries (new ones are zero)."""
        if n > len(self._a):
            self._a.frombytes(bytes((n - len(self._a)) * self._dtype.itemsize))

    def slice(self, start: int, stop: int | None = None) -> np.ndarray:
        """Entries ``start:stop`` as a new numpy array."""
        stop = len(self._a) if stop is None else min(stop, len(self._a))
        if stop <= start:
            return np.empty(0, dtype=self._dtype)
        size = self._dtype.itemsize
        return np.frombuffer(self._a, dtype=self._dtype, count=stop - start,
                             offset=start * size).copy()

    @property
    def array(self) -> np.ndarray:
        """All entries as a new numpy array."""
        return self.slice(0)

    @property
    def nbytes(self) -> int:
        """Bytes of the entries (the spare capacity not counted)."""
        return len(self._a) * int(self._dtype.itemsize)


class UrlTexts:
    """URL strings by dense id, in an unlinked side file (see the module docstring)."""

    def __init__(self, directory: str | Path | None = None) -> None:
        fd, name = tempfile.mkstemp(prefix="webcrawl-urls-", dir=directory)
        os.unlink(name)  # unlinked at once: nothing is left behind, even by a kill
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)
        self._ends = Column(np.int64)
        self._buf = bytearray()
        self._flushed = 0                 # bytes written to the file

    def __len__(self) -> int:
        return len(self._ends)

    def append(self, url: str) -> None:
        buf = self._buf
        buf += url.encode()
        self._ends.append(self._flushed + len(buf))
        if len(buf) >= TEXT_BUFFER:
            self.flush()

    def extend(self, urls: Sequence[str]) -> None:
        encoded = [u.encode() for u in urls]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        self._ends.extend(self._flushed + len(self._buf) + np.cumsum(lengths))
        self._buf += b"".join(encoded)
        if len(self._buf) >= TEXT_BUFFER:
            self.flush()

    def flush(self) -> None:
        """Write the append buffer to the file."""
        view = memoryview(self._buf)
        while view:
            written = os.pwrite(self._fd, view, self._flushed)
            self._flushed += written
            view = view[written:]
        self._buf = bytearray()

    def __getitem__(self, url_id: int) -> str:
        ends = self._ends
        end = ends[url_id]
        start = ends[url_id - 1] if url_id else 0
        flushed = self._flushed
        if start >= flushed:
            return self._buf[start - flushed:end - flushed].decode()
        return os.pread(self._fd, end - start, start).decode()

    @property
    def nbytes(self) -> int:
        """Memory held (offsets and the append buffer; not the file)."""
        return self._ends.nbytes + len(self._buf)

    def close(self) -> None:
        self._closer()


class UrlSeen:
    """Exact URL -> id on 64-bit fingerprints (see the module docstring).

    ``text_of(url_id)`` gives the URL of a known id; it confirms fingerprint hits.
    ``fingerprint`` maps a URL to a signed 64-bit integer (tests pass a colliding one).
    """

    def __init__(self, text_of: Callable[[int], str],
                 fingerprint: Callable[[str], int] = hash) -> None:
        self._text_of = text_of
        self._fingerprint = fingerprint
        self._fps = np.empty(0, dtype=np.int64)     # sorted
        self._ids = np.empty(0, dtype=np.uint32)    # parallel to _fps
        self._recent: dict[int, int] = {}           # fingerprint -> id, not merged yet
        self._extra: dict[str, int] = {}            # URLs whose fingerprint is taken
        self._n = 0
        self._miss: int | None = None                # the fingerprint get() last missed

    def __len__(self) -> int:
        return self._n

    @property
    def collisions(self) -> int:
        """URLs kept apart because another URL has their fingerprint."""
        return len(self._extra)

    def _fp_id(self, fp: int) -> int | None:
        """The id registered under fingerprint ``fp``, if any."""
        got = self._recent.get(fp)
        if got is not None:
            return got
        fps = self._fps
        i = int(fps.searchsorted(fp))
        if i < len(fps) and fps[i] == fp:
            return int(self._ids[i])
        return None

    def get(self, url: str) -> int | None:
        """The id of ``url``, else None."""
        if self._extra:
            got = self._extra.get(url)
            if got is not None:
                return got
        fp = self._fingerprint(url)
        url_id = self._fp_id(fp)
        if url_id is None:
            self._miss = fp  # the usual add() that follows needs no second search
            return None
        if self._text_of(url_id) != url:
            return None
        return url_id

    def add(self, url: str, url_id: int) -> None:
        """Register a URL :meth:`get` does not know."""
        fp = self._fingerprint(url)
        self._n += 1
        miss, self._miss = self._miss, None
        if fp != miss and self._fp_id(fp) is not None:
            self._extra[url] = url_id
            return
        self._recent[fp] = url_id
        if len(self._recent) >= max(MERGE_MIN, int(len(self._fps) * MERGE_FRACTION)):
            self.merge()

    def extend(self, urls: Sequence[str], first_id: int) -> None:
        """Register unknown ``urls`` with ids ``first_id``, ``first_id + 1``, ... at once."""
        if not urls:
            return
        self.merge()
        fps = np.fromiter(map(self._fingerprint, urls), dtype=np.int64, count=len(urls))
        ids = np.arange(first_id, first_id + len(urls), dtype=np.uint32)
        order = np.argsort(fps, kind="stable")
        fps, ids = fps[order], ids[order]
        # A fingerprint repeated in the batch, or already known: those URLs go apart.
        dup = np.zeros(len(fps), dtype=bool)
        dup[1:] = fps[1:] == fps[:-1]
        pos = np.searchsorted(self._fps, fps)
        inside = pos < len(self._fps)
        dup[inside] |= self._fps[pos[inside]] == fps[inside]
        for i in np.flatnonzero(dup).tolist():
            url_id = int(ids[i])
            self._extra[urls[url_id - first_id]] = url_id
        keep = ~dup
        self._insert(fps[keep], ids[keep])
        self._n += len(urls)

    def merge(self) -> None:
        """Merge the recent additions into the sorted arrays."""
        self._miss = None
        recent = self._recent
        if not recent:
            return
        fps = np.fromiter(recent.keys(), dtype=np.int64, count=len(recent))
        ids = np.fromiter(recent.values(), dtype=np.uint32, count=len(recent))
        self._recent = {}
        order = np.argsort(fps)
        self._insert(fps[order], ids[order])

    def _insert(self, fps: np.ndarray, ids: np.ndarray) -> None:
        """Merge sorted, new fingerprints into the sorted arrays."""
        pos = np.searchsorted(self._fps, fps)
        self._fps = np.insert(self._fps, pos, fps)
        self._ids = np.insert(self._ids, pos, ids)

    @property
    def nbytes(self) -> int:
        """Memory held: the arrays, plus an estimate of the dicts (100 B an entry)."""
        return (int(self._fps.nbytes + self._ids.nbytes)
                + 100 * (len(self._recent) + len(self._extra)))
