"""Per-URL state in flat numpy arrays that grow by doubling.

URL ids are small dense non-negative integers (the crawler assigns them in discovery
order; virtual crawls use node indices), so per-URL state lives in arrays indexed by
id rather than dicts of objects: a few bytes per URL, amortised O(1) growth.  Arrays
filled with zeros grow into ``calloc`` memory, whose pages become resident only when
written, so doubling leaves no resident spare capacity.
"""

from __future__ import annotations

import numpy as np

__all__ = ["EdgeList", "GrowableArray"]

_INITIAL_CAPACITY = 1024


class GrowableArray:
    """A 1-D numpy array indexed by URL id, grown by doubling on demand."""

    __slots__ = ("_data", "_fill")

    def __init__(self, dtype: type | np.dtype[np.generic], fill: float | int | bool = 0) -> None:
        self._fill = fill
        self._data: np.ndarray = _filled(_INITIAL_CAPACITY, fill, dtype)

    @property
    def data(self) -> np.ndarray:
        """The backing array (its length is the capacity, not the number of URLs)."""
        return self._data

    def ensure(self, index: int) -> np.ndarray:
        """Grow so that ``index`` is valid; return the backing array."""
        size = self._data.size
        if index >= size:
            new_size = max(2 * size, index + 1)
            grown = _filled(new_size, self._fill, self._data.dtype)
            grown[:size] = self._data
            self._data = grown
        return self._data


def _filled(size: int, fill: float | int | bool, dtype: type | np.dtype[np.generic]) -> np.ndarray:
    """A new array of ``fill``; zeros come from ``calloc``, so the capacity not written
    yet costs no resident memory (the spare half of a doubled array stays virtual)."""
    if fill == 0:
        return np.zeros(size, dtype=dtype)
    return np.full(size, fill, dtype=dtype)


class EdgeList:
    """Append-only ``(src, dst)`` int32 pairs; prefixes are never rewritten.

    Because appends only write past the current length and growth copies into a new
    buffer, ``view()`` of the first ``m`` edges is an immutable O(1) snapshot.
    """

    __slots__ = ("_dst", "_m", "_src")

    def __init__(self) -> None:
        self._m = 0
        self._src = np.empty(_INITIAL_CAPACITY, dtype=np.int32)
        self._dst = np.empty(_INITIAL_CAPACITY, dtype=np.int32)

    def __len__(self) -> int:
        return self._m

    def extend(self, src: int, dst: np.ndarray) -> None:
        """Append edges ``src -> d`` for every ``d`` in ``dst``."""
        end = self._m + dst.size
        if end > self._src.size:
            new_size = max(2 * self._src.size, end)
            for name in ("_src", "_dst"):
                old = getattr(self, name)
                grown = np.empty(new_size, dtype=np.int32)
                grown[: self._m] = old[: self._m]
                setattr(self, name, grown)
        self._src[self._m : end] = src
        self._dst[self._m : end] = dst
        self._m = end

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        """The edges so far; valid forever (later appends never touch them)."""
        return self._src[: self._m], self._dst[: self._m]
