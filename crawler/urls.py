"""URL normalisation: the one function the crawler and the fixture web's ground truth share.

URLs are read as browsers read ``http`` and ``https`` URLs (the WHATWG URL standard's
parser for special schemes), then normalised.  The rules (applied in this order by
:func:`normalize_url`):

1. Parse, resolving against ``base`` when one is given (WHATWG URL standard): leading and
   trailing spaces and C0 controls are stripped, tabs and newlines anywhere removed;
   a backslash before the query counts as a slash; ``http:x`` relative to an ``http``
   base is a relative reference, while ``https:host/`` on an ``http`` page names a host;
   any number of slashes (``///host/path``) may precede a host; the host follows the
   *last* ``@`` of the authority (so user info may hold ``[``, ``]`` or ``@``).
2. Only ``http`` and ``https`` survive; any other scheme (``mailto:``, ``javascript:``,
   ``data:``, ``file:``, ``ftp:`` ...) or an unparsable URL gives ``None``.
3. The host is percent-decoded, then mapped with UTS #46 (IDNA 2008, non-transitional,
   as browsers do: ``faß`` stays ``faß``, ``xn--fa-hia``), lower-cased; IPv4 addresses in
   any spelling browsers accept (``0x7f.1``, ``2130706433``) become dotted decimal and
   IPv6 addresses their compressed form, so each server is one host; trailing dots are
   dropped.  A host with characters no DNS name or address has (quotes, ``!``, ``*`` ...:
   anything but letters, digits, ``-``, ``_`` and dots) gives ``None``.  User info
   (``user:pass@``) is dropped.
4. The default port (80 for http, 443 for https) is dropped; an invalid port gives ``None``.
5. The fragment is dropped.
6. Percent-encoding is normalised: escapes of unreserved characters
   (``A-Z a-z 0-9 - . _ ~``) are decoded, other escapes get upper-case hex digits,
   characters that may not appear raw (space, non-ASCII, ``"<>\\^`{|}``) are encoded
   as UTF-8 escapes, and a lone ``%`` becomes ``%25``.  In the query, ``'`` is
   encoded (as browsers do) and non-ASCII characters are encoded in the page's
   ``encoding`` when one is given (``?q=é`` on a windows-1252 page is ``?q=%E9``;
   characters the encoding lacks become ``%26%23NNN%3B``, as browsers send them).
7. Dot-segments (``.`` and ``..``, also escaped) are removed from the path; an empty
   path becomes ``/``.
8. The query is kept, in its order (only its percent-encoding is normalised);
   an empty query (``?`` alone) is dropped.

The function is idempotent: ``normalize_url(normalize_url(u)) == normalize_url(u)``.
Where this differs from the WHATWG URL test data is listed in docs/results/robustness.md.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import unquote_to_bytes

import idna
from idna.core import valid_contextj

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
# What a host may hold once mapped: DNS labels (letters, digits, '-', '_') and dots.
_HOST_OK = re.compile(r"[a-z0-9_\-.]+")
_UTF8_NAMES = frozenset(("utf-8", "utf8", "utf_8", "u8"))


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


_C0_SPACE = "".join(chr(i) for i in range(0x21))
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_AUTHORITY_END = re.compile(r"[/\\?#]")
_HEX = re.compile(r"[0-9A-Fa-f]*")
_OCT = re.compile(r"[0-7]*")
_DEC = re.compile(r"[0-9]+")


class _Parts(NamedTuple):
    """A parsed http(s) URL: path and query as written (``\\`` read as ``/``)."""

    scheme: str
    netloc: str           # normalised host[:port]
    path: str
    query: str | None


def _ipv4_number(text: str) -> int | None:
    """One part of an IPv4 address as browsers read it: decimal, 0x hex or 0 octal."""
    if not text:
        return None
    if text[:2] in ("0x", "0X"):
        digits, radix, pattern = text[2:], 16, _HEX
    elif len(text) > 1 and text[0] == "0":
        digits, radix, pattern = text[1:], 8, _OCT
    else:
        digits, radix, pattern = text, 10, _DEC
    if not pattern.fullmatch(digits):
        return None
    return int(digits, radix) if digits else 0


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    return (last.isascii() and last.isdigit()) or _ipv4_number(last) is not None


def _ipv4(host: str) -> str | None:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return None
    numbers = [_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    nums = [n for n in numbers if n is not None]
    if any(n > 255 for n in nums[:-1]) or nums[-1] >= 256 ** (5 - len(nums)):
        return None
    value = nums[-1] + sum(n << (8 * (3 - i)) for i, n in enumerate(nums[:-1]))
    return str(ipaddress.IPv4Address(value))


def _domain_to_ascii(domain: str) -> str | None:
    """UTS #46 ToASCII as the WHATWG URL standard calls it (non-transitional, no STD3)."""
    if domain.isascii() and "xn--" not in domain.lower():
        return domain.lower()
    try:
        mapped = idna.uts46_remap(domain, std3_rules=False, transitional=False)
    except (idna.IDNAError, UnicodeError, ValueError):
        return None
    labels = []
    for label in mapped.split("."):
        if label.startswith("xn--"):
            try:
                decoded = label[4:].encode("ascii").decode("punycode")
            except (UnicodeError, ValueError):
                return None
            if not decoded or decoded.isascii() or not _valid_label(decoded):
                return None
        elif not label.isascii():
            if not _valid_label(label):
                return None
            label = "xn--" + label.encode("punycode").decode("ascii")
        labels.append(label)
    return ".".join(labels)


def _valid_label(label: str) -> bool:
    """UTS #46 section 4.1 validity of a Unicode label (mapping stable, NFC, joiners)."""
    try:
        if idna.uts46_remap(label, std3_rules=False, transitional=False) != label:
            return False
        if unicodedata.category(label[0]).startswith("M"):
            return False
        return all(valid_contextj(label, i) for i, ch in enumerate(label)
                   if ch in "\u200c\u200d")
    except (idna.IDNAError, UnicodeError, ValueError):
        return False


@lru_cache(maxsize=1 << 14)
def _parse_host(text: str) -> str | None:
    """The normalised host of an http(s) URL (rule 3), or None."""
    if text.startswith("["):
        if not text.endswith("]") or "%" in text:
            return None
        try:
            return f"[{ipaddress.IPv6Address(text[1:-1]).compressed}]"
        except ValueError:
            return None
    if "%" in text:
        text = unquote_to_bytes(text).decode("utf-8", errors="replace")
    host = _domain_to_ascii(text)
    if not host:
        return None
    if _ends_in_number(host):
        return _ipv4(host)
    host = host.rstrip(".")
    return host if host and _HOST_OK.fullmatch(host) else None


def _netloc(scheme: str, authority: str) -> str | None:
    at = authority.rfind("@")
    if at >= 0:  # user info is dropped; the host follows the last '@'
        authority = authority[at + 1:]
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            return None
        host_text, after = authority[: close + 1], authority[close + 1:]
        if after and after[0] != ":":
            return None
        port_text = after[1:] if after else ""
    else:
        host_text, _, port_text = authority.partition(":")
    host = _parse_host(host_text)
    if host is None:
        return None
    if not port_text:
        return host
    if not (port_text.isascii() and port_text.isdigit()):
        return None
    port = int(port_text)
    if port > 65535:
        return None
    return host if port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"


def _path_query(rest: str) -> tuple[str, str | None]:
    """Split what follows the authority into path and query (the fragment dropped)."""
    hash_at = rest.find("#")
    if hash_at >= 0:
        rest = rest[:hash_at]
    query_at = rest.find("?")
    if query_at >= 0:
        return rest[:query_at].replace("\\", "/"), rest[query_at + 1:]
    return rest.replace("\\", "/"), None


def _with_authority(scheme: str, rest: str) -> _Parts | None:
    rest = rest.lstrip("/\\")  # browsers skip any number of slashes before a host
    match = _AUTHORITY_END.search(rest)
    end = match.start() if match else len(rest)
    netloc = _netloc(scheme, rest[:end])
    if netloc is None:
        return None
    path, query = _path_query(rest[end:])
    return _Parts(scheme, netloc, path or "/", query)


def _relative(base: _Parts, ref: str) -> _Parts | None:
    """Resolve a reference without a scheme (or with the base's) against ``base``."""
    first = ref[:1]
    if first in ("/", "\\"):
        if ref[1:2] in ("/", "\\"):
            return _with_authority(base.scheme, ref)
        path, query = _path_query(ref)
        return _Parts(base.scheme, base.netloc, path, query)
    if not ref or first == "#":
        return base
    path, query = _path_query(ref)
    if first == "?":
        return _Parts(base.scheme, base.netloc, base.path, query)
    directory = base.path[: base.path.rfind("/") + 1] or "/"
    return _Parts(base.scheme, base.netloc, directory + path, query)


def _parse(url: str, base: _Parts | None) -> _Parts | None:
    url = url.strip(_C0_SPACE).translate(_TAB_NEWLINE)
    match = _SCHEME.match(url)
    if match is None:
        return None if base is None else _relative(base, url)
    scheme = match.group(1).lower()
    if scheme not in _DEFAULT_PORTS:
        return None
    rest = url[match.end():]
    if base is not None and base.scheme == scheme and \
            not (rest[:1] in ("/", "\\") and rest[1:2] in ("/", "\\")):
        return _relative(base, rest)  # 'http:x' on an http page: relative
    return _with_authority(scheme, rest)


def _encode_query(query: str, encoding: str | None) -> str:
    """Percent-encode a query's non-ASCII characters in the page's encoding (rule 6)."""
    query = query.replace("'", "%27")
    if query.isascii() or encoding is None or encoding.lower() in _UTF8_NAMES:
        return query
    out = []
    for ch in query:
        if ch < "\x80":
            out.append(ch)
            continue
        try:
            raw = ch.encode(encoding)
        except UnicodeEncodeError:
            if "\x80" <= ch <= "\x9f" and _undefined_byte(encoding, ord(ch)):
                out.append(f"%{ord(ch):02X}")  # WHATWG's index: the byte of the same number
            else:
                out.append(f"%26%23{ord(ch)}%3B")  # what browsers send for a missing char
            continue
        except LookupError:
            return query
        out.append("".join(f"%{byte:02X}" for byte in raw))
    return "".join(out)


@lru_cache(maxsize=256)
def _undefined_byte(encoding: str, byte: int) -> bool:
    """Whether a single-byte ``encoding`` leaves ``byte`` undefined (WHATWG: U+0080+byte)."""
    try:
        bytes([byte]).decode(encoding)
    except UnicodeDecodeError:
        return True
    except LookupError:
        return False
    return False


def _serialise(parts: _Parts, encoding: str | None) -> str | None:
    path = remove_dot_segments(normalize_escapes(parts.path) or "/")
    if not path.startswith("/"):
        path = "/" + path
    query = normalize_escapes(_encode_query(parts.query, encoding)) if parts.query else ""
    result = f"{parts.scheme}://{parts.netloc}{path}" + (f"?{query}" if query else "")
    return result if len(result) <= MAX_URL_LENGTH else None


#: An http(s) URL that normalisation leaves as it is, but for its fragment (dropped) and
#: an empty path (``/``): a lower-case scheme; a host of lower-case DNS labels whose last
#: label starts with a letter (so it is no IPv4 number, rule 3), without user info; a
#: port without a leading zero; a path and a query of characters rule 6 keeps raw, no
#: ``%`` (an escape may need decoding or upper-case digits) and no ``'`` in the query
#: (browsers encode it).  What the pattern cannot see (``xn--`` labels, dot-segments, a
#: port past 65535 or the default one) :func:`_already_normal` checks.
_NORMAL_FORM = re.compile(
    r"(https?)://((?:[a-z0-9_\-]++\.)*+[a-z][a-z0-9_\-]*+)(?::([1-9][0-9]{0,4}+))?+"
    r"(/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*+)?+(?:\?([A-Za-z0-9\-._~!$&()*+,;=:@/?]*+))?+"
    r"(?:#.*)?+", re.DOTALL)


def _already_normal(url: str) -> str | None:
    """``url``'s normal form when :data:`_NORMAL_FORM` shows it without parsing, else None.

    About a third of :func:`_parse` and :func:`_serialise`'s cost on a crawl's links,
    which are mostly in this form already (measured in ``benchmarks/bench_links.py``).
    """
    match = _NORMAL_FORM.fullmatch(url)
    if match is None:
        return None
    scheme, host, port, path, query = match.groups()
    if "xn--" in host or (path is not None and "/." in path):
        return None  # a label to check (UTS #46), or maybe a dot-segment to remove
    if port is not None and (int(port) > 65535 or int(port) == _DEFAULT_PORTS[scheme]):
        return None
    if path is not None and query != "" and "#" not in url:
        return url if len(url) <= MAX_URL_LENGTH else None  # normal as it stands
    result = url[:match.end(3 if port is not None else 2)] + (path or "/")
    if query:
        result += "?" + query
    return result if len(result) <= MAX_URL_LENGTH else None


def _normalize_parsed(url: str, encoding: str | None = None) -> str | None:
    """An absolute URL normalised by the full parser (what :func:`_already_normal` skips)."""
    parts = _parse(url, None)
    return None if parts is None else _serialise(parts, encoding)


@lru_cache(maxsize=1 << 17)
def _normalize_absolute(url: str, encoding: str | None = None) -> str | None:
    # A query in _NORMAL_FORM is ASCII: its encoding never matters (rule 6).
    fast = _already_normal(url)
    return fast if fast is not None else _normalize_parsed(url, encoding)


@lru_cache(maxsize=256)
def _parse_base(base: str) -> _Parts | None:
    parts = _parse(base, None)
    if parts is None:
        return None
    path = remove_dot_segments(normalize_escapes(parts.path) or "/")
    return parts._replace(path=path)


def normalize_url(url: str, base: str | None = None,
                  encoding: str | None = None) -> str | None:
    """Return the normalised absolute form of ``url``, or ``None`` if it is not crawlable.

    Parameters
    ----------
    url : str
        An absolute URL, or a reference relative to ``base``.
    base : str, optional
        The URL to resolve ``url`` against (the page's URL or its ``<base href>``).
    encoding : str, optional
        The page's character encoding (a Python codec name): non-ASCII characters of
        the query are percent-encoded in it, as browsers do; default UTF-8.

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
    >>> normalize_url("https://faß.example/?q=é", encoding="cp1252")
    'https://xn--fa-hia.example/?q=%E9'
    >>> normalize_url("http://0x7f.1/"), normalize_url("mailto:someone@example.com")
    ('http://127.0.0.1/', None)
    """
    if base is None:
        return _normalize_absolute(url, encoding)
    base_parts = _parse_base(base)
    if base_parts is None:
        return None
    parts = _parse(url, base_parts)
    return None if parts is None else _serialise(parts, encoding)


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
