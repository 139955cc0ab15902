"""Sandboxed name resolution: ``--resolve PATTERN[:PORT]=ADDR[:PORT]`` rules.

A rule maps every host matching a glob (``*.test``, ``*``, ``www.example.com``) to a
fixed address, so real hostnames can be crawled from a local mirror without any
traffic leaving the machine.  ``PATTERN:PORT=ADDR:PORT`` also remaps the port (only
requests to that port match).  The first matching rule wins; hosts matching no rule
go to the system resolver.  The ``Host`` header and TLS server name stay the URL's own.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import ssl
from dataclasses import dataclass
from fnmatch import fnmatchcase

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from storage.errors import ConfigError

__all__ = ["HostGlobResolver", "ResolveRule", "make_ssl_context", "parse_rule", "parse_rules"]


@dataclass(frozen=True, slots=True)
class ResolveRule:
    """One ``PATTERN[:PORT]=ADDR[:PORT]`` rule."""

    pattern: str
    port: int | None
    addr: str
    to_port: int | None

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


def parse_rule(rule: str) -> ResolveRule:
    """Parse ``PATTERN[:PORT]=ADDR[:PORT]``; ConfigError on bad syntax or address."""
    left, sep, right = rule.partition("=")
    if not sep or not left.strip() or not right.strip():
        raise ConfigError(f"bad --resolve rule {rule!r}: expected PATTERN[:PORT]=ADDR[:PORT]")
    left = left.strip().lower()
    if left.count(":") > 1 and not left.startswith("["):
        raise ConfigError(f"bad --resolve rule {rule!r}: write IPv6 patterns in brackets")
    pattern, port = _split_port(left, rule)
    addr, to_port = _split_port(right.strip(), rule)
    try:
        ipaddress.ip_address(addr)
    except ValueError:
        raise ConfigError(f"bad --resolve rule {rule!r}: {addr!r} is not an IP address") from None
    if to_port is not None and port is None:
        raise ConfigError(f"bad --resolve rule {rule!r}: remapping a port needs PATTERN:PORT")
    return ResolveRule(pattern, port, addr, to_port)


def parse_rules(rules: tuple[str, ...] | list[str]) -> tuple[ResolveRule, ...]:
    return tuple(parse_rule(r) for r in rules)


class HostGlobResolver(AbstractResolver):
    """An aiohttp resolver applying :class:`ResolveRule` s, else the system resolver."""

    def __init__(self, rules: tuple[ResolveRule, ...]) -> None:
        self._rules = rules
        self._fallback: AbstractResolver | None = None

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        for rule in self._rules:
            if rule.matches(host, port):
                fam = socket.AF_INET6 if ":" in rule.addr else socket.AF_INET
                return [ResolveResult(hostname=host, host=rule.addr,
                                      port=rule.to_port if rule.to_port is not None else port,
                                      family=fam, proto=0, flags=socket.AI_NUMERICHOST)]
        if self._fallback is None:
            self._fallback = DefaultResolver()
        return await self._fallback.resolve(host, port, family)

    async def close(self) -> None:
        if self._fallback is not None:
            await self._fallback.close()


def make_ssl_context(ca_file: str | None, insecure: bool) -> ssl.SSLContext | bool:
    """Verified TLS by default; ``ca_file`` adds trusted CAs; ``insecure`` disables checks."""
    if insecure:
        logging.getLogger(__name__).warning(
            "TLS certificate verification is disabled (--insecure)")
        return False
    ctx = ssl.create_default_context()
    if ca_file:
        try:
            ctx.load_verify_locations(cafile=ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"cannot load CA file {ca_file!r}: {exc}") from exc
    return ctx
