"""An aiohttp server in a thread, over TLS from its own trustme CA (and optionally plain
http on a second port), for crawls through the command line (a test helper)."""

from __future__ import annotations

import asyncio
import ssl
import threading
from pathlib import Path
from typing import Any

import trustme
from aiohttp import web


class ThreadedTLSWeb:
    """Serves :meth:`handle` for the certificate ``names`` on a loopback TLS port
    (``port``) and, with ``plain``, on a plain http port (``http_port``)."""

    def __init__(self, tmp: Path, names: tuple[str, ...], *, plain: bool = False) -> None:
        self.ca = trustme.CA()
        self.ca_file = tmp / "ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.names = names
        self.plain = plain
        self.port = self.http_port = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)

    async def handle(self, request: web.Request) -> web.Response:
        raise NotImplementedError

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(*self.names).configure_cert(ctx)
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self.handle)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        sites = [web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ctx)]
        if self.plain:
            sites.append(web.TCPSite(runner, "127.0.0.1", 0))
        for site in sites:
            self._loop.run_until_complete(site.start())
        ports = [a[1] for a in runner.addresses]
        self.port = ports[0]
        self.http_port = ports[-1] if self.plain else 0
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())
        self._loop.close()

    def __enter__(self) -> Any:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
