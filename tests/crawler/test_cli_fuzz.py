"""CLI fuzz test: bad numbers, bad paths and damaged files in every sub-command.

The options are read from the real parser, so a new sub-command or option is covered
without editing this file.  Every numeric option must use a range validator of
``webcrawl.crawler.cli._common`` (which declares its range); hypothesis then feeds each one
values outside that range, non-numbers, nan and infinities.  Every ``--db`` gets a
directory, a device, a missing file, a file in a missing folder, a non-database file,
``/`` and ``''``; every other path option a path under ``/dev/null`` or a missing file.
Then the files users hand over damaged: TOML ``--config`` files that hold dates or are
not UTF-8, edge lists and WARCs cut short or with flipped bytes, a WARC with a
``Content-Length`` too large for any integer type, a binary ``--true-rates`` file; bad
``--bind`` addresses; ``crawl --resume`` on a graph imported with integer ids.  The
invariant: a non-zero exit, exactly one line on stderr, nothing on stdout, never a
traceback (a traceback fails the test by escaping ``main``).  Last, a reader that goes
away (``webcrawl export ... | head``): exit 141 and nothing on stderr.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import io
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from clirun import run_cli as _run
from crawldb import write_crawl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter
from webcrawl.crawler.cli import EXIT_BROKEN_PIPE, build_parser, main

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


BAD_DBS = ["directory", "device", "missing", "missing_folder", "garbage", "root", "empty"]


def _bad_path(kind: str, files: dict[str, Path]) -> str:
    return {"directory": str(files["tmp"]), "device": "/dev/null", "root": "/", "empty": "",
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


# -- damaged files ---------------------------------------------------------------------

def _flip(data: bytes, start: int, count: int) -> bytes:
    return data[:start] + bytes(b ^ 0xFF for b in data[start:start + count]) + \
        data[start + count:]


def _warc(records: int, *, gz: bool) -> bytes:
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gz)
    for i in range(records):
        body = (f"<html><p>{i}</p>" + "word " * 400 + f'<a href="/p{i + 1}">n</a></html>').encode()
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                   protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            f"http://a.test/p{i}", "response", payload=io.BytesIO(body), length=len(body),
            http_headers=headers))
    return out.getvalue()


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Damaged inputs by name: ``config-*`` TOML files, ``edges-*`` edge lists,
    ``warc-*`` WARC files, ``rates-*`` --true-rates files."""
    tmp = tmp_path_factory.mktemp("damaged")
    small = gzip.compress(b"".join(b"%d %d\n" % (i, (i * 7) % 5000) for i in range(5000)))
    big = gzip.compress(b"".join(b"%d %d\n" % (i, (i * 7) % 400000) for i in range(400000)))
    warc = _warc(40, gz=True)
    plain = _warc(40, gz=False)
    cut = plain.index(b"Content-Length: ", plain.index(b"http://a.test/p20"))
    overflow = plain[:cut] + b"Content-Length: 99999999999999999999" + \
        plain[plain.index(b"\r\n", cut):]
    contents = {
        "config-date": b"fetch_contact = 2024-01-01\n",
        "config-time": b"[polite]\nmin_delay = 12:30:00\n",
        "config-date-in-list": b"resolve = [2024-01-01T10:00:00Z]\n",
        "config-latin1": "fetch_contact = 'caf\u00e9'\n".encode("latin-1"),
        "config-binary": bytes(range(256)) * 4,
        "edges-truncated-small.gz": small[: len(small) // 2],
        "edges-truncated-big.gz": big[: len(big) // 2],
        "edges-flipped-big.gz": _flip(big, len(big) // 2, 200),
        "edges-garbage.gz": b"\x1f\x8b\x08\x00" + bytes(range(256)) * 8,
        "warc-flipped.warc.gz": _flip(warc, len(warc) // 2, 200),
        "warc-truncated.warc.gz": warc[: len(warc) // 3],
        "warc-truncated.warc": plain[: len(plain) // 3],
        "warc-content-length-overflow.warc": overflow,
        "warc-garbage.warc": bytes(range(256)) * 8,
        "rates-binary.tsv": bytes(range(256)) * 4,
    }
    out = {}
    for name, data in contents.items():
        (tmp / name).write_bytes(data)
        out[name] = tmp / name
    return out


CONFIG_COMMANDS = [path for path, parser in COMMANDS
                   if any(a.dest == "config" for a in parser._actions)]
CONFIGS = ["config-date", "config-time", "config-date-in-list", "config-latin1",
           "config-binary"]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("path", CONFIG_COMMANDS, ids=[" ".join(p) for p in CONFIG_COMMANDS])
def test_bad_config_files_are_one_line_errors(path: tuple[str, ...], config: str,
                                              files: dict[str, Path],
                                              damaged: dict[str, Path],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert {("crawl",), ("revisit",)} <= set(CONFIG_COMMANDS)  # the walk found them
    parser = dict(COMMANDS)[path]
    action = next(a for a in parser._actions if a.dest == "config")
    argv = _argv(path, parser, action, str(damaged[config]), files)
    if path == ("crawl",):
        argv[argv.index("--db") + 1] = str(files["tmp"] / "nope.db")  # a new crawl's --db
    code, out, err = _run(argv, capsys)
    _assert_one_line_error(argv, code, out, err)
    assert damaged[config].name in err, err
    assert not list(files["tmp"].glob("nope.db*")), "a refused crawl left files behind"


DAMAGED_INPUTS = [
    *[(["import", "edges", name], name) for name in (
        "edges-truncated-small.gz", "edges-truncated-big.gz", "edges-flipped-big.gz",
        "edges-garbage.gz")],
    *[(["import", "warc", name], name) for name in (
        "warc-flipped.warc.gz", "warc-truncated.warc.gz", "warc-truncated.warc",
        "warc-content-length-overflow.warc", "warc-garbage.warc")],
    (["revisit", "--budget", "10/s", "--true-rates", "rates-binary.tsv"], "rates-binary.tsv"),
]


@pytest.mark.parametrize(("argv", "name"), DAMAGED_INPUTS, ids=[n for _, n in DAMAGED_INPUTS])
def test_damaged_inputs_are_one_line_errors(argv: list[str], name: str,
                                            files: dict[str, Path], damaged: dict[str, Path],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(damaged[a]) if a in damaged else a for a in argv]
    db = files["tmp"] / "nope.db" if argv[0] == "import" else files["db"]
    code, out, err = _run([*argv, "--db", str(db)], capsys)
    _assert_one_line_error(argv, code, out, err)
    assert name in err, err
    assert not list(files["tmp"].glob("*nope.db*")), "a failed import left files behind"


def test_resuming_a_graph_imported_with_integer_ids_is_one_line(
        files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    db = files["tmp"] / "graph.db"
    assert main(["import", "edges", str(files["edges"]), "--db", str(db), "--json"]) == 0
    argv = ["crawl", "--resume", "--db", str(db)]
    code, out, err = _run(argv, capsys)
    _assert_one_line_error(argv, code, out, err)
    assert "not URLs" in err


BAD_BINDS = ["x y", "a\x00b", "a" * 64, "..", "-a", "http://127.0.0.1", "127.0.0.1:80",
             "300.1.1.1", "[::1", " 127.0.0.1", "127.0.0.1\n", "\udcff"]


@pytest.mark.parametrize("command", [["fixture", "serve", "--port", "0"],
                                     ["fixture", "audit", "--port", "1"]],
                         ids=["serve", "audit"])
@pytest.mark.parametrize("bind", BAD_BINDS, ids=[repr(b) for b in BAD_BINDS])
def test_bad_bind_addresses_are_one_line_errors(command: list[str], bind: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*command, f"--bind={bind}"]
    code, out, err = _run(argv, capsys)
    _assert_one_line_error(argv, code, out, err)
    assert "--bind" in err


# -- a reader that goes away -----------------------------------------------------------

@pytest.fixture(scope="module")
def big_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    n = 5000  # far more output than a pipe holds
    return write_crawl(tmp_path_factory.mktemp("pipe") / "c.db",
                       [f"http://s.test/p{i}" for i in range(n)],
                       {i: [(i + 1) % n, (i * 7) % n] for i in range(n)})


@pytest.mark.parametrize("what", ["pages", "fetches", "edges"])
@pytest.mark.parametrize("fmt", ["tsv", "jsonl"])
def test_export_into_a_closed_pipe_stops_quietly(what: str, fmt: str, big_crawl: Path) -> None:
    """``webcrawl export ... | head -1``: exit 141 (as a process killed by SIGPIPE) and
    nothing on stderr: no "Exception ignored ... closed database"."""
    # every stored link for edges: far more than a pipe holds, whatever was fetched
    graph = ["--graph", "stored"] if what == "edges" else []
    proc = subprocess.Popen([sys.executable, "-m", "webcrawl.crawler.cli", "export", what,
                             "--db", str(big_crawl), "--format", fmt, *graph],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()
    proc.stdout.close()  # the reader goes away long before the last row
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE
    assert err == ""


def test_a_row_iterator_dropped_after_its_reader_closed_is_silent(
        big_crawl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from webcrawl.storage.reader import CrawlReader

    raised: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", raised.append)
    with CrawlReader(big_crawl) as reader:
        pages, fetches = reader.iter_pages(), reader.iter_fetches()
        assert next(pages)[0] == "http://s.test/p0" and next(fetches)[0] == "http://s.test/p0"
    del pages, fetches
    gc.collect()
    assert raised == []
