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
    """The origin, the request target and the Host header of an http(s) URL.

    A plain URL (printable ASCII, no space, a lower-case ``http://`` or ``https://``)
    is cut by string search, its authority's origin and Host header remembered: the
    same result as :func:`urllib.parse.urlsplit` gives (which strips nothing from such
    a URL), at 1.7 µs instead of 6.7 (20,000 URLs of 20 hosts), once per request.
    """
    if url.isascii() and url.isprintable() and " " not in url:
        start = 8 if url.startswith("https://") else 7 if url.startswith("http://") else 0
        if start:
            end = len(url)
            for mark in "/?#":
                at = url.find(mark, start, end)
                if at >= 0:
                    end = at
            authority = url[:end]
            known = _ORIGINS.get(authority)
            if known is None:
                origin, _, host_header = _split_parsed(authority + "/")
                known = (origin, host_header)
                if len(_ORIGINS) >= _ORIGINS_MAX:
                    _ORIGINS.clear()
                _ORIGINS[authority] = known
            rest = url[end:]
            path, _, query = rest.partition("#")[0].partition("?")
            return known[0], (path or "/") + (f"?{query}" if query else ""), known[1]
    return _split_parsed(url)


def _split_parsed(url: str) -> tuple[Origin, str, str]:
    """:func:`split_url` through :func:`urllib.parse.urlsplit` (any URL)."""
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


#: authority (``scheme://host[:port]``, as written) -> origin and Host header
_ORIGINS: dict[str, tuple[Origin, str]] = {}
#: authorities remembered at most (then forgotten all at once)
_ORIGINS_MAX = 4096


def absolute_form(method: str, url: str, lines: str, proxy: Proxy) -> bytes:
    """A request for an http proxy: the whole URL as the target, its credentials added."""
    auth = f"Proxy-Authorization: {proxy.authorization}\r\n" if proxy.authorization else ""
    return f"{method} {url} HTTP/1.1\r\n{lines}{auth}\r\n".encode("latin-1")
