"""Sandboxed name resolution: ``--resolve PATTERN[:PORT]=ADDR[:PORT][,ADDR[:PORT]...]`` rules.

A rule maps every host matching a glob (``*.test``, ``*``, ``www.example.com``) to
fixed addresses, so real hostnames can be crawled from a local mirror without any
traffic leaving the machine.  ``PATTERN:PORT=ADDR:PORT`` also remaps the port (only
requests to that port match).  Several comma-separated addresses are answered in their
order, as a name with several DNS records is (curl's ``--resolve`` takes the same list):
the HTTP client races them (happy eyeballs, :mod:`webcrawl.crawler.http1`).  The first
matching rule wins; hosts matching no rule
go to the system resolver (``getaddrinfo`` in the loop's thread pool, the answers
cached :data:`FALLBACK_TTL` seconds; address literals are answered without a lookup).
The ``Host`` header and TLS server name stay the URL's own.

No aiohttp here: crawl workers import this module and never pay for aiohttp.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
import ssl
import time
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TypedDict

from webcrawl.storage.errors import ConfigError

__all__ = ["HostGlobResolver", "ResolveResult", "ResolveRule", "make_ssl_context", "parse_rule",
           "parse_rules"]

#: seconds a system resolver answer is reused (aiohttp's connector cached 300 s too)
FALLBACK_TTL = 300.0
#: system resolver answers kept at most (a crawl meets millions of hosts)
FALLBACK_CACHE_SIZE = 10_000


@dataclass(frozen=True, slots=True)
class ResolveRule:
    """One ``PATTERN[:PORT]=ADDR[:PORT][,ADDR[:PORT]...]`` rule."""

    pattern: str
    port: int | None
    #: (address, port or None to keep the requested one), in the order answered
    targets: tuple[tuple[str, int | None], ...]

    def matches(self, host: str, port: int) -> bool:
        return (self.port is None or self.port == port) and fnmatchcase(host.lower(), self.pattern)


def _split_port(text: str, rule: str) -> tuple[str, int | None]:
    if text.startswith("["):  # [v6]:port
        end = text.find("]")
        if end < 0:
            raise ConfigError(f"bad --resolve rule {rule!r}: unclosed '['")
        rest = text[end + 1:]
        name = text[1:end]
        if not rest:
            return name, None
        if not rest.startswith(":"):
            raise ConfigError(f"bad --resolve rule {rule!r}")
        text_port = rest[1:]
    elif text.count(":") == 1:
        name, text_port = text.split(":")
    else:
        return text, None
    if not text_port.isdigit() or not 0 < int(text_port) < 65536:
        raise ConfigError(f"bad --resolve rule {rule!r}: invalid port {text_port!r}")
    return name, int(text_port)


#: curl's ``--resolve HOST:PORT:ADDR[,ADDR...]`` (IPv6 addresses bracketed or not; every
#: address is used, in order, as curl does).
_CURL_FORM = re.compile(r"([^:=\[\]]+):(\d+):([^=]+)")


def parse_rule(rule: str) -> ResolveRule:
    """Parse ``PATTERN[:PORT]=ADDR[:PORT][,ADDR[:PORT]...]``, or curl's
    ``HOST:PORT:ADDR[,ADDR...]`` (the same as ``HOST:PORT=ADDR``: requests to HOST on PORT
    go to ADDR, same port); ConfigError on bad syntax or address.

    >>> parse_rule("docs.example.org:80:127.0.0.1")
    ResolveRule(pattern='docs.example.org', port=80, targets=(('127.0.0.1', None),))
    """
    curl = _CURL_FORM.fullmatch(rule.strip())
    if curl is not None:
        host, port_text, addrs = curl.groups()
        bracketed = [f"[{a}]" if ":" in a and not a.startswith("[") else a
                     for a in (x.strip() for x in addrs.split(","))]
        return parse_rule(f"{host}:{port_text}={','.join(bracketed)}")
    left, sep, right = rule.partition("=")
    if not sep or not left.strip() or not right.strip():
        raise ConfigError(f"bad --resolve rule {rule!r}: expected PATTERN[:PORT]=ADDR[:PORT] "
                          "or HOST:PORT:ADDR")
    left = left.strip().lower()
    if left.count(":") > 1 and not left.startswith("["):
        raise ConfigError(f"bad --resolve rule {rule!r}: write IPv6 patterns in brackets")
    pattern, port = _split_port(left, rule)
    targets = []
    for item in right.split(","):
        addr, to_port = _split_port(item.strip(), rule)
        try:
            ipaddress.ip_address(addr)
        except ValueError:
            raise ConfigError(
                f"bad --resolve rule {rule!r}: {addr!r} is not an IP address") from None
        if to_port is not None and port is None:
            raise ConfigError(
                f"bad --resolve rule {rule!r}: remapping a port needs PATTERN:PORT")
        targets.append((addr, to_port))
    return ResolveRule(pattern, port, tuple(targets))


def parse_rules(rules: tuple[str, ...] | list[str]) -> tuple[ResolveRule, ...]:
    return tuple(parse_rule(r) for r in rules)


class ResolveResult(TypedDict):
    """One address to connect to (the fields of aiohttp's resolver results)."""

    hostname: str      # the name asked for
    host: str          # a numeric address
    port: int
    family: int
    proto: int
    flags: int


class HostGlobResolver:
    """Applies :class:`ResolveRule` s, else the system resolver (answers cached briefly)."""

    def __init__(self, rules: tuple[ResolveRule, ...]) -> None:
        self._rules = rules
        #: (host, port, family) -> (expiry on the monotonic clock, answer); insertion
        #: order is expiry order, as every entry lives FALLBACK_TTL seconds
        self._cache: dict[tuple[str, int, int], tuple[float, list[ResolveResult]]] = {}

    async def resolve(self, host: str, port: int = 0,
                      family: int = socket.AF_UNSPEC) -> list[ResolveResult]:
        for rule in self._rules:
            if rule.matches(host, port):
                return [ResolveResult(hostname=host, host=addr,
                                      port=to_port if to_port is not None else port,
                                      family=socket.AF_INET6 if ":" in addr else socket.AF_INET,
                                      proto=0, flags=socket.AI_NUMERICHOST)
                        for addr, to_port in rule.targets]
        return await self._system(host, port, family)

    def ruled(self, host: str, port: int) -> bool:
        """Whether a rule answers for ``host:port`` (such hosts are never proxied)."""
        return any(rule.matches(host, port) for rule in self._rules)

    async def _system(self, host: str, port: int, family: int) -> list[ResolveResult]:
        key = (host, port, family)
        now = time.monotonic()
        hit = self._cache.get(key)
        if hit is not None and hit[0] > now:  # first: a name is asked for every request
            return hit[1]
        literal = _literal(host, port)
        if literal is not None:  # an address needs no lookup (nor a thread hop)
            return literal
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port, family=family, type=socket.SOCK_STREAM, flags=socket.AI_ADDRCONFIG)
        answer = [ResolveResult(hostname=host, host=str(addr[0]), port=int(addr[1]),
                                family=fam, proto=proto, flags=socket.AI_NUMERICHOST)
                  for fam, _type, proto, _canon, addr in infos]
        self._remember(key, now, answer)
        return answer

    def _remember(self, key: tuple[str, int, int], now: float,
                  answer: list[ResolveResult]) -> None:
        cache = self._cache
        cache.pop(key, None)
        cache[key] = (now + FALLBACK_TTL, answer)
        while cache:  # drop the expired (the oldest first) and keep the size bounded
            oldest = next(iter(cache))
            if cache[oldest][0] > now and len(cache) <= FALLBACK_CACHE_SIZE:
                break
            del cache[oldest]


def _literal(host: str, port: int) -> list[ResolveResult] | None:
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return None
    fam = socket.AF_INET6 if addr.version == 6 else socket.AF_INET
    return [ResolveResult(hostname=host, host=host, port=port, family=fam, proto=0,
                          flags=socket.AI_NUMERICHOST)]


def make_ssl_context(ca_file: str | None, insecure: bool) -> ssl.SSLContext:
    """Verified TLS by default; ``ca_file`` adds trusted CAs; ``insecure`` disables checks.

    Building the verified context loads the system CA store (tens of ms), so the HTTP
    client calls this lazily, at its first https request, unless a setting asks for more.
    """
    if insecure:
        logging.getLogger(__name__).warning(
            "TLS certificate verification is disabled (--insecure)")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    ctx = ssl.create_default_context()
    if ca_file:
        try:
            ctx.load_verify_locations(cafile=ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"cannot load CA file {ca_file!r}: {exc}") from exc
    return ctx
