"""Options and helpers shared by several sub-commands."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from webcrawl.storage.errors import ConfigError

__all__ = [
    "add_db_option",
    "add_duplicates_option",
    "add_graph_option",
    "add_json_option",
    "add_politeness_options",
    "add_settings_options",
    "add_sites_option",
    "add_warc_option",
    "check_output",
    "existing_db",
    "float_at_least",
    "float_range",
    "fraction",
    "in_options",
    "int_at_least",
    "int_range",
    "nonneg_float",
    "nonneg_int",
    "politeness_settings",
    "port_int",
    "positive_float",
    "positive_int",
    "print_json",
    "print_sites",
    "print_table",
    "seed_int",
    "settings_layers",
    "settings_options",
    "size_arg",
    "warc_settings",
]


#: Upper bound of every count option (ids and link arrays are int32).
MAX_COUNT = 2**31 - 1
#: Upper bound of every seconds/rate option (about 31 years of seconds).
MAX_FLOAT = 1e9
#: Random seeds: what every generator we use accepts.
MAX_SEED = 2**32 - 1


def _range_text(low: float, high: float, low_open: bool, high_open: bool) -> str:
    return f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def int_range(low: int, high: int = MAX_COUNT) -> Callable[[str], int]:
    """An argparse ``type`` accepting integers in ``[low, high]`` (named in the message).

    The returned parser carries ``low``, ``high`` and ``kind = "int"`` so tests (the
    CLI fuzz test) can read every option's range from the parser.
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not an integer: {text!r} (expected an integer in [{low}, {high}])") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"must be an integer in [{low}, {high}], got {text}")
        return value
    parse.low, parse.high, parse.kind = low, high, "int"  # type: ignore[attr-defined]
    return parse


def float_range(low: float, high: float = MAX_FLOAT, *, low_open: bool = False,
                high_open: bool = False) -> Callable[[str], float]:
    """An argparse ``type`` accepting finite numbers in a range (named in the message)."""
    span = _range_text(low, high, low_open, high_open)

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not a number: {text!r} (expected a number in {span})") from None
        inside = (math.isfinite(value) and (low < value if low_open else low <= value)
                  and (value < high if high_open else value <= high))
        if not inside:
            raise argparse.ArgumentTypeError(f"must be a number in {span}, got {text}")
        return value
    parse.low, parse.high, parse.kind = low, high, "float"  # type: ignore[attr-defined]
    parse.low_open, parse.high_open = low_open, high_open  # type: ignore[attr-defined]
    return parse


def int_at_least(low: int) -> Callable[[str], int]:
    """Integers in ``[low, MAX_COUNT]``."""
    return int_range(low)


def float_at_least(low: float, *, strict: bool = False) -> Callable[[str], float]:
    """Finite numbers in ``[low, MAX_FLOAT]`` (``(low, MAX_FLOAT]`` if strict)."""
    return float_range(low, low_open=strict)


def size_arg(text: str) -> int:
    """An argparse ``type`` for a positive byte size (``4096``, ``512M``, ``2G``)."""
    from webcrawl.crawler.config import parse_size

    try:
        value = parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive size, got {text}")
    return value


positive_int = int_range(1)
nonneg_int = int_range(0)
positive_float = float_range(0.0, low_open=True)
nonneg_float = float_range(0.0)
#: a random seed
seed_int = int_range(0, MAX_SEED)
#: a TCP port (0: any free port, where a server picks it)
port_int = int_range(0, 65535)
#: a fraction
fraction = float_range(0.0, 1.0)


def add_politeness_options(parser: argparse.ArgumentParser, *, robots_help: str) -> None:
    """The sandboxing and politeness options shared by ``crawl`` and ``revisit``.

    Their defaults are None: :func:`politeness_settings` returns only the options
    given, so that stored settings and ``--config`` apply to the rest.
    """
    from webcrawl.crawler.settings import CrawlSettings, user_agent

    d = CrawlSettings()
    parser.add_argument("--resolve", action="append", default=None, metavar="RULE",
                        help="send hosts matching a glob to a fixed address instead of DNS: "
                             "PATTERN[:PORT]=ADDR[:PORT] ('*.test=127.0.0.1', "
                             "'*:443=127.0.0.1:8443') or curl's HOST:PORT:ADDR "
                             "('docs.example.org:80:127.0.0.1'); repeatable, first match wins")
    parser.add_argument("--delay-factor", type=nonneg_float, default=None, metavar="F",
                        help=f"wait F times the last fetch time (default "
                             f"{d.polite_delay_factor:g})")
    parser.add_argument("--min-delay", type=nonneg_float, default=None, metavar="S",
                        help=f"minimum seconds between requests to a host (default "
                             f"{d.polite_min_delay:g})")
    parser.add_argument("--max-delay", type=nonneg_float, default=None, metavar="S",
                        help=f"cap of the computed wait (default {d.polite_max_delay:g})")
    parser.add_argument("--concurrency", type=positive_int, default=None, metavar="C",
                        help=f"requests in flight over all hosts (default {d.concurrency})")
    parser.add_argument("--timeout", type=positive_float, default=None, metavar="S",
                        help=f"total seconds per request (default "
                             f"{d.fetch_total_timeout:g})")
    parser.add_argument("--contact", default=None, metavar="URL-OR-EMAIL",
                        help="how site operators reach you, named in the User-Agent (a crawl "
                             "of a non-loopback host without it is warned about)")
    parser.add_argument("--robots-agent", default=None, metavar="TOKEN",
                        help="product token matched against robots.txt User-agent lines "
                             f"(letters, '-', '_'; default {d.fetch_robots_agent})")
    parser.add_argument("--user-agent", default=None, metavar="UA",
                        help="the whole User-Agent header (default: "
                             f"'{user_agent(d.fetch_robots_agent, 'CONTACT')}' with "
                             "CONTACT the --contact given, or "
                             f"'{user_agent(d.fetch_robots_agent, None)}' without it)")
    parser.add_argument("--ignore-robots", action="store_true", default=None,
                        help=robots_help)
    parser.add_argument("--ca-file", default=None, metavar="PEM",
                        help="extra trusted CA bundle (PEM) for HTTPS")
    parser.add_argument("--insecure", action="store_true", default=None,
                        help="do not verify TLS certificates (warned about)")


#: Option destinations of :func:`add_politeness_options` -> CrawlSettings fields.
_POLITENESS_FIELDS = {
    "resolve": "resolve", "delay_factor": "polite_delay_factor",
    "min_delay": "polite_min_delay", "max_delay": "polite_max_delay",
    "concurrency": "concurrency", "timeout": "fetch_total_timeout",
    "user_agent": "fetch_user_agent", "contact": "fetch_contact",
    "robots_agent": "fetch_robots_agent", "ca_file": "tls_ca_file",
    "insecure": "tls_insecure"}


def politeness_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``CrawlSettings`` keyword arguments of the :func:`add_politeness_options` given."""
    if args.ca_file and args.insecure:
        raise ConfigError("--ca-file and --insecure exclude each other")
    out = {name: getattr(args, dest) for dest, name in _POLITENESS_FIELDS.items()
           if getattr(args, dest) is not None}
    if "resolve" in out:
        out["resolve"] = tuple(out["resolve"])
    if args.ignore_robots:
        out["robots_obey"] = False
    return out


def add_settings_options(parser: argparse.ArgumentParser) -> None:
    """``--config FILE.toml`` and ``--set NAME=VALUE`` (any CrawlSettings field), and the
    crawl database's ``--db-wait`` of every command that writes one as it crawls."""
    from webcrawl.crawler.settings import CrawlSettings

    parser.add_argument("--config", type=Path, default=None, metavar="FILE.toml",
                        help="crawl settings from a TOML file: CrawlSettings field names "
                             "(polite_min_delay = 2.0) or prefix tables ([polite] "
                             "min_delay = 2.0); the options below win over it")
    parser.add_argument("-s", "--set", dest="set_settings", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="set any CrawlSettings field (e.g. --set retry_attempts=5, "
                             "--set scope_hosts=a.test,b.test); repeatable; wins over "
                             "every other option")
    parser.add_argument("--db-wait", type=nonneg_float, default=None, metavar="S",
                        help="seconds a write to --db waits for another program's write "
                             "lock on it (a sqlite3 shell, a notebook in a transaction), "
                             "with a warning, before the command stops and keeps what it "
                             "could not write for the resume (default "
                             f"{CrawlSettings().store_busy_wait:g})")


def settings_layers(args: argparse.Namespace, options: dict[str, Any]) -> list[dict[str, Any]]:
    """The command line's settings layers, weakest first: ``--config``, the dedicated
    ``options`` (field -> value, only those given; ``--db-wait`` joins them here),
    ``--set``."""
    from webcrawl.crawler.config import load_toml, parse_assignments

    config = load_toml(args.config) if args.config is not None else {}
    if getattr(args, "db_wait", None) is not None:
        options = {**options, "store_busy_wait": args.db_wait}
    return [config, options, parse_assignments(args.set_settings)]


def add_warc_option(parser: argparse.ArgumentParser) -> None:
    """``--warc DIR``: also write every HTTP exchange as WARC records (``crawler.archive``);
    ``--warc-dedup``, ``--warc-dedup-repeats``, ``--warc-cdxj`` shape them."""
    parser.add_argument("--warc", type=Path, default=None, metavar="DIR",
                        help="write every request and response as WARC 1.1 files "
                             "(gzip per record, 1 GB each) into DIR")
    parser.add_argument("--warc-dedup", type=Path, default=None, metavar="FILE",
                        help="a previous crawl's database or a CDXJ/CDX index of its WARCs: "
                             "a body it holds is written as a revisit record, not stored "
                             "again (like wget's --warc-dedup); a database's robots.txt "
                             "answers come from the CDXJ files beside its WARCs, if any")
    parser.add_argument("--warc-dedup-repeats", action="store_true", default=None,
                        help="also write a body this crawl stored already (in this run, or "
                             "in the WARC folder's earlier files of a resumed crawl) as a "
                             "revisit record; with --workers, per worker")
    parser.add_argument("--warc-cdxj", action="store_true", default=None,
                        help="write a CDXJ index (pywb's format) beside each WARC file")


def settings_options(parser: argparse.ArgumentParser,
                     fields: Mapping[str, str] = {}) -> dict[str, str]:
    """CrawlSettings field -> the option of ``parser`` that sets it (its first spelling),
    for the politeness and WARC options and ``fields`` (option destination -> field)."""
    named = {**_POLITENESS_FIELDS, **_WARC_FIELDS, **fields}
    return {named[a.dest]: a.option_strings[0] for a in parser._actions
            if a.dest in named and a.option_strings}


def in_options(text: str, options: Mapping[str, str]) -> str:
    """``text`` (a note about settings) with each field name of ``options`` replaced by
    the option the user typed: ``scope_max_pages 5 -> 9`` reads ``--max-fetches 5 -> 9``."""
    if not options:
        return text
    names = "|".join(map(re.escape, sorted(options, key=len, reverse=True)))
    return re.sub(rf"\b({names})\b", lambda m: options[m.group(1)], text)


#: Options of :func:`add_warc_option` (destination -> CrawlSettings field).
_WARC_FIELDS = {"warc": "warc_dir", "warc_dedup": "warc_dedup",
                "warc_dedup_repeats": "warc_dedup_repeats", "warc_cdxj": "warc_cdxj"}


def warc_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``CrawlSettings`` keyword arguments from :func:`add_warc_option` (those given)."""
    given = {field: getattr(args, dest) for dest, field in _WARC_FIELDS.items()
             if getattr(args, dest) is not None}
    return {k: str(v) if isinstance(v, Path) else v for k, v in given.items()}


def add_db_option(parser: argparse.ArgumentParser, *, must_exist: bool = True) -> None:
    """``--db PATH``: the crawl database."""
    parser.add_argument("--db", required=True, type=Path, metavar="PATH",
                        help="the crawl database file" + (" (must exist)" if must_exist else ""))


#: Retired graph flags -> what replaced them (issue 14: one flag, one meaning).
RETIRED_GRAPH_FLAGS = {
    "--crawled-only": "the fetched pages are the default graph now (--graph pages)",
    "--include-frontier": "use --graph all",
}


class _Retired(argparse.Action):
    """A hidden flag that only says what replaced it, as a usage error."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        parser.error(f"{option_string} was retired: {RETIRED_GRAPH_FLAGS[str(option_string)]}")


def add_graph_option(parser: argparse.ArgumentParser) -> None:
    """``--graph pages|all``: which graph a measurement runs on (one meaning everywhere)."""
    parser.add_argument("--graph", choices=("pages", "all"), default="pages",
                        help="pages (default): the fetched pages and the links among "
                             "them (links through redirects lead to their target); all: "
                             "also every discovered but unfetched URL (frontier, "
                             "off-site, robots-excluded, errors, redirects)")
    for flag in RETIRED_GRAPH_FLAGS:
        parser.add_argument(flag, nargs=0, action=_Retired, help=argparse.SUPPRESS)
    add_duplicates_option(parser)


def add_duplicates_option(parser: argparse.ArgumentParser) -> None:
    """``--duplicates collapse|near|keep``: pages whose body repeats an earlier page's,
    and near copies of a page's text."""
    parser.add_argument("--duplicates", choices=("collapse", "near", "keep"),
                        default="collapse",
                        help="collapse (default): a page whose body repeats, byte for "
                             "byte, a page fetched earlier (http and https copies, www. "
                             "aliases) is merged into that page, and outputs name the "
                             "count; near: so is a near copy (its text resembles a group "
                             "leader's: another date, menu, advert, block order) merged "
                             "into its leader; keep: every copy is its own node")


#: ``--sites``: each choice and what it means (the first is the default).
SITES_CHOICES = {"mirrors": "hosts that serve the same documents (a mirror, an http/https "
                            "or www. alias) are one site for same-site links, diverse "
                            "cores, host counts and politeness",
                 "hosts": "every host name its own site"}


def add_sites_option(parser: argparse.ArgumentParser) -> None:
    """``--sites mirrors|hosts``: what "the same site" means for host-based measures."""
    meanings = [f"{name}{' (default)' if k == 0 else ''}: {text}"
                for k, (name, text) in enumerate(SITES_CHOICES.items())]
    parser.add_argument("--sites", choices=tuple(SITES_CHOICES), default="mirrors",
                        help="; ".join(meanings))


def print_sites(graph: Any) -> None:
    """Name the mirrored hosts merged into one site, on stderr (nothing if none)."""
    for mirror in graph.mirrors:
        print(f"one site: {mirror.describe()}", file=sys.stderr)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """``--json``: machine-readable output instead of tables."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def check_output(path: Path, *, folder: bool = False) -> Path:
    """Refuse an output path that cannot be written, before any work or progress line
    (:func:`webcrawl.storage.output.check_output_path`: a directory, a block device, an
    unwritable folder; ``folder``: a directory to create or fill)."""
    from webcrawl.storage.output import check_output_path

    return check_output_path(path, folder=folder)


def existing_db(path: Path) -> Path:
    """Return ``path`` if it is an existing file, else raise a one-line ConfigError."""
    if not path.exists():
        raise ConfigError(f"no crawl database at {path}")
    if path.is_dir():
        raise ConfigError(f"{path} is a directory, not a crawl database file")
    if not path.is_file():
        raise ConfigError(f"{path} is a device or special file, not a crawl database file")
    return path


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=_json_default)
    sys.stdout.write("\n")


def _json_default(obj: Any) -> Any:
    # numpy scalars and arrays
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def print_table(headers: list[str], rows: list[list[Any]], *, title: str | None = None) -> None:
    """Print a plain aligned table; floats get 4 significant digits."""
    def fmt(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

    cells = [[fmt(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(headers)]
    if title:
        print(title)
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
