"""Import WARC files (any writer: wget, Heritrix, Browsertrix, webcrawl) into a crawl database.

Record by record, in file order (the fetch order, so ``compare`` has a "recorded"
order), streaming with bounded memory (one record's payload at a time, capped at
``fetch_max_body`` bytes; the URL and host maps grow with the URLs, as in a crawl).
Records are read, and checked against their framing, by
:mod:`webcrawl.crawler.ingest._records`; each becomes the rows a crawl would write
(fetches, outcomes, links, robots.txt) in :mod:`webcrawl.crawler.ingest._replay`, whose
docstring tabulates the mapping.

The database is written whole or not at all (:func:`webcrawl.storage.lock.new_database`):
built in a temporary file beside ``db`` and renamed into place when complete, so an
import that fails (a damaged record, a full disk) or is killed leaves neither a
database nor its temporary file, and can simply be run again.  An input from which nothing
could be imported (an empty file, only damaged records, no response or revisit
record) is refused with an :class:`~webcrawl.storage.errors.InputFormatError`, and no
database is written: ``skip_bad`` skips damaged records of a partly damaged input,
it does not make an empty database.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from webcrawl.crawler import eventloop
from webcrawl.crawler.ingest._records import read_records
from webcrawl.crawler.ingest._replay import RecordImporter, WarcImport
from webcrawl.crawler.progress import StatusLine
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage import _testhooks
from webcrawl.storage.errors import ConfigError, InputFormatError
from webcrawl.storage.lock import new_database
from webcrawl.storage.store import CrawlStore

__all__ = ["WarcImport", "import_warc"]


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
        A damaged record (without ``skip_bad``), or nothing to import: no record, only
        damaged records, no response or revisit record; nothing is written.
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
    importer = RecordImporter(store, settings, stats)
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
            importer.source = path
            for rec in read_records(path, settings.fetch_max_body, skip_bad, on_bad):
                importer.handle(rec)
                _testhooks.kill_at("warc_record")  # test-only: a kill -9 after N records
                stats.bytes_read = done + rec.offset
                if stats.records % 256 == 0:
                    await store.drain()
                    if status is not None and status.due():
                        status.show(_line(stats, total, time.monotonic() - t0))
            done += path.stat().st_size
        stats.bytes_read = total
        _check_not_empty(paths, stats)
        store.set_meta("seeds", json.dumps(importer.seeds[:1000]))
        complete = True
    finally:
        stats.seconds = time.monotonic() - t0
        try:
            try:
                await store.aclose()
                importer.count_near_copies()  # the last commit tested the last pages
            finally:
                if importer.near is not None:
                    importer.near.close()
        finally:
            if status is not None and status.terminal:
                status.clear()  # the caller prints the summary (or the error) in its place
            elif status is not None and status.enabled and complete:
                status.show(_line(stats, total, stats.seconds))  # the last state, logged
    return stats


def _check_not_empty(paths: list[Path], stats: WarcImport) -> None:
    """Refuse an input that would make an empty database (no fetch), saying why."""
    if stats.fetches:
        return
    names = ", ".join(map(str, paths[:3])) + (f" and {len(paths) - 3} more"
                                              if len(paths) > 3 else "")
    damaged = (f"{stats.bad} damaged stretch{'es' if stats.bad != 1 else ''} skipped"
               if stats.bad else "")
    if stats.records == 0:
        why = f"every record is damaged ({damaged})" if stats.bad else \
            "no WARC record (an empty file?)"
    else:
        why = (f"no response or revisit record among its {stats.records:,} readable "
               f"records" + (f" ({damaged})" if damaged else ""))
    raise InputFormatError(f"{names}: nothing to import: {why}; no database was written")


def _line(stats: WarcImport, total: int, elapsed: float) -> str:
    """The import's status: share of the bytes read, records, fetches, links."""
    pct = 100.0 * stats.bytes_read / total if total else 100.0
    rate = stats.records / elapsed if elapsed > 0 else 0.0
    return (f"{pct:5.1f}%  {stats.records:>9,} records  {rate:7.0f} records/s  "
            f"{stats.fetches:>9,} fetches  {stats.links:>10,} links  bad {stats.bad}")
