"""--resolve rules, port remapping, and TLS verification (own CA, --ca-file, --insecure)."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
from pathlib import Path

import pytest
from aiohttp import web
from webcrawl.crawler.fetcher import Fetcher
from webcrawl.crawler.resolve import HostGlobResolver, parse_rule, parse_rules
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import ConfigError, NetworkError


@pytest.mark.parametrize(("rule", "host", "port", "expected"), [
    ("*.test=127.0.0.1", "site3.test", 80, ("127.0.0.1", 80)),
    ("*.test=127.0.0.1", "example.com", 80, None),
    ("*=127.0.0.2", "example.com", 443, ("127.0.0.2", 443)),
    ("www.example.com:443=127.0.0.1:8443", "www.example.com", 443, ("127.0.0.1", 8443)),
    ("www.example.com:443=127.0.0.1:8443", "www.example.com", 80, None),
    ("*.EXAMPLE.com=::1", "a.example.com", 80, ("::1", 80)),
    ("[::1]:80=[::1]:8080", "::1", 80, ("::1", 8080)),
    ("a.test:80=127.0.0.2:81, [::1],127.0.0.3", "a.test", 80,
     ("127.0.0.2", 81, "::1", 80, "127.0.0.3", 80)),
], ids=["glob", "no-match", "star", "port-remap", "other-port", "ipv6-case", "v6-remap",
        "several-addresses"])
async def test_rules_resolve(rule: str, host: str, port: int,
                             expected: tuple[str | int, ...] | None) -> None:
    resolver = HostGlobResolver(parse_rules([rule]))
    parsed = parse_rule(rule)
    if expected is None:
        assert not parsed.matches(host, port)
        assert not resolver.ruled(host, port)
        return
    results = await resolver.resolve(host, port)
    assert tuple(x for r in results for x in (r["host"], r["port"])) == expected
    assert {r["hostname"] for r in results} == {host}
    assert resolver.ruled(host, port)


@pytest.mark.parametrize("rule", ["*.test", "=1.2.3.4", "*.test=", "*.test=localhost",
                                  "*.test=1.2.3.4:0", "*.test=1.2.3.4:x", "*.test=1.2.3.4:80",
                                  "a:b:c=1.2.3.4", "*.test=1.2.3.4,", "*.test=1.2.3.4,localhost",
                                  "*.test=1.2.3.4,1.2.3.5:80"])
def test_bad_rules(rule: str) -> None:
    with pytest.raises(ConfigError):
        parse_rule(rule)
    with pytest.raises(ConfigError):
        CrawlSettings(resolve=(rule,))


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl CLI not available")
    d = tmp_path_factory.mktemp("tls")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=d)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=webcrawl test CA")
    (d / "ext.cnf").write_text("subjectAltName=DNS:secure.test\n")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key", "-out", "srv.csr",
        "-subj", "/CN=secure.test")
    run("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "srv.pem", "-days", "2", "-extfile", "ext.cnf")
    return {"ca": d / "ca.pem", "cert": d / "srv.pem", "key": d / "srv.key"}


async def test_tls_own_ca_and_insecure(tls_files: dict[str, Path]) -> None:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(tls_files["cert"], tls_files["key"])
    async def hello(_: web.Request) -> web.Response:
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", hello)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    site = web.TCPSite(runner, "127.0.0.1", port, ssl_context=ctx)
    await site.start()
    url = f"https://secure.test:{port}/"
    rules = ("secure.test=127.0.0.1",)
    try:
        async with Fetcher(CrawlSettings(resolve=rules, tls_ca_file=str(tls_files["ca"]))) as f:
            assert (await f.fetch(url)).status == 200
        async with Fetcher(CrawlSettings(resolve=rules)) as f:  # verified against system CAs
            with pytest.raises(NetworkError):
                await f.fetch(url)
        async with Fetcher(CrawlSettings(resolve=rules, tls_insecure=True)) as f:
            assert (await f.fetch(url)).status == 200
        # port remapping: the URL says 443, the rule sends it to our port
        remap = (f"secure.test:443=127.0.0.1:{port}",)
        async with Fetcher(CrawlSettings(resolve=remap, tls_ca_file=str(tls_files["ca"]))) as f:
            assert (await f.fetch("https://secure.test/")).status == 200
    finally:
        await runner.cleanup()
