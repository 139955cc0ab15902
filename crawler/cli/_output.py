"""What every command shares about its output: verbosity, logging, the progress display
of a command's stages, and ``-`` as standard output.

Every command takes ``-v/--verbose`` (repeatable), ``-q/--quiet``, ``--log-level`` and
``--log-file`` (added by :func:`add_output_options`, which :func:`webcrawl.crawler.cli.build_parser`
calls on every sub-command).  Log records of the ``webcrawl`` loggers go to stderr as
``webcrawl: level: message`` at WARNING (``-v`` INFO, ``-vv`` DEBUG, ``--log-level`` any
of them) and, with ``--log-file FILE``, are appended to FILE with a time stamp at
``--log-level`` (default INFO).  ``-q`` hides progress and summaries, never a warning
(``--log-level error`` does).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["LOG_LEVELS", "add_output_options", "configured_logging", "end_stages",
           "is_stdout", "stage_display"]

#: ``--log-level`` choices.
LOG_LEVELS = ("debug", "info", "warning", "error")
#: The loggers of the packages (``logging.getLogger(__name__)`` under ``webcrawl``).
ROOT_LOGGER = "webcrawl"


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``-v/--verbose``, ``-q/--quiet``, ``--log-level``, ``--log-file`` on ``parser``."""
    group = parser.add_argument_group("output and logging")
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="log more on stderr: -v informational messages, -vv debugging")
    group.add_argument("-q", "--quiet", action="store_true",
                       help="no progress display and no summary (warnings and errors are "
                            "still written)")
    group.add_argument("--log-level", choices=LOG_LEVELS, default=None, metavar="LEVEL",
                       help="level of the log records on stderr and in --log-file: "
                            f"{', '.join(LOG_LEVELS)} (default warning on stderr, info in "
                            "the file)")
    group.add_argument("--log-file", type=Path, default=None, metavar="FILE",
                       help="also append the log records, time-stamped, to FILE")


def _stderr_level(args: argparse.Namespace) -> int:
    if args.log_level is not None:
        return int(getattr(logging, args.log_level.upper()))
    if args.verbose >= 2:
        return logging.DEBUG
    if args.verbose == 1:
        return logging.INFO
    return logging.WARNING


@contextlib.contextmanager
def configured_logging(args: argparse.Namespace) -> Iterator[None]:
    """Within the block, the ``webcrawl`` loggers write as the options say; the handlers
    are removed and the file closed afterwards (``main`` may run many times in one
    process, as the tests do)."""
    logger = logging.getLogger(ROOT_LOGGER)
    if not hasattr(args, "verbose"):  # a parser without the options (no sub-command)
        yield
        return
    stderr_level = _stderr_level(args)
    handlers: list[logging.Handler] = []
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(stderr_level)
    console.setFormatter(_OneLine())
    handlers.append(console)
    file_level = stderr_level
    if args.log_file is not None:
        file_level = (int(getattr(logging, args.log_level.upper()))
                      if args.log_level is not None else logging.INFO)
        log_file = _LogFile(args.log_file, encoding="utf-8")
        log_file.setLevel(file_level)
        log_file.setFormatter(logging.Formatter(
            "%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handlers.append(log_file)
    # The handlers filter by level; the logger only lets more through when asked (-v),
    # so records still reach any handler an embedding program installed above it.
    saved = logger.level
    logger.setLevel(min(stderr_level, file_level, logger.getEffectiveLevel()))
    for handler in handlers:
        logger.addHandler(handler)
    completed = False
    try:
        yield
        completed = True
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
            handler.close()
        logger.setLevel(saved)
    failed = next((h.failed for h in handlers if isinstance(h, _LogFile) and h.failed), None)
    if completed and failed is not None:  # else the command's own error is the one line
        raise failed


class _LogFile(logging.FileHandler):
    """``--log-file``: a write that fails (a full disk, ``/dev/full``) stops the writes to
    the file, never the command, and is kept in :attr:`failed`; :func:`configured_logging`
    raises it when the command ends (one line, a non-zero exit), not a traceback per
    record."""

    failed: OSError | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.failed is None:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            super().handleError(record)  # a bad log call: a bug, reported as logging does
        elif self.failed is None:
            self.failed = _named(exc, self.baseFilename)

    def close(self) -> None:
        try:
            super().close()  # flushes: may fail on a full disk too
        except OSError as exc:
            if self.failed is None:
                self.failed = _named(exc, self.baseFilename)


def _named(exc: OSError, path: str) -> OSError:
    return exc if exc.filename is not None else type(exc)(exc.errno, exc.strerror, path)


class _OneLine(logging.Formatter):
    """``webcrawl: level: message``, the CLI's one-line style (a message that already
    starts with ``webcrawl:`` is written as it is)."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if message.startswith("webcrawl: "):
            return message
        return f"webcrawl: {record.levelname.lower()}: {message}"


def is_stdout(path: Path | None) -> bool:
    """``-o -``: the output goes to standard output."""
    return path is not None and str(path) == "-"


def stage_display(args: argparse.Namespace) -> Callable[[str], None] | None:
    """The progress of a command that runs in stages (``compare``, ``report``,
    ``import edges``): each stage line, with the time since the start, through the one
    progress display (:class:`webcrawl.crawler.progress.StatusLine`): redrawn in place on
    a terminal, a plain time-stamped line elsewhere.  None with ``--quiet``."""
    if getattr(args, "quiet", False):
        return None
    from webcrawl.crawler.progress import StatusLine, format_clock

    status = StatusLine(interval=1e-9, log_interval=1e-9)
    started = time.monotonic()

    def show(line: str) -> None:
        status.show(f"{format_clock(time.monotonic() - started)}  {line}")

    show.status = status  # type: ignore[attr-defined]
    return show


def end_stages(show: Callable[[str], None] | None) -> None:
    """Erase a :func:`stage_display` line before the command's own output."""
    if show is not None:
        show.status.clear()  # type: ignore[attr-defined]
