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
``revisit``      an unchanged refetch (``changed = 0``) of a URL seen before.
``/robots.txt``  responses for a host's robots.txt set that host's robots (status, body,
                 time), as the crawler stores them; they are no page fetch.
others           ``warcinfo``, ``request``, ``metadata``, ``resource``: skipped.
===============  ==========================================================================

Seeds are the fetched URLs that no earlier page linked to (a crawl's seeds, or the
start of each wget run); depth is counted from them.  Damaged records (bad gzip,
bad headers, truncated data) raise :class:`~webcrawl.storage.errors.InputFormatError` with the
file and the record's byte offset, after committing every record before it; with
``skip_bad`` the record is reported and the import resumes at the next record start.

The reader is warcio: FastWARC parses about 5 times faster
(``benchmarks/bench_warc_read.py``), but reading is 5-10 % of an import, whose time
goes into HTML parsing; warcio also writes our WARCs (``warcio check``), so one
library serves both directions and reports the offset of a damaged record.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from webcrawl.crawler import eventloop
from webcrawl.crawler.fetcher import decode_body, is_html
from webcrawl.crawler.links import extract_links, link_ids
from webcrawl.crawler.outcomes import response_outcome
from webcrawl.crawler.progress import StatusLine
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.urls import normalize_url
from webcrawl.storage.errors import ConfigError, InputFormatError
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore

__all__ = ["WarcImport", "import_warc"]

#: Bytes read at a time while looking for the next record after a damaged one.
_SCAN_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b\x08"
_WARC_MAGIC = b"WARC/1."


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


# A record whose bytes cannot be parsed raises one of these inside warcio/zlib.
_DAMAGE = (zlib.error, EOFError, ValueError, LookupError, AttributeError, TypeError,
           IndexError)


def _records(path: Path, cap: int, skip_bad: bool,
             on_bad: Callable[[int, str], None]) -> Iterator[_Record]:
    """Every record of one WARC file, resuming after damaged ones when ``skip_bad``."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    damage = (ArchiveLoadFailed, *_DAMAGE)
    with open(path, "rb") as fh:
        start = 0
        while True:
            fh.seek(start)
            iterator = ArchiveIterator(fh)
            offset = start
            try:
                for rec in iterator:
                    offset = iterator.offset
                    yield _read(rec, offset, cap)
                return
            except damage as exc:
                offset = iterator.offset if iterator.offset >= offset else offset
                reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:120]}" \
                    if str(exc).strip() else type(exc).__name__
                if not skip_bad:
                    raise InputFormatError(
                        f"{path}: damaged WARC record at offset {offset} ({reason}); "
                        "records before it were imported; --skip-bad skips it",
                        offset) from exc
                on_bad(offset, reason)
                nxt = _next_record_start(fh, offset + 1)
                if nxt is None:
                    return
                start = nxt


def _next_record_start(fh: BinaryIO, after: int) -> int | None:
    """Offset of the next gzip member or ``WARC/1.`` line at or after ``after``."""
    fh.seek(after)
    pos = after
    tail = b""
    while True:
        chunk = fh.read(_SCAN_CHUNK)
        if not chunk:
            return None
        data = tail + chunk
        base = pos - len(tail)
        hits = [i for i in (data.find(_GZIP_MAGIC), data.find(b"\n" + _WARC_MAGIC))
                if i >= 0]
        if hits:
            i = min(hits)
            return base + i + (1 if data[i:i + 1] == b"\n" else 0)
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
            body = rec.content_stream().read(cap + 1)
            too_large = len(body) > cap
            body = body[:cap]
    return _Record(offset, kind, uri, date, status, headers, body, too_large)


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
        elif outcome is Outcome.FETCHED:
            links, nofollow = self._page_links(uid, url, rec, seq)
        changed = None
        if kind is FetchKind.REVISIT and previous is not None and digest and previous[3]:
            changed = digest != previous[3]
        self._add_fetch(uid, rec, when, seq, attempt, kind, outcome, status, digest, changed,
                        ctype=ctype)
        if outcome in (Outcome.FETCHED, Outcome.REDIRECT):
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
        A damaged record (without ``skip_bad``); what came before it is committed.
    ConfigError
        A file is missing.
    StoreError
        ``db`` already holds a crawl or cannot be written.
    """
    paths = [Path(f) for f in files]
    for p in paths:
        if not p.is_file():
            raise ConfigError(f"no such WARC file: {p}")
    settings = settings or CrawlSettings()
    stream: TextIO | None = (sys.stderr if progress is True else
                             None if progress is False else progress)
    return eventloop.run(_import(paths, Path(db), skip_bad, settings, stream))


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
                stats.bytes_read = done + rec.offset
                if stats.records % 256 == 0:
                    await store.drain()
                    if status is not None and status.due():
                        status.show(_line(stats, total, time.monotonic() - t0))
            done += path.stat().st_size
        stats.bytes_read = total
        store.set_meta("seeds", json.dumps(importer.seeds[:1000]))
    finally:
        stats.seconds = time.monotonic() - t0
        await store.aclose()
        if status is not None and status.terminal:
            status.clear()  # the caller prints the summary in its place
        elif status is not None and status.enabled:
            status.show(_line(stats, total, stats.seconds))  # the last state, logged
    return stats


def _line(stats: WarcImport, total: int, elapsed: float) -> str:
    """The import's status: share of the bytes read, records, fetches, links."""
    pct = 100.0 * stats.bytes_read / total if total else 100.0
    rate = stats.records / elapsed if elapsed > 0 else 0.0
    return (f"{pct:5.1f}%  {stats.records:>9,} records  {rate:7.0f} records/s  "
            f"{stats.fetches:>9,} fetches  {stats.links:>10,} links  bad {stats.bad}")
