"""Name -> strategy class registry, used by ``webcrawl crawl --strategy NAME``.

Register a custom ordering without touching the crawler::

    from webcrawl.analysis.ordering.strategies import Strategy, register_strategy

    @register_strategy
    class ShortestUrlFirst(Strategy):
        name = "shortest"
        def discovered(self, url_id: int, depth: int) -> float:
            return -float(depth)

**Specs.**  A strategy with options is named by its *spec*: the name, then ``?`` and
its options as ``key=value`` pairs joined by ``&`` (URL query syntax, values
percent-encoded), keys sorted, options left at their default omitted:
``batch-pagerank?every=500``.  :func:`strategy_spec` writes the canonical spec,
:func:`get_strategy` reads one and returns a class configured with those options
(``cls(seed=...)`` builds it, as for a plain name), whose :attr:`~Strategy.name` is
the canonical spec.  A crawl stores that name as its strategy, so a resumed crawl
rebuilds the same ordering with the same options, and a resume with other options is
refused like one with another strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import quote, unquote

from webcrawl.analysis.ordering.strategies.base import Strategy
from webcrawl.storage.errors import ConfigError

__all__ = [
    "available_strategies",
    "get_strategy",
    "parse_spec",
    "register_strategy",
    "strategy_spec",
]

_REGISTRY: dict[str, type[Strategy]] = {}
_CONFIGURED: dict[str, type[Strategy]] = {}
S = TypeVar("S", bound=type[Strategy])
#: Characters left as they are in a spec's values (paths stay readable).
_SAFE = "/:._-~+,"


def register_strategy(cls: S) -> S:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    if not cls.name or "?" in cls.name:
        raise ConfigError(f"strategy class {cls.__name__} has no valid name")
    _REGISTRY[cls.name] = cls
    return cls


def _base(name: str) -> type[Strategy]:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(f"unknown strategy {name!r} (known: {known})") from None


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``(name, options)`` of a spec (``name`` or ``name?key=value&...``)."""
    name, _, query = spec.strip().partition("?")
    options: dict[str, str] = {}
    for pair in filter(None, query.split("&")):
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise ConfigError(f"strategy option {pair!r} of {spec!r}: KEY=VALUE expected")
        if key in options:
            raise ConfigError(f"strategy option {key!r} given twice in {spec!r}")
        options[unquote(key)] = unquote(value)
    return name, options


def strategy_spec(name: str, options: Mapping[str, Any] | None = None) -> str:
    """The canonical spec of strategy ``name`` with ``options`` (checked and parsed).

    >>> import webcrawl.analysis.ordering.strategies  # registers the built-in ones
    >>> strategy_spec("batch-pagerank", {"every": "0500"})
    'batch-pagerank?every=500'
    >>> strategy_spec("bfs")
    'bfs'
    """
    base_name, inline = parse_spec(name)
    cls = _base(base_name)
    merged = {**inline, **(options or {})}
    values = cls.parse_options(merged)
    given = {k: v for k, v in values.items() if k in merged and v != cls.OPTIONS[k].default}
    if not given:
        return base_name
    query = "&".join(f"{k}={quote(str(v), safe=_SAFE)}" for k, v in sorted(given.items()))
    return f"{base_name}?{query}"


def get_strategy(spec: str) -> type[Strategy]:
    """The strategy class named by ``spec`` (a name, or a name with options).

    A plain name gives the registered class; a spec with options gives a subclass
    whose constructor applies them and whose ``name`` is the canonical spec.
    ConfigError lists the known names, or names the bad option.
    """
    name, options = parse_spec(spec)
    cls = _base(name)
    if not options:
        return cls
    canonical = strategy_spec(spec)
    if canonical == name:
        return cls
    configured = _CONFIGURED.get(canonical)
    if configured is None:
        configured = _configure(cls, canonical, cls.parse_options(options))
        _CONFIGURED[canonical] = configured
    return configured


def _configure(cls: type[Strategy], spec: str, options: dict[str, Any]) -> type[Strategy]:
    def __init__(self: Strategy, *, seed: int = 0) -> None:
        cls.__init__(self, seed=seed, options=options)

    return type(cls.__name__, (cls,), {"name": spec, "__init__": __init__,
                                       "__doc__": cls.__doc__,
                                       "__module__": cls.__module__})


def available_strategies() -> list[str]:
    """Registered strategy names, sorted."""
    return sorted(_REGISTRY)
