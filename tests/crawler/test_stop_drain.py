"""Ctrl-C is a clean stop: requests under way answer and are recorded, so a resume never
fetches again a URL whose answer had reached the crawler (the server's log says so)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

pytestmark = pytest.mark.timeout(240)

HOSTS = 4
PAGES = 60  # per host
ANSWER_SECONDS = 0.05  # every answer takes this long: requests are under way at Ctrl-C


class _Site(BaseHTTPRequestHandler):
    hits: ClassVar[Counter[tuple[str, str]]] = Counter()
    lock: ClassVar[threading.Lock] = threading.Lock()

    def do_GET(self) -> None:
        host = self.headers.get("Host", "").split(":")[0]
        with self.lock:
            self.hits[host, self.path] += 1
        if self.path == "/robots.txt":
            self._send(404, b"")
            return
        time.sleep(ANSWER_SECONDS)
        n = int(self.path.strip("/") or 0)
        port = self.server.server_address[1]
        links = [f"/{k}" for k in (2 * n + 1, 2 * n + 2) if k < PAGES]
        links.append(f"http://h{(int(host.split('.')[0][1:]) + 1) % HOSTS}.test:{port}/{n}")
        body = "".join(f'<a href="{u}">x</a>' for u in links)
        self._send(200, f"<!doctype html><html><body>{body}</body></html>".encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[ThreadingHTTPServer]:
    _Site.hits = Counter()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _pages_hit() -> int:
    with _Site.lock:
        return sum(n for (_, path), n in _Site.hits.items() if path != "/robots.txt")


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_then_resume_fetches_no_answered_url_again(
        site: ThreadingHTTPServer, tmp_path: Path, workers: int) -> None:
    port = site.server_address[1]
    db = tmp_path / "c.db"
    cmd = [sys.executable, "-m", "webcrawl.crawler.cli", "crawl", "--db", str(db), "--quiet",
           "--resolve", "*.test=127.0.0.1", "--allow-domain", "test", "--min-delay", "0.02",
           "--delay-factor", "0", "--workers", str(workers)]
    proc = subprocess.Popen([*cmd, f"http://h0.test:{port}/0"], stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while _pages_hit() < 20 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.splitlines()[-1].startswith("webcrawl: stopped; continue with:"), err
    assert "Traceback" not in err and "Exception" not in err, err
    stopped_at = _pages_hit()
    assert stopped_at < HOSTS * PAGES  # the stop came before the end
    resumed = subprocess.run([*cmd[:6], "--resume", "--quiet"], capture_output=True,
                             text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    with _Site.lock:
        pages = {k: n for k, n in _Site.hits.items() if k[1] != "/robots.txt"}
    assert len(pages) == HOSTS * PAGES
    assert [k for k, n in pages.items() if n > 1] == []
