"""Name -> strategy class registry, used by ``webcrawl crawl --strategy NAME``.

Register a custom ordering without touching the crawler::

    from webcrawl.analysis.ordering.strategies import Strategy, register_strategy

    @register_strategy
    class ShortestUrlFirst(Strategy):
        name = "shortest"
        def __init__(self, *, seed: int = 0, url_of=None) -> None:
            super().__init__(seed=seed)
        def discovered(self, url_id: int, depth: int) -> float:
            return -float(depth)
"""

from __future__ import annotations

from typing import TypeVar

from webcrawl.analysis.ordering.strategies.base import Strategy
from webcrawl.storage.errors import ConfigError

__all__ = ["available_strategies", "get_strategy", "register_strategy"]

_REGISTRY: dict[str, type[Strategy]] = {}
S = TypeVar("S", bound=type[Strategy])


def register_strategy(cls: S) -> S:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    if not cls.name:
        raise ConfigError(f"strategy class {cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def get_strategy(name: str) -> type[Strategy]:
    """The strategy class registered as ``name``; ConfigError lists the known names."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(f"unknown strategy {name!r} (known: {known})") from None


def available_strategies() -> list[str]:
    """Registered strategy names, sorted."""
    return sorted(_REGISTRY)
