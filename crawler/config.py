"""Crawl settings from outside the program: TOML files, ``--set name=value``, the crawl
database's stored copy.

Every :class:`~webcrawl.crawler.settings.CrawlSettings` field can be given by name.  Values are
converted to the field's declared type (``int``, ``float``, ``bool``, ``str``,
``tuple[str, ...]``, or one of these ``| None``); an unknown name or a value of the wrong
type is a one-line :class:`~webcrawl.storage.errors.ConfigError` naming the source.

Layers, later ones winning (``webcrawl crawl``, ``crawl --resume`` and ``webcrawl
revisit``; :func:`layer_settings` merges them, once, for every entry point;
:func:`resume_settings` is that layering for a crawl, its stored strategy checked):

1. the defaults of :class:`~webcrawl.crawler.settings.CrawlSettings`;
2. the settings stored with the crawl (``revisit``; ``crawl --resume``);
3. ``--config FILE.toml``;
4. the dedicated command-line options (``--min-delay``, ``--ca-file``, ...);
5. ``--set name=value`` (repeatable).

A TOML file holds field names at the top level, or the part after the prefix inside a
table named like the prefix (both lines below set ``polite_min_delay``)::

    polite_min_delay = 2.0
    resolve = ["*.test=127.0.0.1"]

    [polite]
    min_delay = 2.0

TOML has no null: an optional field is cleared with the string ``"none"``.
The database keeps the settings as JSON in the ``meta`` key ``settings``
(:func:`settings_dict`, with the CA file's absolute path: never key material).
"""

from __future__ import annotations

import datetime as _dt
import difflib
import json
import logging
import os
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import ConfigError

if TYPE_CHECKING:
    from webcrawl.analysis.ordering.strategies import Strategy

__all__ = [
    "META_SEEDS",
    "META_SETTINGS",
    "META_STRATEGY",
    "LayeredSettings",
    "build_settings",
    "changed_settings",
    "convert_setting",
    "given_fields",
    "layer_settings",
    "load_toml",
    "merge_layers",
    "parse_assignments",
    "parse_size",
    "read_stored_settings",
    "resume_settings",
    "revisit_base_settings",
    "settings_dict",
    "settings_values",
    "stored_settings",
]

log = logging.getLogger(__name__)

#: The meta key holding the crawl's settings (JSON of :func:`settings_dict`).
META_SETTINGS = "settings"
#: The meta keys holding the crawl's seeds (a JSON list) and its strategy (spec).
META_SEEDS, META_STRATEGY = "seeds", "strategy"

_TRUE = frozenset(("1", "true", "yes", "on"))
_FALSE = frozenset(("0", "false", "no", "off"))
_NONE = frozenset(("none", "null"))
#: Settings that are file or folder paths, kept absolute.
_PATHS = ("tls_ca_file", "warc_dir", "warc_dedup")
#: Settings that are byte sizes: text may carry a binary unit (``512K``, ``2G``).
_SIZES = ("memory_limit",)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes of a size written ``N``, ``NK``, ``NM``, ``NG`` or ``NT`` (binary units,
    ``N`` may have a decimal point, a trailing ``B``/``iB`` is allowed).

    >>> parse_size("2G"), parse_size("1.5M"), parse_size("4096")
    (2147483648, 1572864, 4096)
    """
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in _UNITS and t[-1:] else ""
    number = t[: len(t) - len(unit)].strip()
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (e.g. 512M, 2G)") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"not a size: {text!r} (e.g. 512M, 2G)")
    return int(value * _UNITS[unit])


def _field_types() -> dict[str, Any]:
    hints = typing.get_type_hints(CrawlSettings)
    return {f.name: hints[f.name] for f in fields(CrawlSettings)}


def _unknown(name: str, source: str) -> ConfigError:
    close = difflib.get_close_matches(name, _field_types(), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return ConfigError(f"{source}: unknown setting {name!r}{hint}")


def _split_optional(kind: Any) -> tuple[Any, bool]:
    """``(T, True)`` for ``T | None``, ``(kind, False)`` otherwise."""
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return kind, False


def convert_setting(name: str, value: Any, *, source: str = "setting") -> Any:
    """``value`` (text, or a TOML/JSON value) converted to the type of field ``name``.

    Text is parsed (``"2.5"`` for a float, ``true``/``false``/``yes``/``no``/``1``/``0``
    for a bool, comma-separated items or a JSON list for a tuple, ``none`` for an
    optional field); other values must already have the type (an int is accepted for
    a float).  Raises ConfigError naming ``source`` and the field.
    """
    kinds = _field_types()
    if name not in kinds:
        raise _unknown(name, source)
    kind, optional = _split_optional(kinds[name])
    expected = getattr(kind, "__name__", str(kind))
    if kind is not str and typing.get_origin(kind) is None and kind not in (int, float, bool):
        raise ConfigError(f"{source}: {name} has the unsupported type {expected}")

    def bad(why: str = "") -> ConfigError:
        if isinstance(value, (_dt.date, _dt.time)):  # a datetime is a date
            shown, why = value.isoformat(), why or " (a TOML date or time)"
        else:
            shown = value if isinstance(value, str) else json.dumps(value, default=_toml_text)
        wanted = "a list of strings" if typing.get_origin(kind) is tuple else f"a {expected}"
        return ConfigError(f"{source}: {name} must be {wanted}"
                           f"{' or none' if optional else ''}, got {shown!r}{why}")

    if value is None or (optional and isinstance(value, str)
                         and value.strip().lower() in _NONE):
        if optional:
            return None
        raise bad()
    if typing.get_origin(kind) is tuple:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                try:
                    value = json.loads(text)
                except json.JSONDecodeError:
                    raise bad(" (not a JSON list)") from None
            else:
                value = [item.strip() for item in text.split(",") if item.strip()]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise bad()
        return tuple(value)
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise bad()
    if kind is int:
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return parse_size(value) if name in _SIZES else int(value.strip())
            except ValueError:
                raise bad(" (a size: e.g. 512M, 2G)" if name in _SIZES else "") from None
        raise bad()
    if kind is float:
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                raise bad() from None
        raise bad()
    if not isinstance(value, str):
        raise bad()
    return value


def parse_assignments(items: Iterable[str], *, source: str = "--set") -> dict[str, Any]:
    """``["name=value", ...]`` as typed settings (later assignments win)."""
    out: dict[str, Any] = {}
    for item in items:
        name, eq, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not eq or not name:
            raise ConfigError(f"{source}: expected name=value, got {item!r}")
        out[name] = convert_setting(name, text, source=f"{source} {name}")
    return out


def load_toml(path: str | Path) -> dict[str, Any]:
    """The settings of a TOML file (see the module docstring), typed and checked."""
    import tomllib

    p = Path(path)
    try:
        with p.open("rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"no config file at {p}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text (byte {exc.start}); TOML files are UTF-8") \
            from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                name = f"{key}_{sub}"
                out[name] = convert_setting(name, v, source=f"{p} [{key}] {sub}")
        else:
            out[key] = convert_setting(key, value, source=f"{p}")
    return out


def _toml_text(value: Any) -> str:
    """A TOML value JSON has no type for (dates and times) as text."""
    return value.isoformat() if isinstance(value, (_dt.date, _dt.time)) else str(value)


def settings_dict(settings: CrawlSettings) -> dict[str, Any]:
    """Every field as a JSON-ready value; paths (CA file, WARC folder) absolute."""
    out = {f.name: getattr(settings, f.name) for f in fields(settings)}
    for name, value in out.items():
        if isinstance(value, tuple):
            out[name] = list(value)
    for name in _PATHS:
        if out[name]:
            out[name] = os.path.abspath(out[name])
    return out


def stored_settings(meta: Mapping[str, str]) -> dict[str, Any]:
    """The typed settings stored with a crawl (``meta`` table), ``{}`` if none.

    Names this version does not know (a crawl written by another version) are logged
    and left out; a value of the wrong type is a ConfigError.
    """
    raw = meta.get(META_SETTINGS)
    if not raw:
        return {}
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError:
        raise ConfigError("the crawl's stored settings are not valid JSON") from None
    if not isinstance(doc, dict):
        raise ConfigError("the crawl's stored settings are not a JSON object")
    known = _field_types()
    out: dict[str, Any] = {}
    for name, value in doc.items():
        if name not in known:
            log.warning("stored setting %r is unknown to this version: ignored", name)
            continue
        out[name] = convert_setting(name, value, source="stored settings")
    return out


def read_stored_settings(db: str | Path) -> dict[str, Any]:
    """:func:`stored_settings` of the crawl database ``db``."""
    from webcrawl.storage.reader import CrawlReader

    with CrawlReader(db) as reader:
        return stored_settings(reader.meta())


#: Stored settings a revisit does not take over: the crawl's WARC folder and what it
#: wrote there (revisits are archived only when ``revisit --warc`` asks for it).
NOT_FOR_REVISIT = ("warc_dir", "warc_dedup", "warc_dedup_repeats", "warc_cdxj")


def revisit_base_settings(db: str | Path) -> dict[str, Any]:
    """The stored settings a revisit of ``db`` connects with (all but
    :data:`NOT_FOR_REVISIT`): resolve rules, TLS, User-Agent, scope, politeness."""
    stored = read_stored_settings(db)
    for name in NOT_FOR_REVISIT:
        stored.pop(name, None)
    return stored


def build_settings(*layers: Mapping[str, Any]) -> CrawlSettings:
    """CrawlSettings from layers of typed values, later layers winning.

    ``tls_ca_file`` and ``tls_insecure`` exclude each other, so a layer that sets one
    of them (truthy) clears the other one of earlier layers.  Paths (the CA file, the
    WARC folder) are made absolute.
    """
    return CrawlSettings(**merge_layers(*layers))


def settings_values(settings: CrawlSettings | Mapping[str, Any]) -> dict[str, Any]:
    """Every field's value, as a layer for :func:`build_settings`; a User-Agent derived
    from the product token and contact becomes "" again, so that it follows a new
    ``fetch_contact``, ``fetch_robots_agent`` or version."""
    from webcrawl.crawler.settings import user_agent

    if isinstance(settings, CrawlSettings):
        values = {f.name: getattr(settings, f.name) for f in fields(settings)}
    else:
        values = dict(settings)
    agent = values.get("fetch_user_agent")
    if agent and agent == user_agent(values.get("fetch_robots_agent", "webcrawl"),
                                     values.get("fetch_contact")):
        values["fetch_user_agent"] = ""
    return values


def merge_layers(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Layers of typed values as one, later layers winning (see :func:`build_settings`)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        if layer.get("tls_insecure"):
            merged.pop("tls_ca_file", None)
        if layer.get("tls_ca_file"):
            merged.pop("tls_insecure", None)
        merged.update(layer)
    for name in _PATHS:  # stored with the crawl: valid from any directory
        if merged.get(name):
            merged[name] = os.path.abspath(merged[name])
    return merged


@dataclass(frozen=True, slots=True)
class LayeredSettings:
    """The settings a run uses, and what the given layers changed of the stored ones."""

    settings: CrawlSettings
    #: one line naming every stored setting a given layer replaced (empty: none)
    notes: tuple[str, ...]


def given_fields(layer: CrawlSettings | Mapping[str, Any] | None, *,
                 source: str = "setting") -> dict[str, Any]:
    """The fields a layer gives.

    A :class:`CrawlSettings` gives the fields whose values differ from the defaults (a
    library caller's ``CrawlSettings(concurrency=4)`` gives ``concurrency`` and nothing
    else); a mapping gives its keys, each checked against the field names (an unknown
    name is a :class:`ConfigError` naming ``source``, with the closest field).
    """
    if layer is None:
        return {}
    if isinstance(layer, CrawlSettings):
        defaults = settings_values(CrawlSettings())
        return {name: value for name, value in settings_values(layer).items()
                if not _same(value, defaults[name])}
    known = _field_types()
    for name in layer:
        if name not in known:
            raise _unknown(name, source)
    return dict(layer)


def layer_settings(*layers: CrawlSettings | Mapping[str, Any] | None,
                   stored: Mapping[str, Any] | None = None) -> LayeredSettings:
    """The one way settings are layered: defaults < ``stored`` < each layer in order.

    Every entry point calls this -- ``webcrawl crawl`` and ``crawl --resume``, ``webcrawl
    revisit``, the demo, and the library's :class:`~webcrawl.crawler.engine.Crawler`,
    :func:`~webcrawl.crawler.engine.crawl` and revisit classes -- so the same layers give the
    same :class:`CrawlSettings` everywhere.  The command line's layers are ``--config``
    (:func:`load_toml`), the dedicated options, then ``--set`` (:func:`parse_assignments`).

    Only the fields a layer gives change (:func:`given_fields`): a layer never resets a
    stored value it does not name.  ``tls_ca_file`` and ``tls_insecure`` exclude each
    other (:func:`merge_layers`).  The notes name every stored value a layer replaced.
    """
    stored = dict(stored or {})
    explicit = merge_layers(*(given_fields(layer) for layer in layers))
    changes = changed_settings(stored, {k: v for k, v in explicit.items() if k in stored})
    notes = (f"overriding the crawl's stored settings: {'; '.join(changes)}",) if changes else ()
    base = settings_values({**settings_values(CrawlSettings()), **stored})
    return LayeredSettings(build_settings(base, explicit), notes)


def resume_settings(meta: Mapping[str, str], given: CrawlSettings | None = None,
                    overrides: Mapping[str, Any] | None = None,
                    strategy: Strategy | None = None) -> LayeredSettings:
    """The settings of a crawl from its stored ``meta`` (empty for a new crawl) and the
    settings given, layered by :func:`webcrawl.crawler.config.layer_settings`.

    Parameters
    ----------
    meta : mapping
        The crawl database's meta table (``{}``: a new crawl).
    given : CrawlSettings, optional
        A settings object: the fields it gives (those that differ from the defaults)
        replace the stored values.
    overrides : mapping of field name to value, optional
        Settings given again one by one (the command line's options); they win over
        ``given`` and the stored values.
    strategy : Strategy, optional
        A strategy instance: its name must be the stored strategy's.

    Raises
    ------
    ConfigError
        An unknown setting name; a strategy other than the stored one; stored and
        given settings that do not validate together (e.g. a CA file no longer there).
    """
    stored = stored_settings(meta)
    if META_STRATEGY in meta:
        stored["frontier_strategy"] = meta[META_STRATEGY]
    layers: list[CrawlSettings | Mapping[str, Any] | None] = [given, overrides]
    if strategy is not None:
        layers.append({"frontier_strategy": strategy.name})
    layered = layer_settings(*layers, stored=stored)
    stored_strategy = stored.get("frontier_strategy")
    wanted = layered.settings.frontier_strategy
    if stored_strategy is not None and wanted != stored_strategy:
        raise ConfigError(
            f"this crawl was ordered by the {stored_strategy!r} strategy; resuming it with "
            f"{wanted!r} would mix two orderings (leave the strategy out to continue in "
            f"{stored_strategy!r} order, or start a new crawl)")
    return layered


def changed_settings(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """``name old -> new`` for every name of ``after`` whose value differs from ``before``."""
    out = []
    for name, value in after.items():
        old = before.get(name)
        if name in before and _same(old, value):
            continue
        out.append(f"{name} {_show(old)} -> {_show(value)}" if name in before
                   else f"{name} = {_show(value)}")
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(a) == list(b)
    return bool(a == b)


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)
