"""One validation helper for every settings class (``__post_init__`` of a frozen dataclass).

Settings validate themselves when built (aiohttp's ``ClientTimeout`` habit), so a bad value
fails where it is given, with the field's name, the allowed range and the value:

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Demo:
...     pages: int = 10
...     share: float = 0.5
...     def __post_init__(self) -> None:
...         check_fields(self, ("pages",), at_least=1)
...         check_fields(self, ("share",), above=0, at_most=1)
>>> Demo(pages=0)
Traceback (most recent call last):
...
webcrawl.storage.errors.ConfigError: pages must be >= 1, got 0
>>> Demo(share=float("nan"))
Traceback (most recent call last):
...
webcrawl.storage.errors.ConfigError: share must be a finite number in (0, 1], got nan
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from webcrawl.storage.errors import ConfigError

__all__ = ["check_fields"]


def check_fields(obj: object, names: Iterable[str], *, at_least: float | None = None,
                 above: float | None = None, at_most: float | None = None,
                 below: float | None = None, optional: bool = False,
                 error: type[ConfigError] = ConfigError) -> None:
    """Raise ``error`` unless every field ``names`` of ``obj`` is a finite number in range.

    ``at_least``/``at_most`` are closed bounds, ``above``/``below`` open ones; ``optional``
    lets a field be None.  The message names the field, the range and the value.
    """
    for name in names:
        value = getattr(obj, name)
        if value is None and optional:
            continue
        ok = isinstance(value, int | float) and not isinstance(value, bool) \
            and math.isfinite(value)
        ok = ok and (at_least is None or value >= at_least) and (above is None or value > above)
        ok = ok and (at_most is None or value <= at_most) and (below is None or value < below)
        if not ok:
            raise error(f"{name} must be {_describe(at_least, above, at_most, below)}, "
                        f"got {value!r}")


def _describe(at_least: float | None, above: float | None, at_most: float | None,
              below: float | None) -> str:
    low = (f"[{at_least:g}" if at_least is not None else
           f"({above:g}" if above is not None else None)
    high = (f"{at_most:g}]" if at_most is not None else
            f"{below:g})" if below is not None else None)
    if low and high:
        return f"a finite number in {low}, {high}"
    if low:
        return (f">= {at_least:g}" if at_least is not None else f"> {above:g}")
    if high:
        return (f"<= {at_most:g}" if at_most is not None else f"< {below:g}")
    return "a finite number"
