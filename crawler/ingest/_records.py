"""Reading the records of a WARC file, each checked against its framing (private:
the WARC import, :mod:`webcrawl.crawler.ingest.warc`, turns them into crawl rows).

Damage: every record is checked against its framing (see :class:`_WarcBytes`): a gzip
member that does not decompress to its end with the right CRC and length, a file cut
short, a header that is no WARC header, a ``Content-Length`` the record does not have
or that does not end where the record ends.  A damaged record raises
:class:`~webcrawl.storage.errors.InputFormatError` naming the file and the record's
byte offset (of its gzip member); with ``skip_bad`` it is counted (``bad``), reported
and the import resumes at the next record start (the next gzip member, or the next
``WARC/1.`` line, that holds one).  ``bad`` counts damaged stretches: one damaged record,
or several when the damage also destroyed the start of the next ones.

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
import io
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from webcrawl.crawler.codings import BodyDecoder, CorruptBody, UnsupportedCoding, listed_codings
from webcrawl.storage.errors import InputFormatError

__all__ = ["Record", "read_record", "read_record_at", "read_records"]

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
class Record:
    """What the importer needs of one WARC record (payload capped)."""

    offset: int
    kind: str                     # WARC-Type
    uri: str | None
    date: float | None
    status: int | None
    headers: list[tuple[str, str]]
    body: bytes
    too_large: bool
    payload_digest: str | None = None  # WARC-Payload-Digest
    profile: str | None = None         # WARC-Profile (revisit records)

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


def read_records(path: Path, cap: int, skip_bad: bool,
             on_bad: Callable[[int, str], None]) -> Iterator[Record]:
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


def read_record_at(path: Path, offset: int, cap: int) -> Record | None:
    """The record at ``offset`` of ``path`` (an offset :func:`read_records` gave), or
    None when it cannot be read there any more (the file changed or is damaged)."""
    from warcio.exceptions import ArchiveLoadFailed
    from warcio.recordloader import ArcWarcRecordLoader
    from warcio.statusandheaders import StatusAndHeadersParserException

    loader = ArcWarcRecordLoader(verify_http=False, arc2warc=False)
    try:
        with open(path, "rb") as fh:
            src = _WarcBytes(fh, path.stat().st_size)
            src._goto(offset)
            return src.next_record(loader, cap)
    except (OSError, _Damage, ArchiveLoadFailed, StatusAndHeadersParserException, *_DAMAGE):
        return None


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

    def next_record(self, loader: Any, cap: int) -> Record | None:
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
        rec = read_record(loader.parse_record_stream(content, known_format="warc"),
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


def read_record(rec: Any, offset: int, cap: int) -> Record:
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
    return Record(offset, kind, uri, date, status, headers, body, too_large,
                  rec.rec_headers.get_header("WARC-Payload-Digest"),
                  rec.rec_headers.get_header("WARC-Profile"))


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
        decoder = BodyDecoder(listed_codings(http.headers, "content-encoding"))
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
