"""Import WARC files (any writer: wget, Heritrix, Browsertrix, webcrawl) into a crawl database.

Record by record, in file order (the fetch order, so ``compare`` has a "recorded"
order), streaming with bounded memory (one record's payload at a time, capped at
``fetch_max_body`` bytes; the URL and host maps grow with the URLs, as in a crawl):

===============  ==========================================================================
``response``     a fetch: URL (normalised), status, Content-Type, size, digest (ours,
                 over the body, as the crawler computes it), ETag, Last-Modified, time
                 from ``WARC-Date``.  Classified as the crawler does: 3xx with a Location
                 is a ``redirect`` whose target is the page's one link; 2xx HTML is
                 ``fetched`` and gives links through :func:`webcrawl.crawler.links.extract_links`
                 and :func:`webcrawl.crawler.urls.normalize_url`; other 2xx ``not_html``; 304
                 ``not_modified``; the rest ``http_error``.  A second response for a
                 URL is another attempt of its crawl fetch when that failed (no answer or
                 status >= 400: a retry, or wget's second spelling of the URL), else a
                 revisit (``changed`` by digest).
                 A ``fetched`` page whose body repeats an earlier page's is recorded as
                 its duplicate (the crawl's content-seen test,
                 :mod:`webcrawl.crawler.content_seen`) and its links are not read
                 (``links_from_duplicates`` reads them).
``revisit``      an unchanged refetch (``changed = 0``) of a URL seen before.
``/robots.txt``  responses for a host's robots.txt set that host's robots (status, body,
                 time), as the crawler stores them; they are no page fetch.
others           ``warcinfo``, ``request``, ``metadata``, ``resource``: skipped.
===============  ==========================================================================

Seeds are the fetched URLs that no earlier page linked to (a crawl's seeds, or the
start of each wget run); depth is counted from them.

Damage: every record is checked against its framing (see :class:`_WarcBytes`): a gzip
member that does not decompress to its end with the right CRC and length, a file cut
short, a header that is no WARC header, a ``Content-Length`` the record does not have
or that does not end where the record ends.  A damaged record raises
:class:`~webcrawl.storage.errors.InputFormatError` naming the file and the record's
byte offset (of its gzip member); with ``skip_bad`` it is counted (``bad``), reported
and the import resumes at the next record start (the next gzip member, or the next
``WARC/1.`` line, that holds one).  ``bad`` counts damaged stretches: one damaged record,
or several when the damage also destroyed the start of the next ones.

The database is written whole or not at all (:func:`webcrawl.storage.lock.new_database`):
built in a temporary file beside ``db`` and renamed into place when complete, so an
import that fails (a damaged record, a full disk) or is killed leaves neither a
database nor its temporary file, and can simply be run again.

Each record is parsed by warcio (its WARC and HTTP headers, the payload's transfer and
content encodings): FastWARC parses about 5 times faster (``benchmarks/bench_warc_read.py``),
but reading is 5-10 % of an import, whose time goes into HTML parsing; warcio also
writes our WARCs (``warcio check``), so one library serves both directions.  The
framing around the records is ours (:class:`_WarcBytes`): warcio's iterator writes
gzip errors to stderr and carries on with what it could read, and reads a
``Content-Length`` past the end of a record.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import re
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from webcrawl.crawler import eventloop
from webcrawl.crawler.codings import BodyDecoder, CorruptBody, UnsupportedCoding
from webcrawl.crawler.content_seen import ContentSeen
from webcrawl.crawler.fetcher import decode_body, is_html
from webcrawl.crawler.links import extract_links, link_ids
from webcrawl.crawler.outcomes import response_outcome
from webcrawl.crawler.progress import StatusLine
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.urls import normalize_url
from webcrawl.storage import _testhooks
from webcrawl.storage.errors import ConfigError, InputFormatError
from webcrawl.storage.lock import new_database
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore

__all__ = ["WarcImport", "import_warc"]

#: Bytes read at a time while looking for the next record after a damaged one.
_SCAN_CHUNK = 1 << 20
#: Bytes read at a time while reading records, and decompressed bytes taken at a time.
_READ_CHUNK = 1 << 16
_INFLATE_CHUNK = 1 << 18
_GZIP_MAGIC = b"\x1f\x8b\x08"
_WARC_MAGIC = b"WARC/1."
#: Longest WARC header block (and line) read before a record counts as damaged.
_MAX_HEADER = 1 << 20
_CONTENT_LENGTH = re.compile(rb"(?im)^content-length:[ \t]*([^\r\n]*?)[ \t]*\r?$")


@dataclass(slots=True)
class WarcImport:
    """Counters of one import (also the live progress)."""

    records: int = 0
    fetches: int = 0
    revisits: int = 0
    robots: int = 0
    skipped: int = 0          # record types that are no fetch (warcinfo, request, ...)
    bad: int = 0              # damaged records skipped (--skip-bad)
    links: int = 0
    urls: int = 0
    hosts: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    outcomes: dict[str, int] = field(default_factory=dict)
    bad_offsets: list[tuple[str, int, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"records": self.records, "fetches": self.fetches, "revisits": self.revisits,
                "robots": self.robots, "skipped": self.skipped, "bad": self.bad,
                "links": self.links, "urls": self.urls, "hosts": self.hosts,
                "seconds": round(self.seconds, 3), "outcomes": dict(sorted(self.outcomes.items())),
                "bad_records": [{"file": f, "offset": o, "error": e}
                                for f, o, e in self.bad_offsets]}

    def summary(self) -> str:
        bad = f", {self.bad} damaged records skipped" if self.bad else ""
        return (f"imported {self.records:,} records in {self.seconds:.1f} s: "
                f"{self.fetches:,} fetches ({self.revisits:,} revisits), {self.links:,} "
                f"links, {self.urls:,} URLs on {self.hosts:,} hosts, {self.robots:,} "
                f"robots.txt{bad}")


@dataclass(slots=True)
class _Record:
    """What the importer needs of one WARC record (payload capped)."""

    offset: int
    kind: str                     # WARC-Type
    uri: str | None
    date: float | None
    status: int | None
    headers: list[tuple[str, str]]
    body: bytes
    too_large: bool

    def header(self, name: str) -> str | None:
        low = name.lower()
        for key, value in self.headers:
            if key.lower() == low:
                return value
        return None


def _warc_date(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


# A record whose bytes warcio cannot parse raises one of these inside it.
_DAMAGE = (EOFError, ValueError, LookupError, AttributeError, TypeError, IndexError)


class _Damage(Exception):
    """A record that cannot be read as it is framed (internal: it becomes an
    :class:`InputFormatError`, or a bad record under ``skip_bad``)."""


class _Short(_Damage):
    """The member (or file) ended ``got`` bytes into a read."""

    def __init__(self, got: int) -> None:
        super().__init__(f"{got} bytes, then the end")
        self.got = got


def _records(path: Path, cap: int, skip_bad: bool,
             on_bad: Callable[[int, str], None]) -> Iterator[_Record]:
    """Every record of one WARC file, resuming after damaged ones when ``skip_bad``."""
    from warcio.exceptions import ArchiveLoadFailed
    from warcio.recordloader import ArcWarcRecordLoader
    from warcio.statusandheaders import StatusAndHeadersParserException

    damage = (_Damage, ArchiveLoadFailed, StatusAndHeadersParserException, *_DAMAGE)
    loader = ArcWarcRecordLoader(verify_http=False, arc2warc=False)
    with open(path, "rb") as fh:
        src = _WarcBytes(fh, path.stat().st_size)
        while True:
            try:
                rec = src.next_record(loader, cap)
            except damage as exc:
                offset = src.record_offset
                text = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
                reason = text if isinstance(exc, _Damage) else \
                    f"{type(exc).__name__}: {text}" if text else type(exc).__name__
                if not skip_bad:
                    raise InputFormatError(
                        f"{path}: damaged WARC record at offset {offset} ({reason}); "
                        "nothing was imported; --skip-bad skips damaged records",
                        offset) from exc
                on_bad(offset, reason)
                if not src.resync(offset + 1):
                    return
                continue
            if rec is None:
                return
            yield rec


class _WarcBytes:
    """The records of one WARC file, each checked against its framing (internal).

    A ``.warc.gz`` is read gzip member by member, each decompressed to its end, so its
    CRC and length are checked; a plain WARC as it is.  A record must start with a
    ``WARC/`` line, hold a ``Content-Length`` that its member (or the file) has room
    for, and end with a blank line just after that many bytes; in a gzip member only
    blank lines or another record may follow it.  Anything else raises :class:`_Damage`;
    :attr:`record_offset` is then the offset of the damaged record (of its gzip member),
    and :meth:`resync` moves to the next record start after it.  Memory: one chunk of
    the file and a few of its decompressed bytes, whatever the record sizes; the bytes
    of a record are copied once, into what its reader takes.
    """

    def __init__(self, fh: BinaryIO, size: int) -> None:
        self.fh = fh
        self.size = size
        head = fh.read(len(_GZIP_MAGIC))
        # Gzip by its first bytes; when they are neither gzip nor WARC (damaged), by
        # whether a gzip member holding a record starts anywhere.
        self.gz = head == _GZIP_MAGIC or (
            not _WARC_MAGIC.startswith(head[:5]) and
            _next_record_start(fh, 0, lambda at: _gzip_record_at(fh, at)) is not None)
        self.data = b""            # bytes of the current member (plain: file) from ``pos``
        self.pos = 0
        self.raw_pos = 0           # file offset of the next byte to read from ``fh``
        self.pending = b""         # bytes read from ``fh`` that no member has taken yet
        self.inflater: Any = None  # zlib decompressor of the current gzip member
        self.record_offset = 0     # where the record being read starts (its member's start)
        self._goto(0)

    def _goto(self, offset: int) -> None:
        self.fh.seek(offset)
        self.raw_pos = offset
        self.data, self.pos, self.pending = b"", 0, b""
        self.inflater = None
        self.record_offset = offset

    @property
    def available(self) -> int:
        return len(self.data) - self.pos

    def _fill(self) -> bool:
        """Add the next bytes of the current member (or file) to what is available;
        False at its end."""
        chunk = self._next_chunk()
        if not chunk:
            return False
        self.data = chunk if self.pos >= len(self.data) else self.data[self.pos:] + chunk
        self.pos = 0
        return True

    def _next_chunk(self) -> bytes:
        if not self.gz:
            return self._read_raw()
        inflater = self.inflater
        while not inflater.eof:
            data = inflater.unconsumed_tail
            if not data:
                data, self.pending = self.pending or self._read_raw(), b""
                if not data:
                    raise _Damage("the file ends inside this record's gzip member "
                                  "(truncated file?)")
            try:
                out: bytes = inflater.decompress(data, _INFLATE_CHUNK)
            except zlib.error as exc:
                raise _Damage(f"damaged gzip data: {exc}") from exc
            if out:
                return out
        return b""

    def _read_raw(self) -> bytes:
        data = self.fh.read(_READ_CHUNK)
        self.raw_pos += len(data)
        return data

    def _next_member(self) -> None:
        """Make what the finished gzip member left unread the start of the next one."""
        # At the end of a stream ``unconsumed_tail`` repeats a part of ``unused_data``.
        self.pending = self.inflater.unused_data
        self.record_offset = self.raw_pos - len(self.pending)
        self.inflater = None
        self.data, self.pos = b"", 0

    def _skip_blank(self) -> bool:
        """Skip CR/LF bytes; False if the member (or file) ends first."""
        while True:
            data, pos = self.data, self.pos
            while pos < len(data) and data[pos] in b"\r\n":
                pos += 1
            self.pos = pos
            if pos < len(data):
                return True
            if not self._fill():
                return False

    def _start(self) -> bool:
        """Position at the next record (in the current gzip member if it holds more);
        False at the end of the file."""
        while True:
            if self.gz and (self.inflater is None or
                            (self.inflater.eof and not self.available)):
                if self.inflater is not None:
                    self._next_member()
                while len(self.pending) < len(_GZIP_MAGIC) and (more := self._read_raw()):
                    self.pending += more
                head = self.pending[:len(_GZIP_MAGIC)]
                if not head:
                    return False
                if head != _GZIP_MAGIC:
                    raise _Damage("no gzip member starts here")
                self.inflater = zlib.decompressobj(wbits=31)
            if self._skip_blank():
                if not self.gz:
                    self.record_offset = self.raw_pos - self.available
                return True
            if not self.gz:
                return False
            # an empty gzip member: on to the next one

    def _header(self) -> bytes:
        """The record's header block (up to its blank line), taken from the bytes."""
        end = self.data.find(b"\r\n\r\n", self.pos)
        while end < 0:
            if self.available > _MAX_HEADER:
                raise _Damage(f"no end of the WARC header within {_MAX_HEADER} bytes")
            seen = max(self.available - 3, 0)
            if not self._fill():
                raise _Damage("the record ends inside its WARC header")
            end = self.data.find(b"\r\n\r\n", seen)
        header = self.data[self.pos:end + 4]
        self.pos = end + 4
        if not header.startswith(b"WARC/"):
            first = header.split(b"\r\n", 1)[0][:40]
            raise _Damage(f"not a WARC record (it starts {first!r})")
        return header

    def next_record(self, loader: Any, cap: int) -> _Record | None:
        """The next record (None at the end of the file); raises on damage."""
        if not self._start():
            return None
        header = self._header()
        match = _CONTENT_LENGTH.search(header)
        if match is None:
            raise _Damage("the WARC header has no Content-Length")
        if not match[1].isdigit():
            raise _Damage(f"bad Content-Length {match[1][:40]!r}")
        length = int(match[1])
        if not self.gz:
            left = self.size - (self.raw_pos - self.available)
            if length > left:
                raise _Damage(f"Content-Length {length} runs past the end of the file "
                              f"({left} bytes left)")
        content = _Content(self, header, length)
        rec = _read(loader.parse_record_stream(content, known_format="warc"),
                    self.record_offset, cap)
        content.finish()
        # A blank line ends the record (CRLF CRLF; LF alone is accepted), else its
        # Content-Length is wrong; in a gzip member only another record may follow.
        while self.available < 2 and self._fill():
            pass
        if self.available and not self.data.startswith((b"\r\n", b"\n"), self.pos):
            raise _Damage(f"no blank line after the record's {length} bytes: its "
                          "Content-Length is wrong")
        if self._skip_blank() and self.gz and not self._at_record():
            raise _Damage("data after the record in its gzip member")
        return rec

    def _at_record(self) -> bool:
        while self.available < len(_WARC_MAGIC) and self._fill():
            pass
        return self.data.startswith(b"WARC/", self.pos)

    def take(self, n: int, *, line: bool = False) -> bytes:
        """``n`` bytes (up to and with the first LF if ``line``); raises :class:`_Short`
        if the member (or file) ends first."""
        if line:
            while (nl := self.data.find(b"\n", self.pos, self.pos + n)) < 0 and \
                    self.available < n:
                if not self._fill():
                    raise _Short(self.available)
            end = self.pos + n if nl < 0 else nl + 1
            out = self.data[self.pos:end]
            self.pos = end
            return out
        pieces: list[bytes] = []
        while n > 0:
            if not self.available and not self._fill():
                raise _Short(sum(len(p) for p in pieces))
            piece = self.data[self.pos:self.pos + n]
            self.pos += len(piece)
            n -= len(piece)
            pieces.append(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def resync(self, after: int) -> bool:
        """Move to the first record start at or after ``after``; False if none."""
        found = _next_record_start(self.fh, after, self._record_starts_at)
        if found is None:
            return False
        self._goto(found)
        return True

    def _record_starts_at(self, offset: int) -> bool:
        """Whether a record (a gzip member holding one) starts at ``offset``."""
        if self.gz:
            return _gzip_record_at(self.fh, offset)
        self.fh.seek(offset)
        return self.fh.read(len(_WARC_MAGIC)).startswith(b"WARC/")


def _gzip_record_at(fh: BinaryIO, offset: int) -> bool:
    """Whether a gzip member starting at ``offset`` begins with a WARC record (gzip magic
    bytes also occur inside compressed data)."""
    fh.seek(offset)
    try:
        out = zlib.decompressobj(wbits=31).decompress(fh.read(_READ_CHUNK), len(_WARC_MAGIC))
    except zlib.error:
        return False
    return out.startswith(b"WARC/")


class _Content:
    """One record as warcio reads it: its header block, then ``length`` bytes of the
    member (or file) and no more; raises :class:`_Damage` if they run out first."""

    def __init__(self, src: _WarcBytes, header: bytes, length: int) -> None:
        self.src = src
        self.header = io.BytesIO(header)
        self.header_left = len(header)
        self.left = length
        self.length = length

    def _take(self, n: int, line: bool) -> bytes:
        if self.header_left:
            out = self.header.readline(n) if line else self.header.read(n)
            self.header_left -= len(out)
            return out
        n = min(n, self.left)
        if n <= 0:
            return b""
        try:
            out = self.src.take(n, line=line)
        except _Short as short:
            raise _Damage(f"the record ends after {self.length - self.left + short.got} of "
                          f"its Content-Length {self.length} bytes") from None
        self.left -= len(out)
        return out

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            size = self.header_left + self.left
        return self._take(size, line=False)

    def readline(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            size = _MAX_HEADER
        return self._take(min(size, _MAX_HEADER), line=True)

    def finish(self) -> None:
        """Read the rest of the record (so a truncated one is seen as such)."""
        self.header_left = 0
        while self.left:
            self._take(min(self.left, _READ_CHUNK), line=False)


def _next_record_start(fh: BinaryIO, after: int,
                       starts_at: Callable[[int], bool]) -> int | None:
    """Offset of the next gzip member or ``WARC/`` line at or after ``after`` where
    ``starts_at`` confirms a record (gzip magic bytes also occur inside compressed data)."""
    pos = after
    tail = b""
    while True:
        fh.seek(pos)
        chunk = fh.read(_SCAN_CHUNK)
        if not chunk:
            return None
        data = tail + chunk
        base = pos - len(tail)
        i = 0
        while True:
            hits = [j for j in (data.find(_GZIP_MAGIC, i), data.find(b"\n" + _WARC_MAGIC, i))
                    if j >= 0]
            if not hits:
                break
            j = min(hits)
            start = base + j + (1 if data[j:j + 1] == b"\n" else 0)
            if start >= after and starts_at(start):
                return start
            i = j + 1
        tail = data[-8:]
        pos += len(chunk)


def _read(rec: Any, offset: int, cap: int) -> _Record:
    kind = str(rec.rec_type or "")
    uri = rec.rec_headers.get_header("WARC-Target-URI")
    date = _warc_date(rec.rec_headers.get_header("WARC-Date"))
    status = None
    headers: list[tuple[str, str]] = []
    body = b""
    too_large = False
    http = rec.http_headers
    if http is not None and kind in ("response", "revisit"):
        code = http.get_statuscode()
        status = int(code) if code and code.isdigit() else None
        headers = [(str(k), str(v)) for k, v in http.headers]
        if kind == "response":
            body = _payload(rec.raw_stream, http, cap)
            too_large = len(body) > cap
            body = body[:cap]
    return _Record(offset, kind, uri, date, status, headers, body, too_large)


def _payload(raw: Any, http: Any, cap: int) -> bytes:
    """A response's body with its transfer and content codings undone, at most
    ``cap + 1`` bytes, decoded as the fetcher decodes (:class:`BodyDecoder`).

    The record itself is whole (its framing was checked), so a body stored with a
    coding we cannot undo is kept as stored, and one whose compressed data is corrupt
    keeps what decoded before the damage (nothing decoded: as stored).
    """
    from warcio.bufferedreaders import ChunkedDataReader

    if (http.get_header("Transfer-Encoding") or "").strip().lower() == "chunked":
        raw = ChunkedDataReader(raw)
    try:
        decoder = BodyDecoder(http.get_header("Content-Encoding"))
    except UnsupportedCoding:
        decoder = BodyDecoder(None)
    if decoder.identity:
        body: bytes = raw.read(cap + 1)
        return body
    stored: list[bytes] = []
    pieces: list[bytes] = []
    size = 0
    try:
        while size <= cap and (chunk := raw.read(_READ_CHUNK)):
            if not pieces and sum(map(len, stored)) <= cap:
                stored.append(chunk)
            for piece in decoder.feed(chunk):
                pieces.append(piece)
                size += len(piece)
                if size > cap:
                    break
    except CorruptBody:
        if not pieces:
            return b"".join(stored)[:cap + 1]
    return b"".join(pieces)


#: (seq, attempt, status, digest, kind) of a URL's last fetch.
_Last = tuple[int, int, int | None, str | None, FetchKind]


class _Importer:
    """Turns records into store rows (ids, outcomes, links) as the crawler would."""

    def __init__(self, store: CrawlStore, settings: CrawlSettings, stats: WarcImport) -> None:
        self.store = store
        self.settings = settings
        self.stats = stats
        #: the crawl's own URL and host ids (registered as a crawl registers them)
        self.registry = CrawlRegistry()
        self.seq = 0
        self.seeds: list[str] = []
        # url id -> (seq, attempt, status, digest, kind) of its last fetch
        self.last: dict[int, _Last] = {}
        #: the crawl's content-seen test (a copy of an earlier page's body)
        self.seen = ContentSeen()

    def _host(self, url: str) -> int:
        host, new = self.registry.register_host(self.store, url)
        self.stats.hosts += new
        return host

    def _discover(self, url: str, depth: int, found_by: int) -> int:
        known = self.registry.id_of(url)
        if known is not None:
            return known
        new = self.registry.add(url, depth)
        self.registry.record(self.store, new, found_by)
        self.stats.urls += 1
        self.stats.hosts += new.new_host
        return new.url_id

    def handle(self, rec: _Record) -> None:
        self.stats.records += 1
        if rec.kind not in ("response", "revisit") or not rec.uri:
            self.stats.skipped += 1
            return
        url = normalize_url(rec.uri.strip().strip("<>"))
        if url is None:
            self.stats.skipped += 1
            return
        when = rec.date if rec.date is not None else time.time()
        if url.endswith("/robots.txt") and url.count("/") == 3 and "?" not in url:
            self._robots(url, rec, when)
            return
        new = url not in self.registry
        uid = self._discover(url, 0, -1)
        if new:
            self.seeds.append(url)
        previous = self.last.get(uid)
        if rec.kind == "revisit":
            self._revisit(uid, rec, when, previous)
            return
        if previous is not None and previous[4] is FetchKind.CRAWL and \
                (previous[2] is None or previous[2] >= 400):
            # Another try of a URL whose crawl fetch failed: a retry after a 5xx, or a
            # second spelling of the URL (wget requests '%70' and 'p' apart).
            seq, attempt, kind = previous[0], previous[1] + 1, FetchKind.CRAWL
        elif previous is not None:
            seq, attempt, kind = self._next_seq(), 1, FetchKind.REVISIT
        else:
            seq, attempt, kind = self._next_seq(), 1, FetchKind.CRAWL
        self._response(uid, url, rec, when, seq, attempt, kind, previous)

    def _next_seq(self) -> int:
        seq = self.seq
        self.seq += 1
        return seq

    def _robots(self, url: str, rec: _Record, when: float) -> None:
        if rec.kind != "response":
            self.stats.skipped += 1
            return
        host = self._host(url)
        status = rec.status
        ok = status is not None and 200 <= status < 300
        body = decode_body(rec.body[: self.settings.robots_max_size], _charset(rec)) \
            if ok else None
        self.store.update_host(host, robots_status=status, robots_body=body,
                               robots_fetched_at=when)
        self.stats.robots += 1

    def _revisit(self, uid: int, rec: _Record, when: float,
                 previous: _Last | None) -> None:
        status = rec.status if rec.status is not None else (previous[2] if previous else 200)
        # A payload-less record: its status alone (an HTML page the archive saw again).
        outcome = response_outcome(status, location=rec.header("Location"), is_html=True)
        digest = previous[3] if previous else None
        first = previous is None
        seq = self._next_seq()
        self._add_fetch(uid, rec, when, seq, 1, FetchKind.CRAWL if first else FetchKind.REVISIT,
                        outcome, status, digest, changed=None if first else False)
        if first:
            self.store.set_outcome(uid, outcome, seq)
        self.last[uid] = (seq, 1, status, digest,
                          FetchKind.CRAWL if first else FetchKind.REVISIT)

    def _response(self, uid: int, url: str, rec: _Record, when: float, seq: int,
                  attempt: int, kind: FetchKind,
                  previous: _Last | None) -> None:
        status = rec.status
        ctype = (rec.header("Content-Type") or "").partition(";")[0].strip().lower()
        digest = hashlib.blake2b(rec.body, digest_size=16).hexdigest() if rec.body else None
        links: list[int] = []
        nofollow: list[int] = []
        location = rec.header("Location")
        outcome = response_outcome(status, location=location, too_large=rec.too_large,
                                   is_html=is_html(ctype, rec.body))
        if outcome is Outcome.REDIRECT:
            assert location is not None
            target = normalize_url(location, url)
            if target is not None:
                links = [self._discover(target, self.registry.depth(uid), seq)]
        read_links = True
        if outcome is Outcome.FETCHED:
            for page_id, original in self.seen.see(uid, digest):
                self.store.set_duplicate(page_id, original)
            read_links = (self.seen.original(uid) is None
                          or self.settings.links_from_duplicates)
            if read_links:
                links, nofollow = self._page_links(uid, url, rec, seq)
        changed = None
        if kind is FetchKind.REVISIT and previous is not None and digest and previous[3]:
            changed = digest != previous[3]
        self._add_fetch(uid, rec, when, seq, attempt, kind, outcome, status, digest, changed,
                        ctype=ctype)
        if outcome is Outcome.REDIRECT or (outcome is Outcome.FETCHED and read_links):
            self.store.add_links(uid, links, nofollow)
            self.stats.links += len(links)
        if kind is FetchKind.CRAWL:
            self.store.set_outcome(uid, outcome, seq)
        self.last[uid] = (seq, attempt, status, digest, kind)

    def _page_links(self, uid: int, url: str, rec: _Record,
                    seq: int) -> tuple[list[int], list[int]]:
        s = self.settings
        page = extract_links(rec.body, url, charset=_charset(rec),
                             max_links=s.links_max_per_page, agent=s.fetch_robots_agent)
        depth = self.registry.depth(uid) + 1
        return link_ids(page, lambda target, _follow: self._discover(target, depth, seq),
                        obey_meta_nofollow=s.links_obey_meta_nofollow)

    def _add_fetch(self, uid: int, rec: _Record, when: float, seq: int, attempt: int,
                   kind: FetchKind, outcome: Outcome, status: int | None,
                   digest: str | None, changed: bool | None, ctype: str | None = None) -> None:
        if ctype is None:
            ctype = (rec.header("Content-Type") or "").partition(";")[0].strip().lower()
        self.store.add_fetch(FetchRecord(
            url_id=uid, seq=seq, started_at=when, ended_at=when, outcome=outcome,
            status=status, content_type=ctype or None,
            size=len(rec.body) if rec.kind == "response" else None, digest=digest,
            etag=rec.header("ETag"), last_modified=rec.header("Last-Modified"),
            attempt=attempt, kind=kind, strategy="warc", changed=changed))
        self.stats.fetches += 1
        if kind is FetchKind.REVISIT:
            self.stats.revisits += 1
        self.stats.outcomes[str(outcome)] = self.stats.outcomes.get(str(outcome), 0) + 1


def _charset(rec: _Record) -> str | None:
    ctype = rec.header("Content-Type") or ""
    for param in ctype.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip('"\'') or None
    return None


def import_warc(
    files: Sequence[str | Path],
    db: str | Path,
    *,
    skip_bad: bool = False,
    settings: CrawlSettings | None = None,
    progress: bool | TextIO = False,
) -> WarcImport:
    """Import WARC files into a new crawl database (see the module docstring).

    Parameters
    ----------
    files : sequence of path
        WARC files (``.warc`` or ``.warc.gz``, gzip per record), read in order.
    db : str or Path
        The crawl database to create.
    skip_bad : bool, default False
        Skip damaged records (each reported on the progress stream and in the
        result's ``bad_offsets``) instead of stopping at the first.
    settings : CrawlSettings, optional
        Link extraction (``links_*``, ``fetch_robots_agent``) and the body cap
        (``fetch_max_body``, ``robots_max_size``), as in a crawl.
    progress : bool or text stream
        Progress on stderr (True) or on the given stream, through the crawl's one
        display (:class:`webcrawl.crawler.progress.StatusLine`): redrawn in place every
        ``settings.progress_interval`` seconds on a terminal, a plain line every
        ``settings.progress_log_interval`` seconds elsewhere.

    Returns
    -------
    WarcImport

    Raises
    ------
    InputFormatError
        A damaged record (without ``skip_bad``); nothing is written.
    ConfigError
        A file is missing.
    StoreError
        ``db`` already exists or cannot be written (nothing is left behind).
    """
    paths = [Path(f) for f in files]
    for p in paths:
        if not p.is_file():
            raise ConfigError(f"no such WARC file: {p}")
    settings = settings or CrawlSettings()
    stream: TextIO | None = (sys.stderr if progress is True else
                             None if progress is False else progress)
    with new_database(db) as temp:
        return eventloop.run(_import(paths, temp, skip_bad, settings, stream))


async def _import(paths: list[Path], db: Path, skip_bad: bool, settings: CrawlSettings,
                  stream: TextIO | None) -> WarcImport:
    stats = WarcImport()
    t0 = time.monotonic()
    total = sum(p.stat().st_size for p in paths)
    store = await CrawlStore.open(db, batch_size=settings.store_batch_size,
                                  flush_interval=settings.store_flush_interval)
    importer = _Importer(store, settings, stats)
    status = None if stream is None else StatusLine(
        stream, interval=settings.progress_interval,
        log_interval=settings.progress_log_interval)
    complete = False
    try:
        store.set_meta("source", "warc")
        store.set_meta("warc_files", json.dumps([str(p) for p in paths]))
        store.set_meta("strategy", "warc")
        done = 0
        for path in paths:
            def on_bad(offset: int, reason: str, path: Path = path) -> None:
                stats.bad += 1
                stats.bad_offsets.append((str(path), offset, reason))
                if status is not None:
                    status.message(f"webcrawl: skipped a damaged WARC record in {path} at "
                                   f"offset {offset} ({reason})")
            for rec in _records(path, settings.fetch_max_body, skip_bad, on_bad):
                importer.handle(rec)
                _testhooks.kill_at("warc_record")  # test-only: a kill -9 after N records
                stats.bytes_read = done + rec.offset
                if stats.records % 256 == 0:
                    await store.drain()
                    if status is not None and status.due():
                        status.show(_line(stats, total, time.monotonic() - t0))
            done += path.stat().st_size
        stats.bytes_read = total
        store.set_meta("seeds", json.dumps(importer.seeds[:1000]))
        complete = True
    finally:
        stats.seconds = time.monotonic() - t0
        try:
            await store.aclose()
        finally:
            if status is not None and status.terminal:
                status.clear()  # the caller prints the summary (or the error) in its place
            elif status is not None and status.enabled and complete:
                status.show(_line(stats, total, stats.seconds))  # the last state, logged
    return stats


def _line(stats: WarcImport, total: int, elapsed: float) -> str:
    """The import's status: share of the bytes read, records, fetches, links."""
    pct = 100.0 * stats.bytes_read / total if total else 100.0
    rate = stats.records / elapsed if elapsed > 0 else 0.0
    return (f"{pct:5.1f}%  {stats.records:>9,} records  {rate:7.0f} records/s  "
            f"{stats.fetches:>9,} fetches  {stats.links:>10,} links  bad {stats.bad}")
