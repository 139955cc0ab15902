"""The content-seen test: is this page's body a byte-for-byte copy of an earlier page's?

Mercator's content-seen test [1]_: every fetched document gets a fingerprint, and a
document whose fingerprint was seen before is a duplicate, not processed again.  Here
the fingerprint is the body digest every fetch already stores (``fetches.digest``:
blake2b-128 of the body as read), and a duplicate is recorded as a duplicate OF the
first page fetched with that body (``urls.duplicate_of``, ``storage/schema.sql``).
Scheme and host aliases (``http``/``https``, ``www.``) are found by this test, from the
bytes, never assumed from the URLs.

One test for every path that fetches or imports a page: the live crawl
(:mod:`webcrawl.crawler.engine`), the WARC import (:mod:`webcrawl.crawler.ingest.warc`)
and revisits (:mod:`webcrawl.crawler.revisit.loop`, where a page may become a copy of
another, or stop being one).  Callers hand :meth:`ContentSeen.see` a page's new
digest and store the updates it returns with
:meth:`~webcrawl.storage.store.CrawlStore.set_duplicate`.

Contract
--------
* Only fetched HTML pages with a non-empty body are tested (the graph's pages); the
  caller passes their digest.
* A page is a duplicate of the *first holder* of its digest: the page that has held
  that body the longest without interruption (in a crawl, the first fetched).  A
  duplicate never points to another duplicate.
* When the first holder's body changes (a revisit), the next holder becomes the first
  and the other holders are re-pointed to it, in the same call's updates.
* Memory: one dict entry per tested page (its 16-byte digest) and one per distinct
  body; holders beyond the first are kept only for bodies seen more than once.

References
----------
.. [1] A. Heydon and M. Najork, "Mercator: A scalable, extensible Web crawler",
   World Wide Web 2(4), 1999, section 3.5 (the content-seen test).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from webcrawl.storage._sqlite import read_only

__all__ = ["ContentSeen", "DuplicateUpdate"]

#: ``(url id, original url id or None)``: a page's new ``urls.duplicate_of``.
DuplicateUpdate = tuple[int, int | None]


class ContentSeen:
    """Body digest -> the pages holding that body, first holder first."""

    __slots__ = ("_copies", "_digest", "_first")

    def __init__(self) -> None:
        self._digest: dict[int, bytes] = {}          # url id -> its body digest
        self._first: dict[bytes, int] = {}           # digest -> first holder
        self._copies: dict[bytes, dict[int, None]] = {}  # digest -> later holders, in order

    def __len__(self) -> int:
        """Pages tested (holding a digest)."""
        return len(self._digest)

    @property
    def duplicates(self) -> int:
        """Pages whose body repeats an earlier page's."""
        return len(self._digest) - len(self._first)

    def original(self, url_id: int) -> int | None:
        """The first holder of ``url_id``'s body if that is another page, else None."""
        digest = self._digest.get(url_id)
        if digest is None:
            return None
        first = self._first[digest]
        return None if first == url_id else first

    def see(self, url_id: int, digest: str | None) -> list[DuplicateUpdate]:
        """Record that page ``url_id`` now has body ``digest`` (hex; None: no body).

        Returns the ``urls.duplicate_of`` changes to store, ``url_id``'s first (a new
        page that is not a duplicate changes nothing).  :meth:`original` then says
        whether ``url_id`` is a duplicate.
        """
        key = None if digest is None else bytes.fromhex(digest)
        old = self._digest.get(url_id)
        if old == key:
            return []
        was_duplicate = old is not None and self._first[old] != url_id
        updates: list[DuplicateUpdate] = []
        if old is not None:
            updates = self._leave(url_id, old)
        first = None
        if key is not None:
            self._digest[url_id] = key
            first = self._first.setdefault(key, url_id)
            if first == url_id:
                first = None
            else:
                self._copies.setdefault(key, {})[url_id] = None
        if first is not None or was_duplicate:
            updates.insert(0, (url_id, first))
        return updates

    def _leave(self, url_id: int, key: bytes) -> list[DuplicateUpdate]:
        """Take ``url_id`` off the holders of ``key``; re-point them if it was first."""
        del self._digest[url_id]
        copies = self._copies.get(key)
        if self._first[key] != url_id:
            assert copies is not None
            del copies[url_id]
            if not copies:
                del self._copies[key]
            return []
        if not copies:
            del self._first[key]
            return []
        new_first = next(iter(copies))
        del copies[new_first]
        self._first[key] = new_first
        if not copies:
            del self._copies[key]
        return [(new_first, None), *((u, new_first) for u in copies)]

    @classmethod
    def from_db(cls, path: str | Path) -> ContentSeen:
        """The test's state for a crawl database: every fetched page's latest digest.

        The stored first holders (pages that are no page's duplicate) come first, in
        crawl order, then the duplicates, so the state reproduces ``urls.duplicate_of``.
        A file written before the test existed (no ``duplicate_of``) is read in crawl
        order: its pages were never tested, and each digest's first fetch is first.
        """
        seen = cls()
        for url_id, digest in read_only(Path(path), _stored_digests):
            seen.see(int(url_id), str(digest))
        return seen


def _stored_digests(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    """Every fetched page's latest digest: first holders in crawl order, then copies."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(urls)")}
    dup = "u.duplicate_of" if "duplicate_of" in columns else "NULL"
    rows: list[tuple[int, str]] = conn.execute(
        "SELECT u.id, f.digest FROM urls u JOIN fetches f ON f.id ="
        " (SELECT max(id) FROM fetches WHERE url_id = u.id AND digest IS NOT NULL)"
        f" WHERE u.outcome = 'fetched' ORDER BY {dup} IS NOT NULL, u.seq, u.id"
    ).fetchall()
    return rows
