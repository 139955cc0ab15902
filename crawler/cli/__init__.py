"""The ``webcrawl`` console script: a thin layer over the library.

Each sub-command lives in its own module here and exposes ``register(subparsers)``,
which adds its parser and sets ``func`` to a handler ``(args) -> int``.  Handlers import
heavy libraries (numpy, scipy, matplotlib) lazily so that ``webcrawl --help`` is fast.
Library errors (:class:`webcrawl.storage.errors.WebcrawlError`) become one-line messages here,
at the edge, with a non-zero exit status.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from webcrawl.crawler.child_pipes import one_blas_thread
from webcrawl.crawler.cli._help import attach_examples, iter_parsers
from webcrawl.crawler.cli._output import add_output_options, configured_logging
from webcrawl.storage._version import __version__
from webcrawl.storage.errors import WebcrawlError

__all__ = ["EXIT_STATUSES", "build_parser", "main"]

# Sub-command modules, in the order ``--help`` lists them.
COMMAND_MODULES = (
    "webcrawl.crawler.cli.demo",
    "webcrawl.crawler.cli.fixture",
    "webcrawl.crawler.cli.crawl",
    "webcrawl.crawler.cli.revisit",
    "webcrawl.crawler.cli.analyze",
    "webcrawl.crawler.cli.compare",
    "webcrawl.crawler.cli.simulate",
    "webcrawl.crawler.cli.ingest",
    "webcrawl.crawler.cli.export",
    "webcrawl.crawler.cli.report",
)

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what `cmd | head` shells expect
#: Every exit status of the ``webcrawl`` command and its meaning (the CLI reference prints
#: this table).  4 is ``webcrawl.crawler.cli.crawl.EXIT_NO_SEED_FETCHED``.
EXIT_STATUSES = {
    EXIT_OK: "success",
    EXIT_ERROR: "an error, said in one line on stderr: bad input, data the command cannot "
                "use, a file that cannot be read or written, a second writer of a crawl "
                "database, a politeness violation found by the demo's audit",
    EXIT_USAGE: "a usage error: an unknown option, a value out of range",
    4: "`crawl`: none of the seeds could be fetched (no HTTP answer: refused connections, "
       "DNS failures, timeouts, robots.txt unreachable or excluding them), like wget's "
       "network failure",
    EXIT_INTERRUPTED: "stopped by Ctrl-C or SIGTERM; a crawl stops cleanly and "
                      "`webcrawl crawl --db FILE --resume` continues it",
    EXIT_BROKEN_PIPE: "the reader of standard output went away (`webcrawl export ... | head`)",
}


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, with a pointer to ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse lists the choices; name the one the user most likely meant first
        # (``webcrawl crawll``: did you mean 'crawl'?).
        if action.choices is None or value in action.choices:
            return
        choices = [str(choice) for choice in action.choices]
        close = difflib.get_close_matches(str(value), choices, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r}{hint} (choose from "
                    f"{', '.join(map(repr, choices))})")

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # Python 3.11 drops a lone '--' given as an option's value (``--pages=--``) and
        # hands the handler an empty list, bypassing the option's type check.
        if arg_strings == ["--"] and action.option_strings and action.nargs is None:
            self.error(f"argument {'/'.join(action.option_strings)}: expected a value, "
                       "got '--'")
        return super()._get_values(action, arg_strings)

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        # A NUL byte can name no file: open() would raise a bare ValueError later.
        if action.type is Path and "\x00" in arg_string:
            name = "/".join(action.option_strings) or action.metavar or action.dest
            self.error(f"argument {name}: a path cannot contain a NUL byte")
        return super()._get_value(action, arg_string)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``webcrawl`` parser, every command in it; with ``command`` (the last part of a
    module of :data:`COMMAND_MODULES`), that module's commands alone."""
    parser = OneLineParser(
        prog="webcrawl",
        description="A polite web crawler and web-graph analysis suite.",
    )
    parser.add_argument("--version", action="version", version=f"webcrawl {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in COMMAND_MODULES if command is None else [_COMMAND_PREFIX + command]:
        importlib.import_module(name).register(sub)
    for leaf in _leaf_parsers(parser):
        add_output_options(leaf)
    attach_examples(parser)
    return parser


_COMMAND_PREFIX = "webcrawl.crawler.cli."


def _parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser that runs ``argv``: the named command's alone when its module bears its
    name, so a process loads only the modules its command uses (``webcrawl crawl``
    imported all ten and built their parsers: 0.05 CPU-s of every process, 2026-12-06);
    the whole one otherwise (the top-level help, an alias, a typo: the listing and the
    suggestions need every command)."""
    name = argv[0] if argv else ""
    if _COMMAND_PREFIX + name in COMMAND_MODULES:
        parser = build_parser(name)
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if name in subs[0].choices:
            return parser
    return build_parser()


def _leaf_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers that run a command (those without sub-commands of their own)."""
    leaves = [sub for _path, sub in iter_parsers(parser)
              if not any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)]
    return list(dict.fromkeys(leaves))  # an alias shares its command's parser


def _missing_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> NoReturn:
    """A command group given without its command (``webcrawl``, ``webcrawl analyze``): a
    usage error, one line naming the choices."""
    for token in argv:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or token not in subs[0].choices:
            break
        parser = subs[0].choices[token]
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    names = ", ".join(dict.fromkeys(subs[0].choices)) if subs else ""
    parser.error(f"choose a command: {names}")


def main(argv: Sequence[str] | None = None) -> int:
    one_blas_thread(os.environ)  # before any command imports numpy
    parser = _parser_for(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        _missing_command(parser, sys.argv[1:] if argv is None else argv)
    try:
        with configured_logging(args):
            return int(args.func(args) or 0)
    except WebcrawlError as exc:
        print(f"webcrawl: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError:
        print("webcrawl: error: not enough memory for this run (try smaller sizes)",
              file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("webcrawl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`webcrawl ... | head`): stop quietly.  Point stdout at
        # /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as exc:
        # Files the user named that cannot be read or written, ports in use, ...
        print(f"webcrawl: error: {exc.strerror or exc}"
              + (f": {exc.filename}" if exc.filename else ""), file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
