"""Bounded streaming decoders for HTTP content and transfer codings (gzip, deflate, br).

A compressed body can inflate a thousand times or more (a 1 MB gzip response may hold
1 GiB of zeros), so the fetcher never lets the HTTP library inflate a whole body: it
reads the raw bytes and pushes them through :class:`BodyDecoder`, which hands out the
decoded bytes in pieces of at most :data:`PIECE` bytes.  The caller stops pulling at
its cap, so memory stays bounded by the cap (plus one piece and the decompressors'
windows, 32 KiB for zlib and at most 16 MiB for brotli's) whatever the ratio, and the
CPU spent on one body is bounded by the cap too.

Codings are applied in the order the server listed them, so they are undone in
reverse (RFC 9110 section 8.4); ``identity`` and an absent header pass bytes through.
A header sent on several lines lists the codings of all of them, in order
(:func:`listed_codings`; RFC 9110 section 5.3), as curl reads it; like curl, at most
:data:`MAX_CODINGS` codings are undone per header (a longer chain is refused: each
stage costs a decompressor's memory, whatever the cap).
Transfer codings (``Transfer-Encoding: gzip, chunked``, RFC 9112 section 6.1) were
applied after the content codings and are undone first, under the same bounds;
``chunked`` is the HTTP parser's, not ours.  An unknown coding raises
:class:`UnsupportedCoding`; corrupt data raises :class:`CorruptBody` (the fetcher turns
both into a network error).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

__all__ = ["ACCEPT_ENCODING", "MAX_CODINGS", "PIECE", "BodyDecoder", "CorruptBody",
           "UnsupportedCoding", "listed_codings"]

#: decoded bytes produced per step at most
PIECE = 1 << 16
#: codings listed in one header (all its lines) at most, ``identity`` included: curl's
#: limit since CVE-2023-23916 (lib/content_encoding.c, "no more than 5 chained
#: compression steps"; curl 7.88.1 decodes five over any number of lines, refuses six)
MAX_CODINGS = 5

try:  # brotli is optional: offered only when it can be decoded
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

#: the Accept-Encoding the fetcher sends: exactly the codings decoded here
ACCEPT_ENCODING = "gzip, deflate, br" if _brotli is not None else "gzip, deflate"


class UnsupportedCoding(ValueError):
    """A content or transfer coding we did not offer and cannot decode."""


class CorruptBody(ValueError):
    """Compressed data that does not decode."""


class _Stage(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]: ...


class _Zlib:
    """gzip (wbits 47 also accepts a zlib header) or deflate (zlib-wrapped or raw)."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._d: Any = zlib.decompressobj(47) if gzip else None
        self._done = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._d is None:  # deflate: RFC 9110 says zlib, some servers send raw deflate
            if not data:
                return
            zlib_header = len(data) >= 2 and data[0] & 0x0F == 8 and \
                ((data[0] << 8) | data[1]) % 31 == 0
            self._d = zlib.decompressobj(15 if zlib_header else -15)
        try:
            while data and not self._done:
                out = self._d.decompress(data, PIECE)
                data = self._d.unconsumed_tail
                if out:
                    yield out
                if self._d.eof:
                    rest = self._d.unused_data
                    if self._gzip and rest.lstrip(b"\0"):
                        # another gzip member (RFC 1952 allows concatenation)
                        self._d = zlib.decompressobj(47)
                        data = rest.lstrip(b"\0")
                    else:
                        self._done = True
        except zlib.error as exc:
            raise CorruptBody(f"bad {'gzip' if self._gzip else 'deflate'} data: {exc}") \
                from exc


class _Brotli:
    def __init__(self) -> None:
        assert _brotli is not None
        self._d = _brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        d = self._d
        try:
            if d.is_finished():
                return
            out = d.process(data, output_buffer_limit=PIECE)
            while out:  # the limit is soft: slice, then drain what is still pending
                for start in range(0, len(out), PIECE):
                    yield out[start:start + PIECE]
                out = b"" if d.is_finished() else d.process(b"", output_buffer_limit=PIECE)
        except _brotli.error as exc:
            raise CorruptBody(f"bad brotli data: {exc}") from exc


def listed_codings(headers: Sequence[tuple[str, str]], name: str) -> str:
    """The codings of every ``name`` line of ``headers`` (``name`` lower-case), as one list.

    >>> listed_codings([("Content-Encoding", "gzip"), ("Vary", "x"),
    ...                 ("content-encoding", "br")], "content-encoding")
    'gzip, br'
    """
    return ", ".join(value for key, value in headers if key.lower() == name)


def _codings(value: str, header: str) -> list[str]:
    codings = [c for c in (c.strip().lower() for c in value.split(",")) if c]
    if len(codings) > MAX_CODINGS:
        raise UnsupportedCoding(f"more than {MAX_CODINGS} codings in {header}")
    return codings


def _stage(coding: str, header: str) -> _Stage | None:
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return _Zlib(gzip=True)
    if coding == "deflate":
        return _Zlib(gzip=False)
    if coding == "br" and _brotli is not None:
        return _Brotli()
    raise UnsupportedCoding(f"unsupported {header} {coding!r}")


class BodyDecoder:
    """Undo a ``Transfer-Encoding`` (but chunked) then a ``Content-Encoding`` header's
    codings, a bounded piece at a time.

    >>> import gzip
    >>> dec = BodyDecoder("gzip")
    >>> pieces = list(dec.feed(gzip.compress(b"x" * 200_000)))
    >>> max(map(len, pieces)) <= PIECE, sum(map(len, pieces))
    (True, 200000)
    >>> b"".join(BodyDecoder(None, "gzip, chunked").feed(gzip.compress(b"abc")))
    b'abc'
    """

    def __init__(self, content_encoding: str | None,
                 transfer_encoding: str | None = None) -> None:
        codings = _codings(content_encoding, "Content-Encoding") if content_encoding else []
        stages = [_stage(c, "Content-Encoding") for c in reversed(codings)]
        if transfer_encoding:  # applied after the content codings: undone before them
            codings = _codings(transfer_encoding, "Transfer-Encoding")
            stages[:0] = [_stage(c, "Transfer-Encoding") for c in reversed(codings)
                          if c != "chunked"]
        self._stages: list[_Stage] = [s for s in stages if s is not None]

    @property
    def identity(self) -> bool:
        return not self._stages

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded pieces (each at most :data:`PIECE` bytes) of the next raw bytes."""
        yield from self._through(0, data)

    def _through(self, i: int, data: bytes) -> Iterator[bytes]:
        if i == len(self._stages):
            for start in range(0, len(data), PIECE):
                yield data[start:start + PIECE]
            return
        for piece in self._stages[i].feed(data):
            yield from self._through(i + 1, piece)
