"""CDXJ index lines (pywb's format) of WARC records: written beside a crawl's WARCs
(``warc_cdxj``), read as a previous collection's payload digests (``warc_dedup``).

One line per ``response`` or ``revisit`` record::

    org,example)/docs/a.html 20261206125959 {"url": "http://example.org/docs/a.html",
        "mime": "text/html", "status": "200", "digest": "sha1:...", "length": "1043",
        "offset": "2210", "filename": "webcrawl-20261206125959-00000.warc.gz"}

(on one line): the URL's SURT key, the record's ``WARC-Date`` as 14 digits, and a JSON
object: the URL, the media type (``warc/revisit`` for a revisit record, as pywb writes
it), the HTTP status, the payload digest (``WARC-Payload-Digest``), and the gzip
member's length and offset in the file.  Lines are sorted (``sort`` with ``LC_ALL=C``
orders them the same), so readers can search them.

The SURT key follows the Internet Archive's canonicalisation as pywb's ``cdxj-indexer``
applies it (``surt`` package): scheme dropped, host lower-cased, a leading ``www``
label dropped and the labels reversed (``com,example``; an IPv4 address's too), a
default port dropped, path and query lower-cased, repeated ``/`` collapsed, a trailing
``/`` dropped from a path other than ``/``, query arguments sorted, the fragment
dropped.  Session-id stripping (``jsessionid=`` ...) is not done: URLs that carry one
get a key of their own.

Reading (:func:`read_cdx_digests`) accepts CDXJ and the classic space-separated CDX
(``CDX N b a m s k r M S V g`` legend: the URL, time and digest fields are found from
the legend line, or at positions 2, 1, 5 without one), as wget's ``--warc-cdx`` and
Heritrix write it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from webcrawl.storage.errors import InputFormatError

__all__ = ["CdxEntry", "cdxj_line", "read_cdx_digests", "surt_key", "warc_timestamp"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def surt_key(url: str) -> str:
    """The SURT sort key of ``url`` (see the module docstring).

    >>> surt_key("https://www.Example.org:443/Docs/?b=2&a=1#top")
    'org,example)/docs?a=1&b=2'
    >>> surt_key("http://127.0.0.1:8080/")
    '1,0,0,127:8080)/'
    """
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().rstrip(".")
    labels = host.split(".")
    www = labels[0][3:]
    if len(labels) > 1 and labels[0].startswith("www") and (not www or www.isdigit()):
        labels = labels[1:]
    key = ",".join(reversed(labels))
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        key += f":{port}"
    path = re.sub("/{2,}", "/", parts.path.lower()) or "/"
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    query = "&".join(sorted(a for a in parts.query.lower().split("&") if a))
    return f"{key}){path}" + (f"?{query}" if query else "")


def warc_timestamp(warc_date: str) -> str:
    """``WARC-Date`` (``2026-12-06T12:59:59.123456Z``) as CDX's 14 digits."""
    digits = "".join(c for c in warc_date[:19] if c.isdigit())
    return digits.ljust(14, "0")[:14]


def cdxj_line(url: str, warc_date: str, *, mime: str | None, status: int | None,
              digest: str | None, length: int, offset: int, filename: str) -> str:
    """One CDXJ line (without its newline) of a record of WARC file ``filename``; a
    field the record does not have (no Content-Type, no payload digest) is left out,
    as ``cdxj-indexer`` leaves it out."""
    fields = {"url": url, "mime": mime, "status": None if status is None else str(status),
              "digest": digest, "length": str(length), "offset": str(offset),
              "filename": filename}
    kept = {k: v for k, v in fields.items() if v}
    return f"{surt_key(url)} {warc_timestamp(warc_date)} {json.dumps(kept)}"


class CdxEntry(NamedTuple):
    """One indexed record that holds a payload."""

    digest: str   # ``sha1:BASE32`` (the prefix added when the index leaves it out)
    url: str
    date: str     # ISO 8601, second precision (``2026-12-06T12:59:59Z``)


def read_cdx_digests(path: Path) -> Iterator[CdxEntry]:
    """Every record of a CDXJ or CDX index with a digest, in file order.

    Raises :class:`InputFormatError` naming the file and line for a line that is
    neither (revisit lines are skipped: they hold no payload of their own)."""
    legend: list[str] | None = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith(("CDX ", " CDX ")):
                legend = line.split()[1:]
                continue
            try:
                entry = _cdxj_entry(line) if "{" in line else _cdx_entry(line, legend)
            except ValueError:
                raise InputFormatError(f"{path}: line {number} is no CDX or CDXJ line: "
                                       f"{line[:80]!r}") from None
            if entry is not None:
                yield entry


def _digest(value: str) -> str:
    value = value.strip()
    return value if ":" in value else f"sha1:{value}"


def _cdxj_entry(line: str) -> CdxEntry | None:
    """The entry of a CDXJ line (None: no payload); ValueError: no CDXJ line."""
    _, _, rest = line.partition(" ")
    stamp, _, blob = rest.partition(" ")
    fields = json.loads(blob)
    if not isinstance(fields, dict) or not stamp.isdigit():
        raise ValueError(line)
    digest, url = fields.get("digest"), fields.get("url")
    if not digest or not url or fields.get("mime") == "warc/revisit" or digest == "-":
        return None
    return CdxEntry(_digest(str(digest)), str(url), _iso(stamp))


def _cdx_entry(line: str, legend: list[str] | None) -> CdxEntry | None:
    """The entry of a classic CDX line (None: no payload); ValueError: no CDX line."""
    cells = line.split(" ")
    at = {name: i for i, name in enumerate(legend or ())}
    url_at, time_at, digest_at = at.get("a", 2), at.get("b", 1), at.get("k", 5)
    mime_at = at.get("m", 3)
    if len(cells) <= max(url_at, time_at, digest_at) or not cells[time_at].isdigit():
        raise ValueError(line)
    if cells[digest_at] == "-" or (len(cells) > mime_at and cells[mime_at] == "warc/revisit"):
        return None
    return CdxEntry(_digest(cells[digest_at]), cells[url_at], _iso(cells[time_at]))


def _iso(stamp: str) -> str:
    s = stamp.ljust(14, "0")
    return f"{s[0:4]}-{s[4:6]}-{s[6:8]}T{s[8:10]}:{s[10:12]}:{s[12:14]}Z"
