"""WARC records into crawl rows, as the crawler would write them (private: driven by
:func:`webcrawl.crawler.ingest.warc.import_warc`).

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
                 (``links_from_duplicates`` reads them).  With ``near_duplicates``,
                 every other ``fetched`` page's text is sketched and tested as the crawl
                 tests it, in batches written with the pages' rows
                 (:mod:`webcrawl.crawler.near_batch`, ``urls.near_of``); a revisit whose
                 text changed is tested again.
``revisit``      with the *identical-payload-digest* profile, whose payload digest
                 is that of a ``response`` record read earlier in this import (the
                 earlier crawl's WARCs given first, or the same file): read as that
                 response, its body taken from the stored record and its status and
                 headers from the revisit, so a crawl archived with ``--warc-dedup``
                 imports to the same pages, links and duplicates as one archived whole.
                 Any other revisit: an unchanged refetch (``changed = 0``) of a URL
                 seen before.
``/robots.txt``  responses for a host's robots.txt set that host's robots (status, body,
                 time), as the crawler stores them; they are no page fetch.
others           ``warcinfo``, ``request``, ``metadata``, ``resource``: skipped.
===============  ==========================================================================

Seeds are the fetched URLs that no earlier page linked to (a crawl's seeds, or the
start of each wget run); depth is counted from them.

URLs and hosts are registered through the crawl's own registry
(:meth:`webcrawl.crawler.registry.CrawlRegistry.register`), so ids are given and rows
written as in a crawl.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from webcrawl.crawler.content_seen import ContentSeen
from webcrawl.crawler.fetcher import decode_body, is_html
from webcrawl.crawler.ingest._records import Record, read_record_at
from webcrawl.crawler.links import PageLinks, extract_links, link_ids
from webcrawl.crawler.near_batch import NearBatch
from webcrawl.crawler.outcomes import response_outcome
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.urls import normalize_url
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore

__all__ = ["RecordImporter", "WarcImport"]


@dataclass(slots=True)
class WarcImport:
    """Counters of one import (also the live progress)."""

    records: int = 0
    fetches: int = 0
    revisits: int = 0
    #: identical-payload revisit records read as the response whose payload they name
    payload_revisits: int = 0
    robots: int = 0
    skipped: int = 0          # record types that are no fetch (warcinfo, request, ...)
    bad: int = 0              # damaged records skipped (--skip-bad)
    links: int = 0
    urls: int = 0
    hosts: int = 0
    bytes_read: int = 0
    near_copies: int | None = None  # pages found near copies (None: not tested)
    seconds: float = 0.0
    outcomes: dict[str, int] = field(default_factory=dict)
    bad_offsets: list[tuple[str, int, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"records": self.records, "fetches": self.fetches, "revisits": self.revisits,
                "payload_revisits": self.payload_revisits,
                "robots": self.robots, "skipped": self.skipped, "bad": self.bad,
                "links": self.links, "urls": self.urls, "hosts": self.hosts,
                "near_copies": self.near_copies,
                "seconds": round(self.seconds, 3), "outcomes": dict(sorted(self.outcomes.items())),
                "bad_records": [{"file": f, "offset": o, "error": e}
                                for f, o, e in self.bad_offsets]}

    def summary(self) -> str:
        bad = f", {self.bad} damaged records skipped" if self.bad else ""
        named = (f" ({self.payload_revisits:,} revisit records read as the responses they "
                 f"name)" if self.payload_revisits else "")
        near = "" if self.near_copies is None else \
            f", {self.near_copies:,} near cop{'y' if self.near_copies == 1 else 'ies'}"
        return (f"imported {self.records:,} records in {self.seconds:.1f} s: "
                f"{self.fetches:,} fetches ({self.revisits:,} revisits){named}, "
                f"{self.links:,} links, {self.urls:,} URLs on {self.hosts:,} hosts, "
                f"{self.robots:,} robots.txt{near}{bad}")


#: (seq, attempt, status, digest, kind) of a URL's last fetch.
_Last = tuple[int, int, int | None, str | None, FetchKind]


class RecordImporter:
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
        #: the crawl's near-duplicate test (with ``near_duplicates``)
        self.near = NearBatch.open(store, settings) if settings.near_duplicates else None
        #: the file being read, and where each payload digest's first whole response
        #: record is (file, offset): what an identical-payload revisit refers to
        self.source: Path | None = None
        self.payloads: dict[str, tuple[Path, int]] = {}

    def handle(self, rec: Record) -> None:
        """Write the rows of one record (or count it as skipped)."""
        self._handle(rec)
        self.stats.urls = len(self.registry)
        self.stats.hosts = self.registry.host_count
        self.count_near_copies()

    def count_near_copies(self) -> None:
        """The near copies found so far (the pages of the next commit not yet tested)."""
        if self.near is not None:
            self.stats.near_copies = self.near.near_duplicates

    def _handle(self, rec: Record) -> None:
        self.stats.records += 1
        if rec.kind not in ("response", "revisit") or not rec.uri:
            self.stats.skipped += 1
            return
        url = normalize_url(rec.uri.strip().strip("<>"))
        if url is None:
            self.stats.skipped += 1
            return
        if rec.kind == "revisit":
            stored = self._stored_payload(rec)
            if stored is not None:
                self.stats.payload_revisits += 1
                rec = stored
        elif rec.payload_digest and rec.body and not rec.too_large \
                and self.source is not None:
            self.payloads.setdefault(rec.payload_digest, (self.source, rec.offset))
        when = rec.date if rec.date is not None else time.time()
        if url.endswith("/robots.txt") and url.count("/") == 3 and "?" not in url:
            self._robots(url, rec, when)
            return
        new = url not in self.registry
        uid = self.registry.register(self.store, url, 0, -1)
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

    def _stored_payload(self, rec: Record) -> Record | None:
        """An identical-payload revisit as the response it stands for: its status and
        headers with the body of the record it names (None: not one, or a payload this
        import has not read)."""
        if not (rec.profile or "").endswith("/identical-payload-digest") or \
                not rec.payload_digest:
            return None
        where = self.payloads.get(rec.payload_digest)
        stored = read_record_at(where[0], where[1], self.settings.fetch_max_body) \
            if where is not None else None
        if stored is None or stored.kind != "response":
            return None
        return replace(rec, kind="response", body=stored.body, too_large=stored.too_large)

    def _next_seq(self) -> int:
        seq = self.seq
        self.seq += 1
        return seq

    def _robots(self, url: str, rec: Record, when: float) -> None:
        if rec.kind != "response":
            self.stats.skipped += 1
            return
        host, _ = self.registry.register_host(self.store, url)
        status = rec.status
        ok = status is not None and 200 <= status < 300
        body = decode_body(rec.body[: self.settings.robots_max_size], _charset(rec)) \
            if ok else None
        self.store.update_host(host, robots_status=status, robots_body=body,
                               robots_fetched_at=when)
        self.stats.robots += 1

    def _revisit(self, uid: int, rec: Record, when: float,
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

    def _response(self, uid: int, url: str, rec: Record, when: float, seq: int,
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
                links = [self.registry.register(self.store, target, self.registry.depth(uid), seq)]
        read_links = True
        near = False
        page = None
        if outcome is Outcome.FETCHED:
            for page_id, original in self.seen.see(uid, digest):
                self.store.set_duplicate(page_id, original)
            duplicate = self.seen.original(uid) is not None
            read_links = not duplicate or self.settings.links_from_duplicates
            near = self.near is not None and not duplicate
            page = self._page(url, rec, near) if read_links or near else None
            if page is not None and read_links:
                links, nofollow = self._page_links(uid, seq, page)
        changed = None
        if kind is FetchKind.REVISIT and previous is not None and digest and previous[3]:
            changed = digest != previous[3]
        fetch_id = self._add_fetch(uid, rec, when, seq, attempt, kind, outcome, status, digest,
                                   changed, ctype=ctype)
        if outcome is Outcome.FETCHED and self.near is not None:
            # as the crawl's recording does: a duplicate, or a page without text, is
            # tested with no sketch
            self.near.add(uid, fetch_id, page if near else None)
        if outcome is Outcome.REDIRECT or (outcome is Outcome.FETCHED and read_links):
            self.store.add_links(uid, links, nofollow)
            self.stats.links += len(links)
        if kind is FetchKind.CRAWL:
            self.store.set_outcome(uid, outcome, seq)
        self.last[uid] = (seq, attempt, status, digest, kind)

    def _page(self, url: str, rec: Record, text: bool) -> PageLinks:
        """The page's links (and, with ``text``, its text) from one parse."""
        s = self.settings
        return extract_links(rec.body, url, charset=_charset(rec),
                             max_links=s.links_max_per_page, agent=s.fetch_robots_agent,
                             text=text)

    def _page_links(self, uid: int, seq: int, page: PageLinks) -> tuple[list[int], list[int]]:
        s = self.settings
        depth = self.registry.depth(uid) + 1
        register = self.registry.register
        return link_ids(page, lambda target, _follow: register(self.store, target, depth, seq),
                        obey_meta_nofollow=s.links_obey_meta_nofollow)

    def _add_fetch(self, uid: int, rec: Record, when: float, seq: int, attempt: int,
                   kind: FetchKind, outcome: Outcome, status: int | None,
                   digest: str | None, changed: bool | None, ctype: str | None = None
                   ) -> int:
        if ctype is None:
            ctype = (rec.header("Content-Type") or "").partition(";")[0].strip().lower()
        fetch_id = self.store.add_fetch(FetchRecord(
            url_id=uid, seq=seq, started_at=when, ended_at=when, outcome=outcome,
            status=status, content_type=ctype or None,
            size=len(rec.body) if rec.kind == "response" else None, digest=digest,
            etag=rec.header("ETag"), last_modified=rec.header("Last-Modified"),
            attempt=attempt, kind=kind, strategy="warc", changed=changed))
        self.stats.fetches += 1
        if kind is FetchKind.REVISIT:
            self.stats.revisits += 1
        self.stats.outcomes[str(outcome)] = self.stats.outcomes.get(str(outcome), 0) + 1
        return fetch_id


def _charset(rec: Record) -> str | None:
    ctype = rec.header("Content-Type") or ""
    for param in ctype.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip('"\'') or None
    return None
