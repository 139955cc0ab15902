"""Optional compiled inner loops (private): numba when installed, else None.

The one implementation lives in :mod:`webcrawl.storage._compiled` (the edge-list parser
below the analyses uses it too); this name keeps the analyses' import short.
"""

from __future__ import annotations

from webcrawl.storage._compiled import compiled

__all__ = ["compiled"]
