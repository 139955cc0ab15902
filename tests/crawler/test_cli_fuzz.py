"""CLI fuzz test: bad numbers and bad paths in every sub-command (issue 19).

The options are read from the real parser, so a new sub-command or option is covered
without editing this file.  Every numeric option must use a range validator of
``webcrawl.crawler.cli._common`` (which declares its range); hypothesis then feeds each one
values outside that range, non-numbers, nan and infinities.  Every ``--db`` gets a
directory, a device, a missing file, a file in a missing folder and a non-database
file; every other path option a path under ``/dev/null`` or a missing file.  The
invariant: a non-zero exit, exactly one line on stderr, nothing on stdout, never a
traceback (a traceback fails the test by escaping ``main``).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crawldb import write_crawl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webcrawl.crawler.cli import build_parser, main

pytestmark = pytest.mark.timeout(120)


def _walk(parser: argparse.ArgumentParser,
          prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*prefix, name))
                yield (*prefix, name), sub


def _commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    leaves = []
    for path, parser in _walk(build_parser(), ()):
        if not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            leaves.append((path, parser))
    return leaves


COMMANDS = _commands()
NUMERIC = [(path, a) for path, parser in COMMANDS for a in parser._actions
           if a.option_strings and getattr(a.type, "kind", None) in ("int", "float")
           and a.help != argparse.SUPPRESS]
PATHS = [(path, a) for path, parser in COMMANDS for a in parser._actions
         if a.type is Path and a.help != argparse.SUPPRESS]


def test_every_numeric_option_declares_its_range() -> None:
    raw = [(" ".join(path), a.option_strings) for path, parser in COMMANDS
           for a in parser._actions if a.type in (int, float)]
    assert raw == [], "numeric options without a range validator"
    assert len(NUMERIC) >= 60 and len(PATHS) >= 20  # the walk really found them


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("fuzz")
    db = write_crawl(tmp / "c.db", [f"http://a.test/{i}" for i in range(4)],
                     {0: [1, 2], 1: [3], 2: [0]})
    edges = tmp / "edges.txt"
    edges.write_text("0 1\n1 2\n")
    garbage = tmp / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 10)
    return {"tmp": tmp, "db": db, "edges": edges, "garbage": garbage}


def _filler(action: argparse.Action, files: dict[str, Path]) -> list[str]:
    """A plausible value for a required option or positional we are not fuzzing."""
    tmp = files["tmp"]
    by_dest: dict[str, list[str]] = {
        "db": [str(files["db"])], "seeds": ["http://a.test/"], "what": ["pages"],
        "file": [str(files["edges"])], "files": [str(files["edges"])],
        "budget": ["1"], "size": ["3"], "port": ["8400"], "out": [str(tmp / "out")],
    }
    if action.dest in by_dest:
        return by_dest[action.dest]
    if action.choices:
        return [str(next(iter(action.choices)))]
    return ["1"]


def _argv(path: tuple[str, ...], parser: argparse.ArgumentParser, fuzzed: argparse.Action,
          value: str, files: dict[str, Path]) -> list[str]:
    argv = list(path)
    for action in parser._actions:
        if action is fuzzed or not (action.required or not action.option_strings):
            continue
        if isinstance(action, argparse._HelpAction) or action.dest == "help":
            continue
        if action.option_strings:
            argv += [action.option_strings[0], *_filler(action, files)]
        else:
            argv += _filler(action, files)
    if fuzzed.option_strings:
        return [*argv, f"{fuzzed.option_strings[-1]}={value}"]
    return [*argv, value]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code: Any = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return int(code or 0), out, err


def _assert_one_line_error(argv: list[str], code: int, out: str, err: str) -> None:
    assert code != 0, (argv, out, err)
    assert "Traceback" not in err, (argv, err)
    assert len(err.strip().splitlines()) == 1 and err.endswith("\n"), (argv, err)
    assert out == "", (argv, out)


def _bad_values(kind: str, low: float, high: float, low_open: bool,
                high_open: bool) -> st.SearchStrategy[str]:
    junk = st.sampled_from(["", "x", "1e", "--", "0x10", "one", "nan", "inf", "-inf",
                            "1e999", "-1e999", "1 2"])
    if kind == "int":
        below = st.integers(max_value=int(low) - 1)
        above = st.integers(min_value=int(high) + 1)
        frac = st.floats(allow_nan=False, allow_infinity=False).filter(
            lambda v: not float(v).is_integer()).map(repr)
        return st.one_of(below.map(str), above.map(str), frac, junk)
    below_f = st.floats(max_value=low, allow_nan=False, allow_infinity=False,
                        exclude_max=not low_open)
    above_f = st.floats(min_value=high, allow_nan=False, allow_infinity=False,
                        exclude_min=not high_open)
    return st.one_of(below_f.filter(math.isfinite).map(repr), above_f.map(repr), junk)


@pytest.mark.parametrize(("path", "action"), NUMERIC,
                         ids=[" ".join(p) + " " + a.option_strings[-1] for p, a in NUMERIC])
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_bad_numbers_are_one_line_errors(path: tuple[str, ...], action: argparse.Action,
                                         data: st.DataObject, files: dict[str, Path],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    t = action.type
    value = data.draw(_bad_values(t.kind, t.low, t.high,  # type: ignore[union-attr]
                                  getattr(t, "low_open", False), getattr(t, "high_open", False)))
    parser = dict(COMMANDS)[path]
    argv = _argv(path, parser, action, value, files)
    code, out, err = _run(argv, capsys)
    _assert_one_line_error(argv, code, out, err)
    assert action.option_strings[0] in err or action.option_strings[-1] in err, err


BAD_DBS = ["directory", "device", "missing", "missing_folder", "garbage"]


def _bad_path(kind: str, files: dict[str, Path]) -> str:
    return {"directory": str(files["tmp"]), "device": "/dev/null",
            "missing": str(files["tmp"] / "nope.db"),
            "missing_folder": str(files["tmp"] / "no" / "such" / "c.db"),
            "garbage": str(files["garbage"]), "under_device": "/dev/null/x/out"}[kind]


DB_CASES = [(p, a, k) for p, a in PATHS if a.dest == "db" for k in BAD_DBS]


@pytest.mark.parametrize(("path", "action", "kind"), DB_CASES,
                         ids=[" ".join(p) + " " + k for p, _, k in DB_CASES])
def test_bad_databases_are_one_line_errors(path: tuple[str, ...], action: argparse.Action,
                                           kind: str, files: dict[str, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    if path == ("crawl",) and kind == "missing":
        pytest.skip("a missing --db is where a new crawl goes")
    if path[:1] == ("import",) and kind in ("missing",):
        pytest.skip("a missing --db is where an import goes")
    parser = dict(COMMANDS)[path]
    argv = _argv(path, parser, action, _bad_path(kind, files), files)
    code, out, err = _run(argv, capsys)
    _assert_one_line_error(argv, code, out, err)
    assert not list(files["tmp"].glob("nope.db*")), "a refused --db left files behind"


OTHER_PATHS = [(p, a) for p, a in PATHS if a.dest != "db"]


@pytest.mark.parametrize(("path", "action"), OTHER_PATHS,
                         ids=[" ".join(p) + " " + (a.option_strings or [a.dest])[-1]
                              for p, a in OTHER_PATHS])
def test_bad_other_paths_are_one_line_errors(path: tuple[str, ...], action: argparse.Action,
                                             files: dict[str, Path],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    parser = dict(COMMANDS)[path]
    argv = _argv(path, parser, action, _bad_path("under_device", files), files)
    code, out, err = _run(argv, capsys)
    _assert_one_line_error(argv, code, out, err)
