"""A growable numpy column (amortised doubling), for state kept per page or per visit."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Column"]


class Column:
    """A 1-d array that grows at the end; ``view()`` is the filled part, ``data`` the
    whole buffer (positions past ``size`` hold ``fill``)."""

    def __init__(self, dtype: type, fill: float | int | bool = 0) -> None:
        self.fill = fill
        self.data: NDArray[np.generic] = np.full(64, fill, dtype=dtype)
        self.size = 0

    def resize(self, size: int) -> None:
        """Grow to at least ``size`` entries (new ones hold ``fill``); never shrinks."""
        if size > self.data.size:
            grown = np.full(max(size, 2 * self.data.size), self.fill, dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.size = max(self.size, size)

    def extend(self, values: ArrayLike) -> None:
        v = np.asarray(values, dtype=self.data.dtype).ravel()
        start = self.size
        self.resize(start + v.size)
        self.data[start:start + v.size] = v

    def view(self) -> NDArray[np.generic]:
        return self.data[: self.size]
