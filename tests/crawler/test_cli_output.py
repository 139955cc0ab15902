"""What every command shares about its output: ``-o -`` is standard output, ``-q``,
``-v``, ``--log-level`` and ``--log-file`` on every command."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import pytest
from crawldb import write_crawl
from webcrawl.crawler.cli import build_parser, main
from webcrawl.crawler.cli._help import iter_parsers

URLS = [f"http://a.test/{name}" for name in ("", "b", "c", "d")]
LINKS = {0: [1, 2], 1: [2, 3], 2: [0], 3: [0, 1]}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return write_crawl(tmp_path / "crawl.db", URLS, LINKS)


def test_export_dash_o_dash_is_standard_output(db: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["export", "edges", "--db", str(db), "--format", "edgelist", "-o", "-"]) == 0
    out = capsys.readouterr().out
    edges = {tuple(line.split()) for line in out.splitlines()}
    assert edges == {(URLS[s], URLS[d]) for s, dsts in LINKS.items() for d in dsts}
    assert not (tmp_path / "-").exists()


def test_report_dash_o_dash_is_standard_output(db: Path, tmp_path: Path,
                                               capfdbinary: pytest.CaptureFixture[bytes],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--db", str(db), "-o", "-"]) == 0
    captured = capfdbinary.readouterr()
    assert captured.out.startswith(b"<!DOCTYPE html>") and captured.out.rstrip().endswith(
        b"</html>")
    assert b"wrote standard output" in captured.err  # the one line that is not the report
    assert not (tmp_path / "-").exists()


def test_report_refuses_json_and_dash_o_dash(db: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--db", str(db), "-o", "-", "--json"]) == 1
    assert capsys.readouterr().err == \
        "webcrawl: error: --json and -o - both want standard output\n"


def test_every_command_takes_the_output_options() -> None:
    parser = build_parser()
    leaves = [(path, sub) for path, sub in iter_parsers(parser)
              if not any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)]
    assert len(leaves) >= 20
    for path, sub in leaves:
        flags = {s for a in sub._actions for s in a.option_strings}
        assert {"-v", "--verbose", "-q", "--quiet", "--log-level", "--log-file"} <= flags, path


@pytest.mark.parametrize(("options", "on_stderr"), [
    ([], ["warning"]), (["-v"], ["info", "warning"]), (["-vv"], ["debug", "info", "warning"]),
    (["-q"], ["warning"]), (["--log-level", "error"], []),
    (["--log-level", "debug"], ["debug", "info", "warning"])],
    ids=["default", "v", "vv", "q", "log-level-error", "log-level-debug"])
def test_log_levels_and_log_file(options: list[str], on_stderr: list[str], db: Path,
                                 tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A command's log records reach stderr at the level the options say, and the log
    file at --log-level (default info), time-stamped; nothing is left configured."""
    import webcrawl.crawler.cli.export as export

    def logging_export(args: object) -> int:
        log = logging.getLogger("webcrawl.crawler.cli.export")
        for level in ("debug", "info", "warning"):
            getattr(log, level)("a %s record", level)
        return 0

    monkeypatch.setattr(export, "run", logging_export)
    log_file = tmp_path / "run.log"
    argv = ["export", "edges", "--db", str(db), *options, "--log-file", str(log_file)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [f"webcrawl: {level}: a {level} record" for level in on_stderr]
    in_file = [line.split()[2:] for line in log_file.read_text().splitlines()]
    # The file gets --log-level, else info and above.
    expected = (["debug", "info", "warning"] if "debug" in options else [] if "error" in options
                else ["info", "warning"])
    assert in_file == [[level.upper(), "webcrawl.crawler.cli.export:", "a", level, "record"]
                       for level in expected]
    assert not logging.getLogger("webcrawl").handlers
