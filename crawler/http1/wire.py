"""What the client writes: a URL's origin, request target and ``Host``, and a request in
absolute form for an http proxy (the origin form is written in the client's hot path);
the limits of what it reads.

A URL that cannot be sent as it is (spaces, controls, non-ASCII characters in the
target, no host, another scheme) raises ValueError: the crawler's URLs are normalised
and percent-encoded before they get here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from webcrawl.storage.errors import NetworkError

if TYPE_CHECKING:
    from webcrawl.crawler.proxy import Proxy

__all__ = ["BUFFER_LIMIT", "HEADER_LIMIT", "Origin", "absolute_form", "network_error",
           "split_url"]

#: bytes of one response's header block (status line and headers) at most
HEADER_LIMIT = 64 * 1024
#: unread body bytes beyond which reading from the socket pauses
BUFFER_LIMIT = 256 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}

Origin = tuple[str, str, int]  # scheme, host, port


def network_error(url: str, exc: BaseException) -> NetworkError:
    """``exc`` as a one-line NetworkError naming ``url``."""
    text = " ".join(str(exc).split())
    return NetworkError(f"{type(exc).__name__} fetching {url}" + (f": {text}" if text else ""))


def split_url(url: str) -> tuple[Origin, str, str]:
    """The origin, the request target and the Host header of an http(s) URL."""
    parts = urlsplit(url)
    default = _DEFAULT_PORTS.get(parts.scheme)
    host = parts.hostname
    if default is None or not host:
        raise ValueError("not an http(s) URL with a host")
    port = parts.port or default
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if " " in target or not target.isascii() or not target.isprintable():
        raise ValueError("request target with spaces, controls or non-ASCII characters")
    host_header = f"[{host}]" if ":" in host else host
    if port != default:
        host_header = f"{host_header}:{port}"
    return (parts.scheme, host, port), target, host_header


def absolute_form(method: str, url: str, lines: str, proxy: Proxy) -> bytes:
    """A request for an http proxy: the whole URL as the target, its credentials added."""
    auth = f"Proxy-Authorization: {proxy.authorization}\r\n" if proxy.authorization else ""
    return f"{method} {url} HTTP/1.1\r\n{lines}{auth}\r\n".encode("latin-1")
