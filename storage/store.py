"""The crawl database writer (aiosqlite, WAL): CONTRACT SKELETON, to be implemented.

The crawler owns id assignment (it keeps url -> id and host -> id maps in memory and
asks the store for the next free ids when it opens); the store is a write-behind
buffer: the ``add_*``/``set_*`` methods are synchronous and only enqueue, a background
task commits the queue in one transaction per batch (every ``batch_size`` records or
``flush_interval`` seconds).  Everything enqueued between two commits lands together,
so the crawler enqueues all records of one fetch (fetch row, new URLs, links, outcome)
without an ``await`` in between and a crash never splits them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storage.records import FetchRecord, Outcome

__all__ = ["CrawlStore", "HostRow", "ResumeState", "UrlRow"]


@dataclass(slots=True)
class HostRow:
    id: int
    name: str                         # host[:port] as in crawler.urls.host_key
    robots_status: int | None = None  # HTTP status of /robots.txt; None: not fetched yet
    robots_body: str | None = None
    robots_fetched_at: float | None = None
    crawl_delay: float | None = None


@dataclass(slots=True)
class UrlRow:
    id: int
    url: str
    host_id: int
    depth: int
    discovered_seq: int               # crawl seq of the fetch that discovered it (-1: seed)
    outcome: Outcome | None = None    # None while in the frontier
    seq: int | None = None            # seq of its final fetch


@dataclass(slots=True)
class ResumeState:
    """Everything a crawl needs to continue where it stopped."""

    meta: dict[str, str]
    hosts: list[HostRow]
    urls: list[UrlRow]                # in id order
    next_seq: int                     # 1 + the highest seq recorded
    # Fetched pages' out-links in fetch (seq) order, for replaying strategy state:
    fetched_links: list[tuple[int, Sequence[int]]]


class CrawlStore:
    """Async writer of one crawl database file (see ``schema.sql``)."""

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        resume: bool = False,
        batch_size: int = 2000,
        flush_interval: float = 0.5,
    ) -> CrawlStore:
        """Open (create) the database. ``resume=False`` on a non-empty file is an error."""
        raise NotImplementedError

    async def load_state(self) -> ResumeState:
        raise NotImplementedError

    def set_meta(self, key: str, value: str) -> None:
        raise NotImplementedError

    def add_host(self, row: HostRow) -> None:
        raise NotImplementedError

    def update_host(self, host_id: int, **fields: Any) -> None:
        raise NotImplementedError

    def add_url(self, row: UrlRow) -> None:
        raise NotImplementedError

    def add_fetch(self, record: FetchRecord) -> None:
        raise NotImplementedError

    def add_links(self, src_id: int, dst_ids: Sequence[int], nofollow_ids: Sequence[int] = ()) -> None:
        raise NotImplementedError

    def set_outcome(self, url_id: int, outcome: Outcome, seq: int | None) -> None:
        raise NotImplementedError

    async def flush(self) -> None:
        """Commit everything enqueued so far (one transaction)."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Flush, stop the background writer and close the file."""
        raise NotImplementedError
