"""Optional compiled inner loops (private): numba when installed, else None.

numba is the optional extra ``webcrawl[fast]``; every caller keeps a numpy path for
when it is missing, and the tests check both paths give the same result.  Compiling
happens on first use (about a second a function), never at import, so importing the
analysis package stays light.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["compiled"]

_cache: dict[Callable[..., Any], Any] = {}


def compiled(function: Callable[..., Any], *helpers: str) -> Any:
    """``function`` compiled by numba (nopython, GIL released), or None without numba.

    ``helpers`` names module-level functions that ``function`` calls: they are
    compiled first and bound in its module in place of the Python ones.
    """
    if function not in _cache:
        try:
            import numba
        except ImportError:
            _cache[function] = None
        else:
            jit = numba.njit(cache=False, nogil=True)
            space = function.__globals__
            for name in helpers:
                if not hasattr(space[name], "py_func"):
                    space[name] = jit(space[name])
            _cache[function] = jit(function)
    return _cache[function]
