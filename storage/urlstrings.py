"""URLs held as one Arrow string array, read as a sequence of ``str`` (:class:`UrlStrings`).

The reader returns a crawl's URLs this way (:attr:`webcrawl.storage.tables.UrlTable.urls`):
about 8 bytes a URL besides its text, where a ``list`` of ``str`` costs about 57.
pyarrow is imported on first use only, and its arrays are built from their buffers:
``pyarrow.array`` imports pandas when it is installed (0.4 CPU-s, pyarrow 26: it asks
whether its input is a pandas object), which every command reading a crawl's URLs paid.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["UrlStrings", "int64_array"]


class UrlStrings(Sequence[str]):
    """URLs held as one Arrow string array (UTF-8 bytes and offsets), read as a sequence.

    About 8 bytes a URL besides its text, where a ``list`` of ``str`` costs about 57
    (18.5M ids of an imported graph: 0.3 GB instead of 1.2).  Indexing gives ``str``
    (a slice: a ``list``); :meth:`take` selects by position, :attr:`arrow` is the
    array (for Parquet, pyarrow compute).  Equal to any sequence of the same strings.
    """

    __slots__ = ("arrow",)

    def __init__(self, arrow: Any) -> None:
        self.arrow = arrow

    @classmethod
    def from_list(cls, values: Sequence[str]) -> UrlStrings:
        return cls(_large_strings([v.encode() for v in values]))

    @classmethod
    def from_joined(cls, joined: str, n: int) -> UrlStrings | None:
        """The ``n`` URLs of NUL-separated ``joined``; None if it does not hold ``n``."""
        if n == 0:
            return cls.from_list([]) if not joined else None
        import pyarrow.compute as pc

        whole = _large_strings([joined.encode()])
        parts = pc.split_pattern(whole, "\x00")[0].values
        return cls(parts) if len(parts) == n else None

    def take(self, positions: np.ndarray) -> UrlStrings:
        """The URLs at ``positions`` (int array), in that order."""
        return UrlStrings(self.arrow.take(int64_array(positions)))

    def sort_indices(self) -> np.ndarray:
        """The positions that sort the URLs (int64; Arrow's sort, copied out of its buffer,
        as ``numpy.asarray`` of the Arrow result would import pandas)."""
        import pyarrow.compute as pc

        order = pc.sort_indices(self.arrow)
        return np.frombuffer(order.buffers()[1], dtype=np.uint64, count=len(order),
                             offset=8 * order.offset).astype(np.int64)

    def __len__(self) -> int:
        return len(self.arrow)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.arrow[index].to_pylist()
        value: str = self.arrow[int(index)].as_py()
        return value

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self.arrow), 1 << 16):
            yield from self.arrow[start:start + (1 << 16)].to_pylist()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UrlStrings):
            return bool(self.arrow.equals(other.arrow))
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other,
                                                                           strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        head = ", ".join(repr(u) for u in self[:3])
        return f"UrlStrings([{head}{', ...' if len(self) > 3 else ''}], n={len(self)})"


def int64_array(values: Any) -> Any:
    """``values`` as an Arrow int64 array, built from its buffer (no pandas import)."""
    import pyarrow as pa

    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), data.size, [None, pa.py_buffer(data)])


def _large_strings(encoded: Sequence[bytes]) -> Any:
    """An Arrow ``large_string`` array of UTF-8 ``encoded`` strings, built from its buffers
    (``pyarrow.array`` would import pandas)."""
    import pyarrow as pa

    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)),
              out=offsets[1:])
    return pa.LargeStringArray.from_buffers(len(encoded), pa.py_buffer(offsets),
                                            pa.py_buffer(b"".join(encoded)))
