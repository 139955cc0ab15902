"""WARC output of a crawl (``webcrawl crawl|revisit --warc DIR``), written with warcio.

The :class:`~webcrawl.crawler.fetcher.Fetcher` hands every HTTP exchange it completes (pages,
retries, redirects, robots.txt, revisits) to :meth:`WarcArchive.record`, which appends
to the current file of ``settings.warc_dir``:

* a ``request`` record (the request line and headers as sent), and
* a ``response`` record (status line, headers, body), or, for a ``304 Not Modified``,
  a ``revisit`` record with the WARC 1.1 *server-not-modified* profile (headers only),
  or, for a body stored already (``warc_dedup``: a previous crawl's database or CDX(J)
  index; ``warc_dedup_repeats``: this crawl's earlier records), a ``revisit`` record
  with the *identical-payload-digest* profile that refers to the stored one
  (``WARC-Refers-To-Target-URI``, ``WARC-Refers-To-Date``, ``WARC-Payload-Digest``,
  the HTTP headers, no payload; :mod:`webcrawl.crawler.warc_dedup`);
  request and response refer to each other (``WARC-Concurrent-To``).

A resumed crawl (or a shard worker started again) first reads back the payloads the
crawl's earlier files hold, its shard workers' too (:meth:`WarcArchive.recall`).
``revisits`` counts the identical-payload revisit records, ``bytes_not_stored`` the
body bytes they did not store again.  With ``warc_cdxj``, each WARC file gets a CDXJ
index of its ``response`` and ``revisit`` records beside it (same name, ``.cdxj``;
:mod:`webcrawl.crawler.cdxj`), written sorted when the file is closed (through a
temporary file renamed into place: an index is whole or absent).

Files are WARC/1.1, gzip per record, named ``{prefix}-{UTC time}-{serial:05d}.warc.gz``
(never over an existing file: a run started in the same second as an earlier one, a
quick resume, takes the next free serial), each starting with a ``warcinfo`` record
that holds the crawl's settings (JSON); a file is closed and the next one started once
it reaches ``warc_max_size`` bytes (1 GB by default, the size Heritrix and wget use).
``WARC-Date`` is the request's start, to the microsecond.

Bodies are stored as the crawler read them: decoded (gzip, deflate, br undone), so
the response's ``Content-Encoding`` and ``Transfer-Encoding`` headers are dropped and
``Content-Length`` is the stored length; a body cut at ``fetch_max_body`` carries
``WARC-Truncated: length``.  A failed exchange (no response) writes nothing.  Writes
are synchronous (one compressed record is small next to a fetch).

A file holds whole records only: each exchange's records are compressed in memory and
written with one call; a write that fails (a full disk, a file size limit) cuts the file
back to its last whole record (a file left without one is removed), and the archive
raises :class:`~webcrawl.storage.errors.CrawlError` naming the file, then and at every
later call: the crawl stops with one line, and every WARC it leaves reads to its end.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from webcrawl.crawler.cdxj import cdxj_line
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.warc_dedup import (
    PayloadIndex,
    StoredPayload,
    payload_digest,
    stored_payloads,
    warc_date,
)
from webcrawl.storage import _testhooks
from webcrawl.storage.errors import ConfigError, CrawlError

__all__ = ["IDENTICAL_PAYLOAD_PROFILE", "NOT_MODIFIED_PROFILE", "WarcArchive", "WarcCounts"]

#: ``WARC-Profile`` of a revisit record for a 304 answer (WARC 1.1, section 6.7.3).
NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
#: ``WARC-Profile`` of a revisit record for a payload stored already (section 6.7.2).
IDENTICAL_PAYLOAD_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
_DROPPED = frozenset(("content-encoding", "transfer-encoding", "content-length"))


@dataclass(frozen=True, slots=True)
class WarcCounts:
    """What a crawl's archive wrote: records, identical-payload revisit records among
    them, and the body bytes those did not store again."""

    records: int = 0
    revisits: int = 0
    bytes_not_stored: int = 0

    def __add__(self, other: WarcCounts) -> WarcCounts:
        """The counts of two archives together (a sharded crawl's workers)."""
        return WarcCounts(self.records + other.records, self.revisits + other.revisits,
                          self.bytes_not_stored + other.bytes_not_stored)

    def as_dict(self) -> dict[str, int]:
        """``records``, ``revisits``, ``bytes_not_stored`` (a summary's ``--json``)."""
        return {"records": self.records, "revisits": self.revisits,
                "bytes_not_stored": self.bytes_not_stored}


class WarcArchive:
    """Appends HTTP exchanges to rotating WARC files in ``settings.warc_dir``."""

    def __init__(self, settings: CrawlSettings, *, software: str = "webcrawl") -> None:
        if settings.warc_dir is None:
            raise ConfigError("WarcArchive needs settings.warc_dir")
        self.settings = settings
        self.directory = Path(settings.warc_dir)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CrawlError(f"cannot create the WARC folder {self.directory}: "
                             f"{exc.strerror or exc}") from exc
        self.software = software
        self.files: list[Path] = []
        self.records = 0
        #: identical-payload revisit records written, and the body bytes they saved
        self.revisits = 0
        self.bytes_not_stored = 0
        self.payloads: PayloadIndex | None = None
        if settings.warc_dedup is not None:
            self.payloads = PayloadIndex.load(settings.warc_dedup)
        elif settings.warc_dedup_repeats:
            self.payloads = PayloadIndex()
        self._index: list[str] | None = [] if settings.warc_cdxj else None
        self._out: BinaryIO | None = None
        self._size = 0                    # bytes of whole records in the current file
        self._buffer = io.BytesIO()       # the records being written, compressed
        self._failed: CrawlError | None = None
        self._writer: Any = None
        self._stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%d%H%M%S")
        self._serial = 0

    # -- files ----------------------------------------------------------------------
    def _open(self) -> Any:
        from warcio.warcwriter import WARCWriter

        while True:
            name = f"{self.settings.warc_prefix}-{self._stamp}-{self._serial:05d}.warc.gz"
            path = self.directory / name
            self._serial += 1
            try:
                # Unbuffered: whole records go out in one write each (see _write).
                self._out = open(path, "xb", buffering=0)  # noqa: SIM115 (closed in _close)
            except FileExistsError:
                continue  # a run started in the same second (a quick resume): next serial
            except OSError as exc:
                raise CrawlError(f"cannot write {path}: {exc.strerror or exc}") from exc
            break
        self.files.append(path)
        self._size = 0
        self._writer = WARCWriter(self._buffer, gzip=True, warc_version="1.1")
        info = {"software": self.software, "format": "WARC File Format 1.1",
                "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
                              "warc-format/warc-1.1/",
                "isPartOf": self.settings.warc_prefix,
                "webcrawl-settings": json.dumps(_settings_dict(self.settings),
                                                sort_keys=True)}
        self._writer.write_record(self._writer.create_warcinfo_record(path.name, info))
        self._write()
        return self._writer

    def _write(self) -> None:
        """Append the buffered records to the file in one write; on a failure, cut the
        file back to its last whole record and raise (see the module docstring)."""
        data = self._buffer.getvalue()  # a copy: a pair of records, a few kB
        self._buffer.seek(0)
        self._buffer.truncate()
        out = self._out
        assert out is not None
        try:
            done = 0
            while done < len(data):
                done += out.write(data[done:]) or 0
        except OSError as exc:
            path = self.files[-1]
            self._failed = CrawlError(f"writing {path} failed: {exc.strerror or exc}")
            with contextlib.suppress(OSError):
                os.ftruncate(out.fileno(), self._size)  # frees what the failed write took
            self._close()
            if self._size == 0:
                path.unlink(missing_ok=True)
                self.files.pop()
            raise self._failed from exc
        self._size += done

    def _close(self) -> None:
        out, self._out, self._writer = self._out, None, None
        if out is not None:
            with contextlib.suppress(OSError):  # unbuffered: nothing is left to write
                out.close()
            if self._index is not None and self.files and self.files[-1].exists():
                self._write_index(self.files[-1])

    def _write_index(self, warc: Path) -> None:
        """The CDXJ index of the file just closed, sorted, renamed into place."""
        lines, self._index = sorted(self._index or ()), []
        final = warc.with_name(warc.name.removesuffix(".warc.gz") + ".cdxj")
        temp = final.with_name(final.name + ".tmp")
        try:
            temp.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
            os.replace(temp, final)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            self._failed = self._failed or CrawlError(
                f"writing {final} failed: {exc.strerror or exc}")
            raise self._failed from exc

    def close(self) -> None:
        """Close the current file (idempotent)."""
        self._close()

    def recall(self, crawl_prefix: str | None = None) -> int:
        """A resumed crawl's repeats (``warc_dedup_repeats``): remember every payload
        that the folder's earlier files of this crawl hold in a whole record
        (:func:`~webcrawl.crawler.warc_dedup.stored_payloads`), so that it is not stored
        again.  The crawl's files are those of ``crawl_prefix`` (default: this
        archive's prefix) and of its shard workers' series (``{crawl_prefix}-w{N}``):
        a crawl resumed with another ``--workers`` count, or a shard worker started
        again, reads what every earlier process of the crawl stored.  Returns how many
        such records it found; call it before the first record (it is a resume's: a
        new crawl's folder may hold another crawl's files)."""
        if self.payloads is None or not self.settings.warc_dedup_repeats:
            return 0
        prefix = re.escape(crawl_prefix or self.settings.warc_prefix)
        own = re.compile(rf"{prefix}(?:-w\d+)?-\d{{14}}-\d{{5}}\.warc\.gz")
        earlier = sorted(p for p in self.directory.iterdir()
                         if own.fullmatch(p.name) and p not in self.files)
        found = 0
        for digest, stored in stored_payloads(earlier):
            self.payloads.add(digest, stored)
            found += 1
        return found

    @property
    def counts(self) -> WarcCounts:
        return WarcCounts(self.records, self.revisits, self.bytes_not_stored)

    # -- records --------------------------------------------------------------------
    def record(self, url: str, *, started_at: float, request_headers: Sequence[tuple[str, str]],
               status: int, reason: str | None, headers: Sequence[tuple[str, str]],
               body: bytes, truncated: bool) -> None:
        """Append one exchange: its request, and its response (or a revisit record: a
        304's, or one for a payload stored already)."""
        from warcio.statusandheaders import StatusAndHeaders

        if self._failed is not None:
            raise self._failed
        writer = self._writer or self._open()
        date = warc_date(started_at)
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        req_headers = [("Host", parts.netloc)] + [
            (k, v) for k, v in request_headers if k.lower() != "host"]
        request = writer.create_warc_record(
            url, "request", warc_headers_dict={"WARC-Date": date},
            http_headers=StatusAndHeaders(f"GET {target} HTTP/1.1", req_headers,
                                          is_http_request=True))
        kept = [(k, v) for k, v in headers if k.lower() not in _DROPPED]
        status_line = f"{status} {reason or ''}".strip()
        # Only whole, non-empty bodies are looked up (see webcrawl.crawler.warc_dedup).
        digest = payload_digest(body) if self.payloads is not None and body and \
            not truncated and status != 304 else None
        stored = self.payloads.find(digest, body) \
            if self.payloads is not None and digest is not None else None
        if status == 304:
            response = writer.create_warc_record(
                url, "revisit",
                warc_headers_dict={"WARC-Date": date, "WARC-Profile": NOT_MODIFIED_PROFILE},
                http_headers=StatusAndHeaders(status_line, kept, protocol="HTTP/1.1"))
        elif stored is not None and digest is not None:
            kept.append(("Content-Length", str(len(body))))
            response = writer.create_revisit_record(
                url, digest, stored.url, stored.date,
                http_headers=StatusAndHeaders(status_line, kept, protocol="HTTP/1.1"),
                warc_headers_dict={"WARC-Date": date})
            if stored.record_id is not None:
                response.rec_headers.add_header("WARC-Refers-To", stored.record_id)
        else:
            kept.append(("Content-Length", str(len(body))))
            extra = {"WARC-Date": date}
            if truncated:
                extra["WARC-Truncated"] = "length"
            if digest is not None:
                extra["WARC-Payload-Digest"] = digest  # computed once, for both uses
            response = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body),
                warc_headers_dict=extra,
                http_headers=StatusAndHeaders(status_line, kept, protocol="HTTP/1.1"))
        response_id = response.rec_headers.get_header("WARC-Record-ID")
        request.rec_headers.add_header("WARC-Concurrent-To", response_id)
        writer.write_record(request)
        offset = self._size + self._buffer.tell()
        writer.write_record(response)
        length = self._size + self._buffer.tell() - offset
        self._write()
        _testhooks.kill_at("warc_exchange")  # test-only: a kill -9 after N exchanges
        self.records += 2
        if stored is not None:
            self.revisits += 1
            self.bytes_not_stored += len(body)
        elif digest is not None and self.payloads is not None \
                and self.settings.warc_dedup_repeats:
            self.payloads.add(digest, StoredPayload(url, date, response_id))
        if self._index is not None:
            self._index.append(self._index_line(url, response, offset, length))
        if self._size >= self.settings.warc_max_size:
            self._close()

    def _index_line(self, url: str, record: Any, offset: int, length: int) -> str:
        http = record.http_headers
        code = http.get_statuscode() if http is not None else None
        revisit = record.rec_type == "revisit"
        mime = "warc/revisit" if revisit else \
            (http.get_header("Content-Type") or "").partition(";")[0].strip()
        return cdxj_line(url, record.rec_headers.get_header("WARC-Date"), mime=mime,
                         status=int(code) if code and code.isdigit() else None,
                         digest=record.rec_headers.get_header("WARC-Payload-Digest"),
                         length=length, offset=offset, filename=self.files[-1].name)


def _settings_dict(settings: CrawlSettings) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in fields(settings)}
