"""URL normalisation: the one function the crawler and the fixture web's ground truth share.

The rules (applied in this order by :func:`normalize_url`):

1. Resolve against ``base`` when one is given: RFC 3986 section 5.2, with the rules
   browsers (the WHATWG URL standard) apply to http(s): a backslash before the query
   counts as a slash, tabs and newlines anywhere are removed, and ``http:x`` relative
   to an ``http`` base is a relative reference.
2. Only ``http`` and ``https`` survive; any other scheme (``mailto:``, ``javascript:``,
   ``data:``, ``file:``, ``ftp:`` ...) or an unparsable URL gives ``None``.
3. Scheme and host are lower-cased; a trailing dot on the host is dropped; a non-ASCII
   host is IDNA-encoded; user info (``user:pass@``) is dropped.
4. The default port (80 for http, 443 for https) is dropped; an invalid port gives ``None``.
5. The fragment is dropped.
6. Percent-encoding is normalised: escapes of unreserved characters
   (``A-Z a-z 0-9 - . _ ~``) are decoded, other escapes get upper-case hex digits,
   characters that may not appear raw (space, non-ASCII, ``"<>\\^`{|}``) are encoded
   as UTF-8 escapes, and a lone ``%`` becomes ``%25``.
7. Dot-segments (``.`` and ``..``) are removed from the path; an empty path becomes ``/``.
8. The query is kept, in its order (only its percent-encoding is normalised);
   an empty query (``?`` alone) is dropped.

The function is idempotent: ``normalize_url(normalize_url(u)) == normalize_url(u)``.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["MAX_URL_LENGTH", "host_key", "is_local_host", "normalize_escapes", "normalize_url",
           "remove_dot_segments"]

#: URLs longer than this (after normalisation) are rejected by normalisation itself.
MAX_URL_LENGTH = 8192

_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Characters allowed raw in a path or query after normalisation: unreserved, the
# sub-delims, ':' '@' '/' '?' and '%' (as the start of a valid escape).
_ALLOWED_RAW = _UNRESERVED | frozenset("!$&'()*+,;=:@/?%")
_PCT_OR_BAD = re.compile(r"%(?![0-9A-Fa-f]{2})|%[0-9A-Fa-f]{2}|[^A-Za-z0-9\-._~!$&'()*+,;=:@/?]")
_HOST_OK = re.compile(r"^[a-z0-9\-._~!$&'()*+,;=]+$|^\[[0-9a-f:.]+\]$")


def _fix_escape(match: re.Match[str]) -> str:
    text = match.group(0)
    if text == "%":  # a lone percent sign
        return "%25"
    if len(text) == 3 and text[0] == "%":
        char = chr(int(text[1:], 16))
        return char if char in _UNRESERVED else "%" + text[1:].upper()
    return "".join(f"%{byte:02X}" for byte in text.encode("utf-8", "surrogatepass"))


def normalize_escapes(part: str) -> str:
    """Rule 6 of the module docstring on one URL part (also used for robots.txt patterns).

    >>> normalize_escapes("/a%7e/%2f/é%")
    '/a~/%2F/%C3%A9%25'
    """
    return _PCT_OR_BAD.sub(_fix_escape, part)


def remove_dot_segments(path: str) -> str:
    """Remove ``.`` and ``..`` segments from an absolute path (RFC 3986 section 5.2.4)."""
    if "." not in path:
        return path
    segments = path.split("/")
    output: list[str] = []
    for segment in segments[1:]:
        if segment == "..":
            if output:
                output.pop()
        elif segment != ".":
            output.append(segment)
    # A path that ended in '.' or '..' keeps its trailing slash.
    if segments[-1] in (".", ".."):
        output.append("")
    return "/" + "/".join(output)


def _normalize_host(host: str) -> str | None:
    host = host.lower().rstrip(".")
    if not host:
        return None
    if ":" in host:  # an IPv6 literal (urlsplit strips the brackets)
        return f"[{host}]" if _HOST_OK.match(f"[{host}]") else None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    return host if _HOST_OK.match(host) else None


# RFC 3986 appendix B: scheme, authority, path, query, fragment.
_REFERENCE = re.compile(r"^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(//[^/?#]*)?([^?#]*)(\?[^#]*)?(#.*)?$",
                        re.S)
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")


def _browser_clean(url: str) -> str:
    """Strip, drop tabs/newlines, and read backslashes before the query as slashes."""
    url = url.strip().translate(_TAB_NEWLINE)
    if "\\" in url:
        cut = min(i for i in (url.find("?"), url.find("#"), len(url)) if i >= 0)
        url = url[:cut].replace("\\", "/") + url[cut:]
    return url


def _resolve(base: str, ref: str) -> str | None:
    """Resolve ``ref`` against the absolute ``base`` (RFC 3986 section 5.2.2)."""
    b, r = _REFERENCE.match(base), _REFERENCE.match(ref)
    if b is None or r is None or b.group(1) is None:
        return None
    b_scheme, b_auth, b_path, b_query = b.group(1), b.group(2), b.group(3), b.group(4)
    scheme, auth, path, query = r.group(1), r.group(2), r.group(3), r.group(4)
    if scheme is not None and scheme.lower() == b_scheme.lower() and auth is None:
        scheme = None  # 'http:x' relative to an http base, as browsers read it
    if scheme is not None:
        return ref
    if auth is None:
        auth = b_auth or ""
        if not path:
            path = b_path
            query = b_query if query is None else query
        elif not path.startswith("/"):
            directory = b_path[: b_path.rfind("/") + 1] if b_path else "/"
            path = directory + path
    return f"{b_scheme}:{auth}{remove_dot_segments(path) if path else ''}{query or ''}"


@lru_cache(maxsize=1 << 17)
def _normalize_absolute(url: str) -> str | None:
    url = _browser_clean(url)
    try:
        parts = urlsplit(url)
        port = parts.port
        hostname = parts.hostname
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not hostname:
        return None
    host = _normalize_host(hostname)
    if host is None:
        return None
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    path = remove_dot_segments(normalize_escapes(parts.path) or "/")
    if not path.startswith("/"):
        path = "/" + path
    query = normalize_escapes(parts.query)
    result = f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")
    return result if len(result) <= MAX_URL_LENGTH else None


def normalize_url(url: str, base: str | None = None) -> str | None:
    """Return the normalised absolute form of ``url``, or ``None`` if it is not crawlable.

    Parameters
    ----------
    url : str
        An absolute URL, or a reference relative to ``base``.
    base : str, optional
        The URL to resolve ``url`` against (the page's URL or its ``<base href>``).

    Returns
    -------
    str or None
        The normalised ``http``/``https`` URL; ``None`` for other schemes, invalid
        hosts or ports, or URLs longer than :data:`MAX_URL_LENGTH`.

    Examples
    --------
    >>> normalize_url("HTTP://Example.COM:80/a/./b/../c?x=%7e#frag")
    'http://example.com/a/c?x=~'
    >>> normalize_url("../x.html", base="http://site1.test:8400/a/b/c.html")
    'http://site1.test:8400/a/x.html'
    >>> normalize_url("mailto:someone@example.com") is None
    True
    """
    if base is not None:
        resolved = _resolve(_browser_clean(base), _browser_clean(url))
        if resolved is None:
            return None
        url = resolved
    return _normalize_absolute(url)


def host_key(url: str) -> str:
    """The politeness key of a normalised URL: its host, with the port when not default.

    >>> host_key("http://site3.test:8400/p/1")
    'site3.test:8400'
    """
    start = url.index("//") + 2
    end = url.find("/", start)
    return url[start:] if end < 0 else url[start:end]


#: Special-use names that never reach a public server (RFC 6761, RFC 2606).
_LOCAL_SUFFIXES = (".localhost", ".test", ".invalid", ".example", ".local")


@lru_cache(maxsize=4096)
def is_local_host(hostport: str) -> bool:
    """Whether a :func:`host_key` names this machine or a special-use name, never a public host.

    Loopback literals (``127.0.0.0/8``, ``[::1]``), ``localhost`` and names under
    ``.localhost``, ``.test``, ``.invalid``, ``.example`` and ``.local`` count as local.

    >>> is_local_host("127.0.0.2:8400"), is_local_host("site1.test"), is_local_host("example.org")
    (True, True, False)
    """
    host = hostport[1:hostport.index("]")] if hostport.startswith("[") else hostport.split(":")[0]
    if host == "localhost" or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
