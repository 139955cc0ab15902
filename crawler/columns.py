"""Growable typed columns: the per-URL and per-host fields of a crawl's state.

:class:`Column` is the growable array the registry, the frontier and its overflows keep
their per-URL fields in (amortised O(1) appends, C-speed item access), read as numpy
arrays by copy.
"""

from __future__ import annotations

import array
from typing import Any

import numpy as np

__all__ = ["Column"]

#: ``array.array`` type codes of the numpy types a :class:`Column` holds.
_TYPECODES = {"i4": "i", "u4": "I", "i8": "q", "f8": "d", "u1": "B", "u2": "H"}


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
        if isinstance(values, list):
            self._a.extend(values)  # short lists: no numpy round trip
        else:
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
