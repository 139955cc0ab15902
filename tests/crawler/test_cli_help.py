"""Every command's ``--help``: an Examples section that names the command, help text on
every option, no reStructuredText markup, and one spelling per concept."""

from __future__ import annotations

import argparse
import re

import pytest
from webcrawl.crawler.cli import build_parser, main
from webcrawl.crawler.cli._help import iter_parsers

PARSERS = iter_parsers(build_parser())
IDS = [path or "webcrawl" for path, _ in PARSERS]
# reST roles and literals (``x``, :func:`x`, :mod:`x`) and numpydoc/Sphinx directives.
MARKUP = re.compile(r"``|:[a-z]+:`|^\.\. [a-z]+::", re.MULTILINE)


def _visible(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions
            if a.help != argparse.SUPPRESS and not isinstance(a, argparse._SubParsersAction)]


@pytest.mark.parametrize(("path", "parser"), PARSERS, ids=IDS)
def test_help_has_examples_of_this_command(path: str, parser: argparse.ArgumentParser) -> None:
    text = parser.format_help()
    assert "\nExamples:\n" in text, f"'webcrawl {path} --help' has no Examples section"
    examples = text.split("\nExamples:\n", 1)[1].splitlines()
    assert any(line.strip().startswith(f"webcrawl {path}".strip()) for line in examples)
    # Examples use the current spellings only, never a deprecated alias.
    hidden = [o for a in parser._actions if a.help == argparse.SUPPRESS
              for o in a.option_strings]
    for line in examples:
        assert not any(re.search(re.escape(o) + r"\b", line) for o in hidden), line


@pytest.mark.parametrize(("path", "parser"), PARSERS, ids=IDS)
def test_every_option_has_help_and_no_markup(path: str, parser: argparse.ArgumentParser) -> None:
    for action in _visible(parser):
        name = "/".join(action.option_strings) or action.dest
        assert action.help and action.help.strip(), f"webcrawl {path}: {name} has no help"
        assert not MARKUP.search(action.help), f"webcrawl {path}: {name}: {action.help}"
    assert not MARKUP.search(parser.description or ""), f"webcrawl {path}: description"
    assert not MARKUP.search(parser.format_help())


def test_one_name_per_concept() -> None:
    """--random-seed for randomness, --day-seconds for a day, --out a folder and
    --output/-o a file, in every command."""
    for path, parser in PARSERS:
        for action in _visible(parser):
            names = set(action.option_strings)
            assert "--seconds-per-day" not in names, (path, names)
            # --seed, where it remains, names start pages (import edges), never randomness.
            assert not ("--seed" in names and "random" in (action.help or "")), path
            if "--out" in names:
                assert action.metavar == "DIR", f"webcrawl {path}: --out must be a folder"
            if "--output" in names:
                assert "-o" in names and action.metavar == "FILE", path


def test_old_spellings_still_work_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(["analyze", "sample", "--db", "x.db", "--method", "directed",
                              "--size", "5", "--seed", "7"])
    assert args.seed == 7
    args = parser.parse_args(["report", "--db", "x.db", "--out", "r.html",
                              "--seconds-per-day", "2"])
    assert (str(args.out), args.seconds_per_day) == ("r.html", 2.0)
    err = capsys.readouterr().err
    assert "--seed is deprecated; use --random-seed" in err
    assert "--out is deprecated; use --output" in err
    assert "--seconds-per-day is deprecated; use --day-seconds" in err
    # The new spellings parse to the same fields, and the old ones are not in --help.
    args = parser.parse_args(["report", "--db", "x.db", "-o", "r.html", "--day-seconds", "2"])
    assert (str(args.out), args.seconds_per_day) == ("r.html", 2.0)
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert "--seconds-per-day" not in capsys.readouterr().out
