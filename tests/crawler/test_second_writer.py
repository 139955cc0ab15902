"""One writer per crawl database, with real processes (issue 19).

A first ``webcrawl crawl`` runs (its seed page hangs, so it keeps running); twenty
second writers, alternating ``crawl --resume`` and ``revisit``, must each be refused
with one stderr line naming the first (its pid) and a non-zero exit, without
touching the database.  A reader works meanwhile.  After the first is killed with
SIGKILL its lock is gone: a resume gets in and finishes the crawl.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest
from aiohttp import web as aioweb
from miniweb import html
from webcrawl.storage.lock import lock_path

pytestmark = pytest.mark.timeout(600)  # a hang guard, never a measurement (slow under load)

TRIES = 20


async def _run(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "webcrawl.crawler.cli", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": os.getcwd()})
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _counts(db: Path) -> tuple[int, int, int]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return tuple(conn.execute(  # type: ignore[return-value]
            "SELECT (SELECT count(*) FROM urls), (SELECT count(*) FROM fetches),"
            " (SELECT count(*) FROM meta)").fetchone())


class HangingSite:
    """``/`` trickles a byte every 0.2 s while ``hang`` is set (no read timeout fires)."""

    def __init__(self) -> None:
        self.hang = True
        self.requests: list[str] = []
        self.port = 0
        self._runner: aioweb.AppRunner | None = None

    def url(self, path: str = "/") -> str:
        return f"http://a.test:{self.port}{path}"

    async def _handle(self, request: aioweb.Request) -> aioweb.StreamResponse:
        self.requests.append(request.path)
        if request.path == "/b":
            return aioweb.Response(text=html(), content_type="text/html")
        if request.path != "/":
            return aioweb.Response(status=404)
        if not self.hang:
            return aioweb.Response(text=html("/b"), content_type="text/html")
        resp = aioweb.StreamResponse(headers={"Content-Type": "text/html"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        while self.hang:
            await resp.write(b" ")
            await asyncio.sleep(0.2)
        return resp

    async def __aenter__(self) -> HangingSite:
        app = aioweb.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = aioweb.AppRunner(app, handle_signals=False, access_log=None,
                                        shutdown_timeout=1.0)
        await self._runner.setup()
        site = aioweb.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.hang = False
        assert self._runner is not None
        await self._runner.cleanup()


async def test_second_writers_are_refused_while_the_first_runs(tmp_path: Path) -> None:
    async with HangingSite() as site:
        await _two_writers(site, tmp_path)


async def _two_writers(w: HangingSite, tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    common = ["--db", str(db), "--resolve", "*.test=127.0.0.1", "--min-delay", "0",
              "--delay-factor", "0", "--max-delay", "0", "--quiet"]
    first = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "webcrawl.crawler.cli", "crawl", w.url(), *common,
        "--timeout", "600", stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        sidecar = lock_path(db)
        for _ in range(600):  # the first holds the lock and hangs on its seed page
            if (w.requests[-1:] == ["/"] and sidecar.exists()
                    and f"pid {first.pid}," in sidecar.read_text()):
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the first crawl never took the writer lock and fetched")
        requests_before = list(w.requests)
        for i in range(TRIES):
            if i % 2:
                cmd = ["revisit", "--db", str(db), "--budget", "1", "--duration", "1",
                       "--resolve", "*.test=127.0.0.1", "--quiet"]
            else:
                cmd = ["crawl", "--resume", *common]
            code, out, err = await _run(*cmd)
            assert first.returncode is None, "the first crawl must still be running"
            assert code != 0, (cmd, err)
            lines = err.strip().splitlines()
            assert len(lines) == 1, err
            assert "being written by another process" in lines[0]
            assert f"pid {first.pid}," in lines[0] and "webcrawl crawl" in lines[0]
            assert "Traceback" not in err and out == ""
        # no refused writer contacted the server or recorded a fetch; readers stay free
        assert w.requests == requests_before == ["/robots.txt", "/"]
        assert _counts(db)[1] == 0
        code, out, err = await _run("export", "pages", "--db", str(db))
        assert code == 0, err
        assert out.startswith("url\t") or out.splitlines()[0].startswith("url"), out
    finally:
        if first.returncode is None:
            first.send_signal(signal.SIGKILL)
        await first.wait()
    assert first.returncode == -signal.SIGKILL
    # kill -9 left no stale lock: a resume gets in and finishes the crawl
    w.hang = False
    code, _, err = await _run("crawl", "--resume", *common)
    assert code == 0, err
    with sqlite3.connect(db) as conn:
        outcomes = dict(conn.execute("SELECT url, outcome FROM urls"))
    assert outcomes == {w.url(): "fetched", w.url("/b"): "fetched"}
