"""Array type aliases shared by every package (one definition instead of a copy per module).

Examples
--------
>>> import numpy as np
>>> x: FloatArray = np.zeros(3)
>>> x.dtype
dtype('float64')
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

__all__ = ["BoolArray", "FloatArray", "Int8Array", "IntArray", "ObjectArray"]

FloatArray: TypeAlias = NDArray[np.float64]
IntArray: TypeAlias = NDArray[np.int64]
Int8Array: TypeAlias = NDArray[np.int8]
BoolArray: TypeAlias = NDArray[np.bool_]
#: Text columns read from SQLite (``str`` or ``None`` items).
ObjectArray: TypeAlias = NDArray[Any]
