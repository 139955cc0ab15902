"""WARC output of a crawl (``webcrawl crawl|revisit --warc DIR``), written with warcio.

The :class:`~webcrawl.crawler.fetcher.Fetcher` hands every HTTP exchange it completes (pages,
retries, redirects, robots.txt, revisits) to :meth:`WarcArchive.record`, which appends
to the current file of ``settings.warc_dir``:

* a ``request`` record (the request line and headers as sent), and
* a ``response`` record (status line, headers, body), or, for a ``304 Not Modified``,
  a ``revisit`` record with the WARC 1.1 *server-not-modified* profile (headers only);
  request and response refer to each other (``WARC-Concurrent-To``).

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
"""

from __future__ import annotations

import datetime as _dt
import io
import json
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import ConfigError, CrawlError

__all__ = ["NOT_MODIFIED_PROFILE", "WarcArchive"]

#: ``WARC-Profile`` of a revisit record for a 304 answer (WARC 1.1, section 6.7.3).
NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
_DROPPED = frozenset(("content-encoding", "transfer-encoding", "content-length"))


def _warc_date(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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
        self._out: BinaryIO | None = None
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
                self._out = open(path, "xb")  # noqa: SIM115 (closed in _close)
            except FileExistsError:
                continue  # a run started in the same second (a quick resume): next serial
            except OSError as exc:
                raise CrawlError(f"cannot write {path}: {exc.strerror or exc}") from exc
            break
        self.files.append(path)
        self._writer = WARCWriter(self._out, gzip=True, warc_version="1.1")
        info = {"software": self.software, "format": "WARC File Format 1.1",
                "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
                              "warc-format/warc-1.1/",
                "isPartOf": self.settings.warc_prefix,
                "webcrawl-settings": json.dumps(_settings_dict(self.settings),
                                                sort_keys=True)}
        self._writer.write_record(self._writer.create_warcinfo_record(path.name, info))
        return self._writer

    def _close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
            self._writer = None

    def close(self) -> None:
        """Close the current file (idempotent)."""
        self._close()

    # -- records --------------------------------------------------------------------
    def record(self, url: str, *, started_at: float, request_headers: Sequence[tuple[str, str]],
               status: int, reason: str | None, headers: Sequence[tuple[str, str]],
               body: bytes, truncated: bool) -> None:
        """Append one exchange: its request, and its response (or a 304's revisit)."""
        from warcio.statusandheaders import StatusAndHeaders

        writer = self._writer or self._open()
        date = _warc_date(started_at)
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
        if status == 304:
            response = writer.create_warc_record(
                url, "revisit",
                warc_headers_dict={"WARC-Date": date, "WARC-Profile": NOT_MODIFIED_PROFILE},
                http_headers=StatusAndHeaders(status_line, kept, protocol="HTTP/1.1"))
        else:
            kept.append(("Content-Length", str(len(body))))
            extra = {"WARC-Date": date}
            if truncated:
                extra["WARC-Truncated"] = "length"
            response = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body),
                warc_headers_dict=extra,
                http_headers=StatusAndHeaders(status_line, kept, protocol="HTTP/1.1"))
        response_id = response.rec_headers.get_header("WARC-Record-ID")
        request.rec_headers.add_header("WARC-Concurrent-To", response_id)
        try:
            writer.write_record(request)
            writer.write_record(response)
            assert self._out is not None
            size = self._out.tell()
        except OSError as exc:
            raise CrawlError(f"writing {self.files[-1]} failed: {exc.strerror or exc}") from exc
        self.records += 2
        if size >= self.settings.warc_max_size:
            self._close()


def _settings_dict(settings: CrawlSettings) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in fields(settings)}
