"""Payloads a crawl's WARC need not store again (``warc_dedup``, ``warc_dedup_repeats``).

:class:`PayloadIndex` answers, for a response body about to be archived, where an
identical payload is stored already, so that :class:`~webcrawl.crawler.archive.WarcArchive`
writes a ``revisit`` record with the WARC 1.1 *identical-payload-digest* profile
(ISO 28500:2017, section 6.7.2: ``WARC-Refers-To-Target-URI``, ``WARC-Refers-To-Date``,
``WARC-Payload-Digest``, the HTTP headers, no payload) instead of a ``response`` record.

It holds, per payload digest, the first record known to carry that payload (its URL,
its ``WARC-Date`` and, within this crawl, its ``WARC-Record-ID``), from

* a previous crawl's database (``warc_dedup = "previous.db"``): every fetch that read
  a whole body (:meth:`~webcrawl.storage.reader.CrawlReader.payload_digests`); the
  database keeps our own body digest (BLAKE2b-128 of the decoded body, ``fetches.digest``),
  so bodies are matched on it and the revisit's ``WARC-Date`` reference is the fetch's
  start, which is the ``WARC-Date`` its WARC record got.  robots.txt answers are no
  fetches there: they are taken from the CDXJ indexes that crawl wrote beside its
  WARCs (``warc_cdxj``; its stored ``warc_dir`` and ``warc_prefix``), and stored again
  (one per host) when it wrote none;
* a CDXJ or CDX index of a WARC collection (any other file; :mod:`webcrawl.crawler.cdxj`):
  bodies are matched on the index's SHA-1 payload digest, which is what a WARC writer
  puts in ``WARC-Payload-Digest`` (ours and warcio's: of the payload as stored, here
  the decoded body);
* the crawl itself (``warc_dedup_repeats``): every response record it writes, and, when
  it resumes (or a shard worker is started again after a loss), every response record
  its earlier runs left in the folder (:func:`stored_payloads`: the files of the
  archive's own prefix, read back).  Only a record read back whole counts: its payload
  must hash to its ``WARC-Payload-Digest`` (a record cut by a kill -9 or a full disk
  does not, and neither does anything after it in that file).  This reads every earlier
  file of the prefix once.

Only whole bodies count (a body cut at ``fetch_max_body`` is stored as read), and
empty bodies are never deduplicated (a revisit record is no smaller).  Memory: about
200 bytes per distinct payload (URL and date strings), held for the crawl's run.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import logging
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from webcrawl.crawler.cdxj import CdxEntry, read_cdx_digests
from webcrawl.storage.errors import ConfigError, InputFormatError, StoreError

__all__ = ["PayloadIndex", "StoredPayload", "payload_digest", "stored_payloads", "warc_date"]

_SQLITE_MAGIC = b"SQLite format 3\x00"

log = logging.getLogger(__name__)


def warc_date(ts: float) -> str:
    """A Unix time as ``WARC-Date`` (UTC, to the microsecond)."""
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def payload_digest(body: bytes) -> str:
    """``WARC-Payload-Digest`` of ``body``: ``sha1:`` and the base-32 SHA-1, as warcio,
    wget and Heritrix write it."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


@dataclass(frozen=True, slots=True)
class StoredPayload:
    """Where a payload is stored already: what a revisit record refers to."""

    url: str
    date: str                     # its record's WARC-Date
    record_id: str | None = None  # its WARC-Record-ID, when known (this crawl's records)


class PayloadIndex:
    """Payload digest -> the first record known to hold it (see the module docstring)."""

    def __init__(self) -> None:
        self._sha1: dict[str, StoredPayload] = {}
        self._ours: dict[str, StoredPayload] = {}  # BLAKE2b-128 hex (a crawl database's)

    def __len__(self) -> int:
        return len(self._sha1) + len(self._ours)

    @classmethod
    def load(cls, path: str | Path) -> PayloadIndex:
        """The payloads of a previous crawl's database or of a CDX(J) index file.

        Raises :class:`ConfigError` for a missing file,
        :class:`~webcrawl.storage.errors.InputFormatError` for a line that is no index
        line, :class:`StoreError` for a damaged database."""
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"no previous crawl or CDX index at {path} (--warc-dedup)")
        index = cls()
        with open(path, "rb") as fh:
            is_db = fh.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
        if is_db:
            index._load_database(path)
        else:
            for entry in read_cdx_digests(path):
                index._add_cdx(entry)
        return index

    def _load_database(self, path: Path) -> None:
        from webcrawl.storage.reader import CrawlReader

        try:
            reader = CrawlReader(path)
        except StoreError as exc:
            raise StoreError(f"--warc-dedup: {exc}") from exc
        with reader:
            for digest, url, started_at in reader.payload_digests():
                if digest not in self._ours:
                    self._ours[digest] = StoredPayload(url, warc_date(started_at))
            meta = reader.meta()
        self._load_robots(meta)

    def _load_robots(self, meta: dict[str, str]) -> None:
        """robots.txt answers, which are no fetches in a crawl database, from the CDXJ
        indexes the crawl wrote beside its WARCs (``warc_cdxj``), when they are there."""
        from webcrawl.crawler.config import stored_settings
        from webcrawl.crawler.settings import CrawlSettings

        try:
            settings = stored_settings(meta)
        except ConfigError:
            return
        folder = settings.get("warc_dir")
        if not folder or not Path(folder).is_dir():
            return
        prefix = re.escape(settings.get("warc_prefix", CrawlSettings().warc_prefix))
        own = re.compile(rf"{prefix}(-w\d+)?-\d{{14}}-\d{{5}}\.cdxj")
        for index in sorted(Path(folder).iterdir()):
            if not own.fullmatch(index.name):
                continue
            try:
                entries = [e for e in read_cdx_digests(index)
                           if urlsplit(e.url).path == "/robots.txt"]
            except (OSError, InputFormatError) as exc:
                log.warning("--warc-dedup: %s not read (%s): its robots.txt answers are "
                            "stored again", index, exc)
                continue
            for entry in entries:
                self._add_cdx(entry)

    def _add_cdx(self, entry: CdxEntry) -> None:
        algorithm, _, value = entry.digest.partition(":")
        self._sha1.setdefault(f"{algorithm.lower()}:{value.upper()}",
                              StoredPayload(entry.url, entry.date))

    def find(self, sha1: str, body: bytes) -> StoredPayload | None:
        """Where the payload ``body`` (whose ``payload_digest`` is ``sha1``) is stored."""
        hit = self._sha1.get(sha1)
        if hit is None and self._ours:
            hit = self._ours.get(hashlib.blake2b(body, digest_size=16).hexdigest())
        return hit

    def add(self, sha1: str, stored: StoredPayload) -> None:
        """Remember a payload this crawl stored (the first holder is kept)."""
        self._sha1.setdefault(sha1, stored)


def stored_payloads(files: Iterable[Path]) -> Iterator[tuple[str, StoredPayload]]:
    """``(payload digest, where)`` of every whole ``response`` record of our WARC
    ``files`` with a non-empty, untruncated payload, in file order (warcio, and so the
    archive, writes ``WARC-Payload-Digest`` on every response record).

    A file is read up to its first record that cannot be read whole (a torn write at a
    kill, a cut gzip member): the records before it count, nothing after it does."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    for path in files:
        try:
            with open(path, "rb") as fh:
                for rec in ArchiveIterator(fh):
                    if rec.rec_type != "response":
                        continue
                    h = rec.rec_headers
                    body = rec.raw_stream.read()
                    if h.get_header("WARC-Payload-Digest") != payload_digest(body):
                        break  # cut short: trust nothing after it
                    if not body or h.get_header("WARC-Truncated"):
                        continue  # never deduplicated (see the module docstring)
                    digest = h.get_header("WARC-Payload-Digest")
                    yield digest, StoredPayload(h.get_header("WARC-Target-URI"),
                                                h.get_header("WARC-Date"),
                                                h.get_header("WARC-Record-ID"))
        except (OSError, EOFError, zlib.error, ArchiveLoadFailed, ValueError) as exc:
            log.warning("%s: read up to a damaged record (%s): the payloads after it "
                        "are stored again", path, exc)
