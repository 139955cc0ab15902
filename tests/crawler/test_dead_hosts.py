"""Dead hosts are named: a host the crawl cannot reach is said at once, with its cause,
at the default verbosity, and the summary line, the exit status, the report and the
page export all say it the same way -- never as a robots.txt exclusion.

All on loopback: a refused port (bound, never listening), a TLS server whose CA the
crawler does not trust, and a name that does not resolve (the system resolver's
answer for an unknown name, given by a stub: a real lookup would depend on the
machine's DNS).
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from miniweb import MiniWeb, html
from tlsweb import ThreadedTLSWeb
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.resolve import HostGlobResolver
from webcrawl.storage.export import export_pages

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound, so nothing else takes it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def _pages(db: Path) -> dict[str, dict[str, object]]:
    out = io.StringIO()
    export_pages(db, out, "jsonl")
    return {row["url"]: row for row in map(json.loads, out.getvalue().splitlines())}


def _crawl(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["crawl", *argv, "--set", "robots_retry_delay=0.05", "--retries", "2"])
    return code, capsys.readouterr().err


def test_a_refused_seed_is_named_at_its_first_refusal(tmp_path: Path, closed_port: int) -> None:
    """A crawl retries an unreachable robots.txt (three attempts, here ten minutes apart):
    the refusal is said at the first attempt, before any retry (then the crawl is
    stopped).  What is asserted is that order, not a time: the process may start slowly."""
    seed = f"http://127.0.0.1:{closed_port}/"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "webcrawl.crawler.cli", "crawl", seed,
                             "--db", str(tmp_path / "c.db"), "--set", "robots_retry_delay=600"],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        started = time.monotonic()
        line = proc.stderr.readline()
        while line and "connection refused" not in line:
            line = proc.stderr.readline()
        said_after = time.monotonic() - started
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(30)
        assert proc.stderr is not None
        proc.stderr.close()
    assert line == (f"webcrawl: warning: robots.txt of 127.0.0.1:{closed_port} unreachable "
                    "(connection refused): its URLs wait; attempt 1 of 3, the next in 600 s\n")
    assert said_after < 600  # said before the first retry, not after them all
    assert code == 130


def test_a_refused_seed_ends_with_status_4_and_says_so_everywhere(
        tmp_path: Path, closed_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    seed, host = f"http://127.0.0.1:{closed_port}/", f"127.0.0.1:{closed_port}"
    db = tmp_path / "c.db"
    code, err = _crawl([seed, "--db", str(db)], capsys)
    assert code == 4
    said = f"robots.txt unreachable on 1 host: {host} (connection refused)"
    lines = err.splitlines()
    assert lines[-1] == ("webcrawl: error: no seed could be fetched (robots_unreachable 1): "
                         + said)
    assert lines[-2].startswith("crawl done: 0 URLs fetched") and lines[-2].endswith(said)
    assert "robots_excluded" not in err
    row = _pages(db)[seed]
    assert (row["outcome"], row["error"]) == ("robots_unreachable", "connection refused")
    # No page fetched: the report is written, and the command says so and exits 1.
    assert main(["report", "--db", str(db), "-o", str(tmp_path / "r.html"), "-q"]) == 1
    assert "no page to report" in capsys.readouterr().err
    report = (tmp_path / "r.html").read_text()
    assert said in report and "disallowed by the host's robots.txt" not in report


async def test_a_refused_robots_txt_of_a_linked_host(mini_web: MiniWeb, tmp_path: Path,
                                                     closed_port: int,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    dead = f"http://dead.test:{closed_port}/"
    mini_web.add("a.test", "/", html(dead))
    stats = await Crawler(tmp_path / "c.db", [mini_web.url("a.test")], mini_web.settings(
        scope_hosts=("*.test",), robots_retry_delay=0.05, robots_max_attempts=2)).run()
    assert stats.outcomes == {"fetched": 1, "robots_unreachable": 1}
    assert stats.unreachable == {f"dead.test:{closed_port}": "connection refused"}
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        f"robots.txt of dead.test:{closed_port} unreachable (connection refused): its URLs "
        "wait; attempt 1 of 2, the next in 0.05 s",
        f"robots.txt of dead.test:{closed_port} unreachable (connection refused) after 2 "
        "attempts: its URLs are not requested (robots_unreachable)"]
    assert _pages(tmp_path / "c.db")[dead]["error"] == "connection refused"


def test_a_name_that_does_not_resolve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    async def unknown_name(self: HostGlobResolver, host: str, port: int,
                           family: int) -> list[object]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(HostGlobResolver, "_system", unknown_name)
    db = tmp_path / "c.db"
    code, err = _crawl(["http://nowhere.example/", "--db", str(db)], capsys)
    assert code == 4
    assert err.splitlines()[-1].endswith(
        "robots.txt unreachable on 1 host: nowhere.example (no address)")
    assert _pages(db)["http://nowhere.example/"]["error"] == "no address"


def test_a_seed_whose_pages_fail_is_named(tmp_path: Path, closed_port: int,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """With robots.txt not obeyed, the seed itself is requested and refused."""
    seed = f"http://127.0.0.1:{closed_port}/"
    code, err = _crawl([seed, "--db", str(tmp_path / "c.db"), "--ignore-robots",
                        "--min-delay", "0.01", "--delay-factor", "0"], capsys)
    assert code == 4
    assert f"webcrawl: warning: seed {seed} could not be fetched: connection refused" in err
    assert err.splitlines()[-1] == ("webcrawl: error: no seed could be fetched "
                                    f"(network_error 1): 1 seed failed: {seed} "
                                    "(connection refused)")
    row = _pages(tmp_path / "c.db")[seed]
    assert (row["outcome"], row["error"]) == ("network_error", "NetworkError: connection refused")


class UntrustedTLS(ThreadedTLSWeb):
    async def handle(self, request: web.Request) -> web.Response:
        return web.Response(text="<a href='/x'>x</a>", content_type="text/html")


def test_a_tls_failure_names_the_certificate_problem(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with UntrustedTLS(tmp_path, ("tls.test",)) as server:  # its CA is not given: untrusted
        seed = f"https://tls.test:{server.port}/"
        code, err = _crawl([seed, "--db", str(tmp_path / "c.db"), "--resolve",
                            "tls.test=127.0.0.1"], capsys)
    assert code == 4
    cause = _pages(tmp_path / "c.db")[seed]["error"]
    assert isinstance(cause, str) and cause.startswith("TLS: ")
    assert f"tls.test:{server.port} ({cause})" in err.splitlines()[-1]
