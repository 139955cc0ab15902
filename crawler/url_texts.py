"""URL strings by dense id, on disk: a crawl's URL texts out of its process's heap.

:class:`UrlTexts` keeps the URL strings in an unlinked temporary file beside the crawl
database (the ``urls`` table is their durable copy): an append buffer, then the file,
read back with ``os.pread``; memory holds 4 bytes per URL (its end offset within its
block of 4,096 URLs; 8 bytes per block for the block's start).  The file's pages are
the kernel's page cache, which it drops under pressure, not the process's heap; a kill
leaves nothing behind (Mercator kept its URL strings out of memory too).
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path

import numpy as np
from webcrawl.crawler.columns import Column

__all__ = ["UrlTexts"]

#: URL ids per block of :class:`UrlTexts` (a block's text must stay under 4 GiB).
TEXT_BLOCK_BITS = 12
TEXT_BLOCK = 1 << TEXT_BLOCK_BITS
_BLOCK_MASK = TEXT_BLOCK - 1
_REL_MAX = (1 << 32) - 1
#: Bytes of URL text buffered before one write to the side file.
TEXT_BUFFER = 1 << 20


class UrlTexts:
    """URL strings by dense id, in an unlinked side file (see the module docstring).

    A URL's end offset is held in 4 bytes: relative to the start of its block of
    :data:`TEXT_BLOCK` ids, whose absolute start is kept once per block (8 bytes).
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        fd, name = tempfile.mkstemp(prefix="webcrawl-urls-", dir=directory)
        os.unlink(name)  # unlinked at once: nothing is left behind, even by a kill
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)
        self._ends = Column(np.uint32)    # end offset relative to the block's start
        self._bases = Column(np.int64)    # absolute start of each block of ids
        self._buf = bytearray()
        self._flushed = 0                 # bytes written to the file

    def __len__(self) -> int:
        return len(self._ends)

    def append(self, url: str) -> None:
        buf = self._buf
        url_id = len(self._ends)
        if not url_id & _BLOCK_MASK:
            self._bases.append(self._flushed + len(buf))
        buf += url.encode()
        rel = self._flushed + len(buf) - self._bases[url_id >> TEXT_BLOCK_BITS]
        if rel > _REL_MAX:
            raise ValueError(f"URL text of {TEXT_BLOCK} URLs beyond 4 GiB")
        self._ends.append(rel)
        if len(buf) >= TEXT_BUFFER:
            self.flush()

    def extend(self, urls: Sequence[str]) -> None:
        if not urls:
            return
        data = "".join(urls).encode()
        sizes = list(map(len, urls))
        if len(data) != sum(sizes):  # not all ASCII: sizes in bytes
            sizes = [len(u.encode()) for u in urls]
        ends, bases = self._ends, self._bases
        pos = self._flushed + len(self._buf)  # absolute start of the next URL
        url_id = len(ends)
        done = 0
        while done < len(sizes):  # block by block (one piece, unless one starts)
            if not url_id & _BLOCK_MASK:
                bases.append(pos)
            take = min(len(sizes) - done, TEXT_BLOCK - (url_id & _BLOCK_MASK))
            base = bases[url_id >> TEXT_BLOCK_BITS]
            rel = list(accumulate(sizes[done:done + take], initial=pos - base))
            if rel[-1] > _REL_MAX:
                raise ValueError(f"URL text of {TEXT_BLOCK} URLs beyond 4 GiB")
            ends.extend(rel[1:])
            pos = base + rel[-1]
            url_id += take
            done += take
        self._buf += data
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
        if url_id < 0:
            url_id += len(self._ends)
        base = self._bases[url_id >> TEXT_BLOCK_BITS]
        end = base + self._ends[url_id]
        start = base + self._ends[url_id - 1] if url_id & _BLOCK_MASK else base
        flushed = self._flushed
        if start >= flushed:
            return self._buf[start - flushed:end - flushed].decode()
        return os.pread(self._fd, end - start, start).decode()

    @property
    def nbytes(self) -> int:
        """Memory held (offsets and the append buffer; not the file)."""
        return self._ends.nbytes + self._bases.nbytes + len(self._buf)

    def close(self) -> None:
        self._closer()
