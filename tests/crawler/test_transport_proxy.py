"""HTTP proxies: ``--proxy``/``proxy``, ``http_proxy``/``https_proxy``/``no_proxy``.

A small proxy runs on loopback and logs every request it is sent (absolute-form GETs and
CONNECTs); whatever host a request names, it connects to that port of 127.0.0.1, so no
byte leaves the machine.  Names the tests use (``origin.test``) are never looked up:
the system resolver is replaced by one that fails, so a request that should have gone
through the proxy and tried DNS instead fails loudly.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import ssl
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from http1tools import event_loops, run_on
from miniweb import MiniWeb, html, read_db
from rawweb import RawServer
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.fetcher import Fetcher
from webcrawl.crawler.proxy import Proxy, ProxyRoutes, parse_proxy, proxy_routes
from webcrawl.crawler.resolve import HostGlobResolver
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import ConfigError, NetworkError

pytestmark = pytest.mark.timeout(30)


class LoopbackProxy:
    """``async with LoopbackProxy() as p``: an HTTP proxy on ``p.port`` of 127.0.0.1."""

    def __init__(self, credentials: str | None = None) -> None:
        #: the Proxy-Authorization value required (None: none)
        self.required = None if credentials is None else \
            "Basic " + base64.b64encode(credentials.encode()).decode()
        #: (method, target, headers) of every request received
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    async def __aenter__(self) -> LoopbackProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        upstream: dict[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                line, *rest = head.decode("latin-1").split("\r\n")
                method, target, _ = line.split(" ")
                headers = dict(h.split(": ", 1) for h in rest if h)
                self.requests.append((method, target, headers))
                if self.required and headers.get("Proxy-Authorization") != self.required:
                    writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                                 b"Proxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n")
                    await writer.drain()
                    if method == "CONNECT":
                        return
                    continue
                if method == "CONNECT":
                    await self._tunnel(int(target.rsplit(":", 1)[1]), reader, writer)
                    return
                url = urlsplit(target)
                port = url.port or 80
                if port not in upstream:
                    upstream[port] = await asyncio.open_connection("127.0.0.1", port)
                up_reader, up_writer = upstream[port]
                lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items()
                                if k != "Proxy-Authorization")
                path = (url.path or "/") + (f"?{url.query}" if url.query else "")
                up_writer.write(f"{method} {path} HTTP/1.1\r\n{lines}\r\n".encode("latin-1"))
                answer = await up_reader.readuntil(b"\r\n\r\n")
                length = next((int(h.split(b": ", 1)[1]) for h in answer.split(b"\r\n")
                               if h.lower().startswith(b"content-length: ")), 0)
                writer.write(answer + await up_reader.readexactly(length))
                await writer.drain()
        finally:
            for _, up_writer in upstream.values():
                up_writer.transport.abort()
            writer.transport.abort()
            self._tasks.discard(task)

    @staticmethod
    async def _tunnel(port: int, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        finally:
            up_writer.transport.abort()


@pytest.fixture(autouse=True)
def no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names are never looked up here: a request that tries fails with 'no DNS'."""
    system = HostGlobResolver._system

    async def refuse(self: Any, host: str, port: int, family: int) -> Any:
        with contextlib.suppress(ValueError):
            if host == "localhost" or ipaddress.ip_address(host):
                return await system(self, host, port, family)  # /etc/hosts or a literal
        raise OSError(f"no DNS in tests (asked for {host})")

    monkeypatch.setattr(HostGlobResolver, "_system", refuse)
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "NO_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    ca_file = tmp_path_factory.mktemp("tls") / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    return ca, ca_file


@contextlib.asynccontextmanager
async def tls_origin(ca: Any, names: list[str]) -> AsyncIterator[RawServer]:
    """An https origin for ``origin.test``; ``names`` collects the SNI names it is sent."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("origin.test").configure_cert(ctx)
    ctx.sni_callback = lambda _obj, name, _ctx: names.append(name)  # type: ignore[assignment,misc]
    async with RawServer(ssl_context=ctx) as server:
        yield server


def settings(**overrides: Any) -> CrawlSettings:
    return CrawlSettings.polite_off(fetch_total_timeout=10.0, **overrides)


async def test_http_goes_to_the_proxy_in_absolute_form() -> None:
    async with LoopbackProxy() as proxy, RawServer() as origin, \
            Fetcher(settings(proxy=proxy.url)) as f:
        a = await f.fetch(origin.url("/a?q=1", host="origin.test"))
        b = await f.fetch(origin.url("/b", host="origin.test"))
    assert (a.status, a.body, b.status, b.body) == (200, b"/a?q=1", 200, b"/b")
    host = f"origin.test:{origin.port}"
    assert [(m, t) for m, t, _ in proxy.requests] == [
        ("GET", f"http://{host}/a?q=1"), ("GET", f"http://{host}/b")]
    assert proxy.connections == 1  # the connection to the proxy was kept alive
    assert [r.line for r in origin.requests] == ["GET /a?q=1 HTTP/1.1", "GET /b HTTP/1.1"]
    assert {r.header("Host") for r in origin.requests} == {host}
    assert a.request_headers[0] == ("Host", host)


async def test_https_goes_through_a_connect_tunnel(tls: tuple[Any, Path]) -> None:
    ca, ca_file = tls
    names: list[str] = []
    async with LoopbackProxy() as proxy, tls_origin(ca, names) as origin, \
            Fetcher(settings(proxy=proxy.url, tls_ca_file=str(ca_file))) as f:
        url = origin.url("/s", host="origin.test", scheme="https")
        first, second = await f.fetch(url), await f.fetch(url)
    assert (first.status, first.body, second.body) == (200, b"/s", b"/s")
    authority = f"origin.test:{origin.port}"
    assert [(m, t, h.get("Host")) for m, t, h in proxy.requests] == [
        ("CONNECT", authority, authority)]  # one tunnel, kept alive for the second GET
    assert names == ["origin.test"]  # TLS to the origin, by its own name
    assert [r.header("Host") for r in origin.requests] == [authority, authority]


async def _through_the_proxy(ca: Any, ca_file: Path) -> None:
    async with LoopbackProxy() as proxy, RawServer() as plain, tls_origin(ca, []) as secure, \
            Fetcher(settings(proxy=proxy.url, tls_ca_file=str(ca_file))) as f:
        for _ in range(2):
            assert (await f.fetch(plain.url("/p", host="origin.test"))).body == b"/p"
            assert (await f.fetch(secure.url("/s", host="origin.test", scheme="https"))
                    ).body == b"/s"
    assert [m for m, _, _ in proxy.requests] == ["GET", "CONNECT", "GET"]


@pytest.mark.parametrize("new_loop", event_loops())
def test_proxies_under_each_event_loop(new_loop: Callable[[], asyncio.AbstractEventLoop],
                                       tls: tuple[Any, Path]) -> None:
    run_on(new_loop, _through_the_proxy(*tls))


async def test_https_through_the_proxy_still_checks_the_certificate(
        tls: tuple[Any, Path]) -> None:
    ca, _ = tls
    async with LoopbackProxy() as proxy, tls_origin(ca, []) as origin, \
            Fetcher(settings(proxy=proxy.url)) as f:  # the test CA is not trusted
        with pytest.raises(NetworkError, match=r"(?i)certificate"):
            await f.fetch(origin.url("/", host="origin.test", scheme="https"))
    assert origin.requests == []


async def test_proxy_credentials_are_sent_to_the_proxy_only(tls: tuple[Any, Path]) -> None:
    ca, ca_file = tls
    user = "http://crawler:p%40ss@127.0.0.1:{port}"
    async with LoopbackProxy("crawler:p@ss") as proxy, RawServer() as plain, \
            tls_origin(ca, []) as secure, \
            Fetcher(settings(proxy=user.format(port=proxy.port), tls_ca_file=str(ca_file))) as f:
        a = await f.fetch(plain.url("/", host="origin.test"))
        b = await f.fetch(secure.url("/", host="origin.test", scheme="https"))
    assert (a.status, b.status) == (200, 200)
    assert [h["Proxy-Authorization"] for _, _, h in proxy.requests] == [proxy.required] * 2
    for origin in (plain, secure):
        assert origin.requests[0].header("Proxy-Authorization") is None
    assert all(k != "Proxy-Authorization" for k, _ in a.request_headers + b.request_headers)


async def test_a_refusing_proxy(tls: tuple[Any, Path]) -> None:
    ca, ca_file = tls
    async with LoopbackProxy("crawler:secret") as proxy, RawServer() as plain, \
            tls_origin(ca, []) as secure, \
            Fetcher(settings(proxy=proxy.url, tls_ca_file=str(ca_file))) as f:
        # http: the proxy's answer is the answer; https: no tunnel, a network error
        assert (await f.fetch(plain.url("/", host="origin.test"))).status == 407
        with pytest.raises(NetworkError, match="answered 407 Proxy Authentication Required"):
            await f.fetch(secure.url("/", host="origin.test", scheme="https"))
    assert plain.requests == [] and secure.requests == []


@pytest.mark.parametrize("variables", [
    {"http_proxy": "{proxy}", "https_proxy": "{proxy}"},
    {"HTTP_PROXY": "{proxy}", "HTTPS_PROXY": "{proxy}"},
    {"http_proxy": "{proxy}", "HTTP_PROXY": "127.0.0.1:9", "https_proxy": "{proxy}"},
], ids=["lower", "upper", "lower-wins"])
async def test_proxies_from_the_environment(variables: dict[str, str], tls: tuple[Any, Path],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ca, ca_file = tls
    async with LoopbackProxy() as proxy, RawServer() as plain, tls_origin(ca, []) as secure:
        for name, value in variables.items():
            monkeypatch.setenv(name, value.format(proxy=proxy.url))
        async with Fetcher(settings(tls_ca_file=str(ca_file))) as f:
            assert (await f.fetch(plain.url("/", host="origin.test"))).status == 200
            assert (await f.fetch(secure.url("/", host="origin.test", scheme="https"))
                    ).status == 200
    assert [m for m, _, _ in proxy.requests] == ["GET", "CONNECT"]


async def test_no_proxy_and_an_empty_proxy_setting_go_direct(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async with LoopbackProxy() as proxy, RawServer() as origin:
        monkeypatch.setenv("http_proxy", proxy.url)
        for overrides, env in (({"proxy": ""}, ""), ({}, "other.test, .origin.test")):
            monkeypatch.setenv("no_proxy", env)
            async with Fetcher(settings(**overrides)) as f:
                # direct means a DNS lookup of origin.test, refused here
                with pytest.raises(NetworkError, match="no DNS in tests"):
                    await f.fetch(origin.url("/", host="origin.test"))
    assert proxy.requests == []


async def test_resolve_rules_and_loopback_are_never_proxied() -> None:
    async with LoopbackProxy() as proxy, RawServer() as origin, \
            Fetcher(settings(proxy=proxy.url, resolve=("*.test=127.0.0.1",))) as f:
        assert (await f.fetch(origin.url("/ruled", host="origin.test"))).status == 200
        assert (await f.fetch(origin.url("/literal"))).status == 200
        assert (await f.fetch(origin.url("/name", host="localhost"))).status == 200
    assert proxy.requests == []
    assert [r.path for r in origin.requests] == ["/ruled", "/literal", "/name"]


async def test_a_crawl_through_the_proxy_keys_politeness_on_the_origin(
        mini_web: MiniWeb, tmp_path: Path) -> None:
    mini_web.add("a.test", "/", html("/a1", "http://b.test:{port}/"))
    mini_web.add("a.test", "/a1", html())
    mini_web.add("b.test", "/", html("/b1"))
    mini_web.add("b.test", "/b1", html())
    page = mini_web.pages[("a.test", "/")]
    page.body = str(page.body).replace("{port}", str(mini_web.port))
    db = tmp_path / "c.db"
    async with LoopbackProxy() as proxy:
        settings = mini_web.settings(resolve=(), proxy=proxy.url, scope_hosts=("*.test",))
        await Crawler(db, [mini_web.url("a.test")], settings).run()
    data = read_db(db)
    assert set(data["outcomes"].values()) == {"fetched"} and len(data["outcomes"]) == 4
    for host in ("a.test", "b.test"):
        seen = [urlsplit(t).path for _, t, _ in proxy.requests
                if urlsplit(t).hostname == host]
        assert seen[0] == "/robots.txt" and len(seen) == 3  # robots.txt first, via the proxy
        assert mini_web.max_in_flight[host] == 1
    assert sorted(name for name, _ in data["hosts"]) == [  # the origin hosts, not the proxy
        f"a.test:{mini_web.port}", f"b.test:{mini_web.port}"]


@pytest.mark.parametrize(("no_proxy", "host", "port", "direct"), [
    ("", "example.com", 80, False),
    ("*", "example.com", 80, True),
    ("example.com", "example.com", 80, True),
    ("example.com", "www.example.com", 80, True),
    ("example.com", "badexample.com", 80, False),
    (".example.com", "example.com", 80, True),
    ("*.example.com", "a.b.example.com", 80, True),
    ("EXAMPLE.com", "example.COM", 80, True),
    ("a.test, b.test", "b.test", 80, True),
    ("a.test b.test", "b.test", 80, True),
    ("example.com:8080", "example.com", 8080, True),
    ("example.com:8080", "example.com", 80, False),
    ("10.0.0.0/8", "10.2.3.4", 80, True),
    ("10.0.0.0/8", "11.2.3.4", 80, False),
    ("10.0.0.0/8", "ten.example", 80, False),
    ("192.168.1.1", "192.168.1.1", 80, True),
    ("[2001:db8::1]", "2001:db8::1", 80, True),
    ("[2001:db8::1]:8080", "2001:db8::1", 80, False),
    ("2001:db8::/32", "2001:db8::7", 80, True),
    ("", "localhost", 80, True),
    ("", "127.0.0.2", 80, True),
    ("", "::1", 80, True),
], ids=lambda v: str(v).replace(" ", "_") or "empty")
def test_no_proxy_entries(no_proxy: str, host: str, port: int, direct: bool) -> None:
    proxy = Proxy("proxy.example", 3128)
    routes = ProxyRoutes(proxy, proxy, no_proxy)
    assert (routes.for_origin("http", host, port) is None) is direct


def test_proxy_routes_from_settings_and_environment() -> None:
    env = {"http_proxy": "h.example:1", "HTTPS_PROXY": "http://s.example:2",
           "no_proxy": "x.test"}
    routes = proxy_routes(None, env)
    assert routes is not None
    assert (routes.http, routes.https) == (Proxy("h.example", 1), Proxy("s.example", 2))
    assert routes.for_origin("https", "x.test", 443) is None
    explicit = proxy_routes("p.example:3", env)  # the setting wins, no_proxy still applies
    assert explicit is not None and explicit.http == explicit.https == Proxy("p.example", 3)
    assert explicit.for_origin("http", "x.test", 80) is None
    assert proxy_routes("", env) is None
    assert proxy_routes(None, {}) is None
    # CGI: HTTP_PROXY is the client's Proxy header there ("httpoxy"), never a proxy
    assert proxy_routes(None, {"HTTP_PROXY": "evil:1", "REQUEST_METHOD": "GET"}) is None


@pytest.mark.parametrize(("text", "expected"), [
    ("proxy.example:3128", Proxy("proxy.example", 3128)),
    ("http://proxy.example", Proxy("proxy.example", 80)),
    ("HTTP://[::1]:8080/", Proxy("::1", 8080)),
    ("http://u%3Ax:p%40ss@p.example:1", Proxy("p.example", 1, "Basic " + base64.b64encode(
        b"u:x:p@ss").decode())),
])
def test_parse_proxy(text: str, expected: Proxy) -> None:
    assert parse_proxy(text) == expected


@pytest.mark.parametrize("text", ["socks5://p.example:1080", "https://p.example",
                                  "http://", "http://p.example:99999", "http://p.example/x",
                                  "http://p.example:x"])
def test_bad_proxies(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="--proxy"):
        parse_proxy(text)
    with pytest.raises(ConfigError, match="bad proxy"):
        CrawlSettings(proxy=text)
    with pytest.raises(ConfigError, match="https_proxy"):
        proxy_routes(None, {"https_proxy": text})


def test_bad_proxy_on_the_command_line(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "c.db"
    code = main(["crawl", "http://a.test/", "--db", str(db), "--proxy", "socks5://p:1080"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and "only http:// proxies" in err, err
    assert not db.exists()
