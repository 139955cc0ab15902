"""Which HTTP proxy a request goes through: ``proxy`` setting, ``http_proxy`` and friends.

Contract
--------
* **Sources** (as curl, wget and Python's urllib read them): the ``proxy`` setting
  (``--proxy URL``) is used for http and https origins alike; without it (None) the
  environment's ``http_proxy`` and ``https_proxy`` are, the lower-case name winning
  over the upper-case one (``HTTP_PROXY`` is ignored when ``REQUEST_METHOD`` is set:
  under CGI it is a request header, the "httpoxy" hole).  ``proxy = ""`` turns every
  proxy off.  ``no_proxy`` (or ``NO_PROXY``) applies to both sources.
* **Proxy URLs**: ``http://[user:password@]host[:port]`` or bare ``host:port``; the port
  defaults to 80; user and password (percent-decoded) become a ``Proxy-Authorization:
  Basic`` header.  Other schemes (``https://``, ``socks5://``) are refused with
  :class:`~webcrawl.storage.errors.ConfigError`.
* **no_proxy**: comma- or space-separated entries; ``*`` bypasses every proxy; a name
  matches itself and its subdomains (a leading ``.`` or ``*.`` is ignored, so
  ``example.com``, ``.example.com`` and ``*.example.com`` all match ``example.com`` and
  ``www.example.com``); an address or CIDR block (``10.0.0.0/8``, ``[::1]``) matches
  address literals inside it; ``entry:port`` only matches that port.  As Go's net/http
  does, ``localhost`` and loopback addresses are never proxied.
* How a request crosses the proxy is :mod:`webcrawl.crawler.http1`'s: http in absolute
  form, https through a ``CONNECT`` tunnel with TLS to the origin.  Proxying changes no
  URL, so politeness, robots.txt and the crawl database still key on the origin host.
"""

from __future__ import annotations

import base64
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from webcrawl.storage.errors import ConfigError

__all__ = ["Proxy", "ProxyRoutes", "parse_proxy", "proxy_routes"]

_IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class Proxy:
    """One HTTP proxy: where it listens and the credentials it is sent."""

    host: str
    port: int
    #: the ``Proxy-Authorization`` header value, None without credentials
    authorization: str | None = None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_proxy(text: str, source: str = "--proxy") -> Proxy:
    """A proxy URL (see the module docstring); ConfigError naming ``source`` if bad.

    >>> parse_proxy("http://bob:s%40crt@proxy.example:3128")
    Proxy(host='proxy.example', port=3128, authorization='Basic Ym9iOnNAY3J0')
    """
    raw = text.strip()
    url = raw if "://" in raw else f"http://{raw}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"bad proxy {text!r} in {source}: {exc}") from None
    if parts.scheme.lower() != "http":
        raise ConfigError(f"bad proxy {text!r} in {source}: only http:// proxies are "
                          f"supported, not {parts.scheme}://")
    if not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigError(f"bad proxy {text!r} in {source}: expected http://HOST[:PORT]")
    auth = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        auth = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return Proxy(parts.hostname, port or 80, auth)


@dataclass(frozen=True, slots=True)
class _Bypass:
    """One ``no_proxy`` entry."""

    name: str                      # a lower-case domain ('' for an address entry)
    network: _IPNetwork | None     # an address or CIDR entry
    port: int | None

    def matches(self, host: str, addr: ipaddress.IPv4Address | ipaddress.IPv6Address | None,
                port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            return addr is not None and addr in self.network
        return host == self.name or host.endswith("." + self.name)


def _bypass_entry(entry: str) -> _Bypass | None:
    text, port = entry, None
    if text.startswith("["):                       # [v6] or [v6]:port
        end = text.find("]")
        rest = text[end + 1:] if end > 0 else ""
        if rest.startswith(":") and rest[1:].isdigit():
            port = int(rest[1:])
        text = text[1:end] if end > 0 else text
    elif text.count(":") == 1:                     # name:port or v4:port
        head, _, tail = text.partition(":")
        if tail.isdigit():
            text, port = head, int(tail)
    try:
        return _Bypass("", ipaddress.ip_network(text, strict=False), port)
    except ValueError:
        pass
    name = text.lstrip("*").lstrip(".").rstrip(".")
    return _Bypass(name, None, port) if name else None


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class ProxyRoutes:
    """The proxies of http and https origins and the ``no_proxy`` exceptions."""

    http: Proxy | None
    https: Proxy | None
    #: the ``no_proxy`` value, as given
    no_proxy: str = ""
    _all: bool = field(init=False, repr=False, compare=False, default=False)
    _entries: tuple[_Bypass, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        entries = [e for e in self.no_proxy.replace(",", " ").lower().split() if e]
        object.__setattr__(self, "_all", "*" in entries)
        object.__setattr__(self, "_entries", tuple(
            b for b in map(_bypass_entry, entries) if b is not None))

    def for_origin(self, scheme: str, host: str, port: int) -> Proxy | None:
        """The proxy for ``scheme://host:port``, None to connect directly."""
        proxy = self.https if scheme == "https" else self.http
        if proxy is None or self._all:
            return None
        host = host.lower().rstrip(".")
        addr = _address(host)
        if host == "localhost" or (addr is not None and addr.is_loopback):
            return None
        for entry in self._entries:
            if entry.matches(host, addr, port):
                return None
        return proxy


def _env(environ: Mapping[str, str], name: str) -> tuple[str, str] | None:
    """``(variable, value)`` of ``name`` (lower case first), None if unset or empty."""
    for var in (name, name.upper()):
        if var == "HTTP_PROXY" and "REQUEST_METHOD" in environ:
            continue  # httpoxy: under CGI this is the client's Proxy header
        value = environ.get(var, "").strip()
        if value:
            return var, value
    return None


def proxy_routes(setting: str | None, environ: Mapping[str, str]) -> ProxyRoutes | None:
    """The routes of a crawl: ``setting`` (the ``proxy`` field) else ``environ``.

    None when no proxy is configured at all.  A bad proxy URL raises ConfigError
    naming where it came from.
    """
    no_proxy = (_env(environ, "no_proxy") or ("", ""))[1]
    if setting is not None:
        if not setting.strip():
            return None
        proxy = parse_proxy(setting)
        return ProxyRoutes(proxy, proxy, no_proxy)
    found = [_env(environ, "http_proxy"), _env(environ, "https_proxy")]
    http, https = (parse_proxy(v[1], v[0]) if v else None for v in found)
    if http is None and https is None:
        return None
    return ProxyRoutes(http, https, no_proxy)
