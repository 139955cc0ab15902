"""The near-duplicate test: is this page's text nearly the text of an earlier page?

The content-seen test (:mod:`webcrawl.crawler.content_seen`) finds byte-for-byte
copies; this test finds the copies that differ in a date, a counter, a navigation
block, the order of their blocks or a tracking parameter echoed in the page.  Each
tested page has a min-hash sketch of its text's 2-word shingles
(:mod:`webcrawl.crawler.shingles`, stored as ``fetches.sketch``); two pages are near
copies when their estimated resemblance (Broder et al. [1]_) is at least
``near_min_resemblance``.  A near copy is recorded against its group's *leader*
(``urls.near_of``) with the estimate (``urls.near_resemblance``, "how near").

Same seam as the content-seen test: every path that fetches or imports a page (the
crawl, ``import warc``, revisits) hands :meth:`NearSeen.see` the page's new sketch
and stores the updates it returns with
:meth:`~webcrawl.storage.store.CrawlStore.set_near_duplicate`.

Contract
--------
* Only pages that are not byte-for-byte duplicates are tested (a duplicate's text is
  its original's: the caller passes ``None`` for it), and only pages whose text has a
  sketch.
* **Leaders.**  A page whose resemblance to a leader reaches the threshold joins the
  most resembling such leader (the lowest URL id on a tie); otherwise it becomes a
  leader.  Every member resembles its leader, and a group never grows by a chain of
  small steps (single linkage would merge a boilerplate-heavy site into one page).
  Resemblance is not transitive (a like b, b like c, a not like c): which group such
  a page joins can depend on the crawl order; pages that all resemble each other
  form the same group in every order.
* **Revisits.**  A page whose sketch changes leaves its group and is tested again;
  when a leader leaves, its members are tested again in the order they joined (the
  first becomes a leader, the others join it or another), all in the same call's
  updates.
* **Look-up.**  Locality-sensitive hashing by bands (Indyk and Motwani; Leskovec,
  Rajaraman and Ullman [2]_, ch. 3): the 64 bins of a sketch are cut into
  :data:`BANDS` bands of 4, and a leader is a candidate when one of its bands equals
  the page's same band (one table for all bands: a band's key is its 64 bits xor a
  salt of the band's; probability ``1 - (1 - r**4)**16``: 0.99 at r = 0.7, 0.37 at
  r = 0.4).  A candidate is compared as one 1024-bit integer (equal bins: the zero
  16-bit lanes of the two sketches' xor, by four shifts and a popcount), not by a numpy
  call: on a crawl numpy's per-call cost was most of the test's.  Only candidates that
  share enough bands to reach the threshold are compared (a band that differs holds a
  differing bin: ``b`` equal bands allow at most ``48 + b`` equal bins), which gives
  the same groups: on the fixture's pages, whose common words make bands collide, it
  spares most comparisons.  Memory: a sketch
  (128 bytes) per tested page, 16 table entries per leader.

References
----------
.. [1] A. Z. Broder, S. C. Glassman, M. S. Manasse and G. Zweig, "Syntactic
   clustering of the web", WWW6, 1997.
.. [2] J. Leskovec, A. Rajaraman and J. D. Ullman, "Mining of Massive Datasets",
   chapter 3 (locality-sensitive hashing of min-hash signatures).
"""

from __future__ import annotations

import sqlite3
import sys
from collections import Counter
from itertools import chain
from pathlib import Path

import numpy as np
from webcrawl.crawler.shingles import SKETCH_SIZE
from webcrawl.storage._sqlite import read_only
from webcrawl.storage.errors import ConfigError

__all__ = ["BANDS", "NearSeen", "NearUpdate", "decode_sketch", "encode_sketch"]

#: ``(url id, leader url id or None, resemblance or None)``: a page's new
#: ``urls.near_of`` and ``urls.near_resemblance``.
NearUpdate = tuple[int, int | None, float | None]

#: LSH bands of a sketch (4 bins each: one uint64 key).
BANDS = SKETCH_SIZE // 4
#: Per band, what its key is xored with, so equal bins in different bands are
#: different keys of the one table.
_BAND_SALTS = np.arange(1, BANDS + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)


def _band_keys(sketch: np.ndarray) -> list[int]:
    """The table keys of a sketch's bands."""
    keys: list[int] = (sketch.view(np.uint64) ^ _BAND_SALTS).tolist()
    return keys


_LITTLE = sys.byteorder == "little"
#: Bit 0 of every 16-bit lane of a sketch as an integer.
_LANE_LOW = int.from_bytes(b"\x01\x00" * SKETCH_SIZE, "little")


def _as_int(sketch: np.ndarray) -> int:
    """A sketch as one integer, bin k in bits 16k..16k+15 (byte order aside)."""
    return int.from_bytes(sketch.tobytes(), "little")


def _equal_bins(a: int, b: int) -> int:
    """Bins in which two sketches (as :func:`_as_int`) agree."""
    x = a ^ b
    x |= x >> 1
    x |= x >> 2
    x |= x >> 4
    x |= x >> 8  # bit 16k: any bit of lane k differs
    return SKETCH_SIZE - (x & _LANE_LOW).bit_count()


def encode_sketch(sketch: np.ndarray) -> bytes:
    """A sketch as stored (``fetches.sketch``: 64 little-endian uint16)."""
    return (sketch if _LITTLE else sketch.astype("<u2")).tobytes()


def decode_sketch(blob: bytes) -> np.ndarray:
    """Inverse of :func:`encode_sketch`."""
    return np.frombuffer(blob, dtype="<u2").astype(np.uint16)


class NearSeen:
    """Text sketches of the tested pages, grouped around leaders."""

    __slots__ = ("_lead", "_leader", "_members", "_min", "_need", "_sketch", "_table")

    def __init__(self, min_resemblance: float = 0.8) -> None:
        if not 0.0 < min_resemblance <= 1.0:
            raise ConfigError(f"near_min_resemblance must be in (0, 1], got {min_resemblance}")
        self._min = int(np.ceil(min_resemblance * SKETCH_SIZE - 1e-9))  # equal bins needed
        self._need = max(1, self._min - (SKETCH_SIZE - BANDS))  # equal bands needed
        self._sketch: dict[int, np.ndarray] = {}          # url id -> its sketch
        self._leader: dict[int, int] = {}                 # member -> its leader
        self._members: dict[int, dict[int, int]] = {}     # leader -> {member: equal bins}
        self._table: dict[int, list[int]] = {}            # band key -> leaders
        self._lead: dict[int, int] = {}                   # leader -> its sketch (int)

    def __len__(self) -> int:
        """Pages tested (holding a sketch)."""
        return len(self._sketch)

    @property
    def near_duplicates(self) -> int:
        """Pages that are near copies of a leader."""
        return len(self._leader)

    def near_of(self, url_id: int) -> tuple[int, float] | None:
        """``(leader, resemblance)`` if ``url_id`` is a near copy, else None."""
        leader = self._leader.get(url_id)
        if leader is None:
            return None
        return leader, self._members[leader][url_id] / SKETCH_SIZE

    def see(self, url_id: int, sketch: np.ndarray | None) -> list[NearUpdate]:
        """Record that page ``url_id`` now has text ``sketch`` (None: not tested).

        Returns the ``near_of`` changes to store, ``url_id``'s first (a new page that is
        no near copy changes nothing).
        """
        old = self._sketch.get(url_id)
        if old is None:  # a page seen for the first time: only it can change
            if sketch is None:
                return []
            self._sketch[url_id] = sketch
            self._place(url_id, sketch)
            leader = self._leader.get(url_id)
            if leader is None:
                return []
            return [(url_id, leader, self._members[leader][url_id] / SKETCH_SIZE)]
        if old is sketch or (old is not None and sketch is not None
                             and np.array_equal(old, sketch)):
            return []
        before = {url_id: self.near_of(url_id)}
        retest: list[tuple[int, int]] = []
        if old is not None:
            retest = self._leave(url_id, old)
            before.update((m, (url_id, e / SKETCH_SIZE)) for m, e in retest)
        if sketch is not None:
            self._sketch[url_id] = sketch
            self._place(url_id, sketch)
        for member, _ in retest:
            self._place(member, self._sketch[member])
        updates: list[NearUpdate] = []
        for page, was in before.items():
            now = self.near_of(page)
            if now != was:
                updates.append((page, *now) if now else (page, None, None))
        return updates

    def _place(self, url_id: int, sk: np.ndarray) -> None:
        """Join the most resembling leader at the threshold, else lead."""
        keys = _band_keys(sk)
        table = self._table
        buckets = list(map(table.get, keys))  # each band's leaders (None: no leader)
        me = _as_int(sk)
        hits = [bucket for bucket in buckets if bucket]
        need = self._need
        # Each band that differs holds at least one differing bin: a leader sharing
        # fewer than ``need`` bands cannot reach the threshold, and is not compared.
        if len(hits) >= need:
            shared = Counter(chain.from_iterable(hits))  # leader -> bands equal to ours
            found = [c for c, n in shared.items() if n >= need]
            if found:
                lead = self._lead
                best, leader = max((_equal_bins(me, lead[c]), -c) for c in found)
                if best >= self._min:  # the most equal bins, then the lowest URL id
                    self._leader[url_id] = -leader
                    self._members[-leader][url_id] = best
                    return
        self._members[url_id] = {}
        self._lead[url_id] = me
        for key, bucket in zip(keys, buckets, strict=True):
            if bucket is not None:
                bucket.append(url_id)
            elif key in table:  # two of the page's bands with one key (chance 2**-57)
                table[key].append(url_id)
            else:
                table[key] = [url_id]

    def _leave(self, url_id: int, sk: np.ndarray) -> list[tuple[int, int]]:
        """Take ``url_id`` out of its group; a leader's members (with their equal bins)
        are returned, in the order they joined, to be placed again."""
        del self._sketch[url_id]
        leader = self._leader.pop(url_id, None)
        if leader is not None:
            del self._members[leader][url_id]
            return []
        members = list(self._members.pop(url_id).items())
        del self._lead[url_id]
        for key in _band_keys(sk):
            bucket = self._table[key]
            bucket.remove(url_id)
            if not bucket:
                del self._table[key]
        for member, _ in members:
            del self._leader[member]
        return members

    @classmethod
    def from_db(cls, path: str | Path, min_resemblance: float = 0.8) -> NearSeen:
        """The test's state for a crawl database: every tested page's latest sketch, in
        the stored groups (leaders first, in crawl order).

        A file written before the test existed (no ``fetches.sketch``) gives an empty
        state: its pages were never tested.  A stored member whose leader is no longer
        a leader, or no longer resembles it enough (another ``near_min_resemblance``, a
        hand-edited file), is tested again.
        """
        rows = read_only(Path(path), _stored_sketches)
        seen = cls(min_resemblance)
        for url_id, blob, near_of in rows:
            seen._restore(int(url_id), decode_sketch(blob),
                          None if near_of is None else int(near_of))
        return seen

    def _restore(self, url_id: int, sk: np.ndarray, near_of: int | None) -> None:
        """Put a stored page back in its stored group (or test it again)."""
        self._sketch[url_id] = sk
        if near_of is not None and near_of in self._lead:
            equal = _equal_bins(_as_int(sk), self._lead[near_of])
            if equal >= self._min:
                self._leader[url_id] = near_of
                self._members[near_of][url_id] = equal
                return
        self._place(url_id, sk)


def _stored_sketches(conn: sqlite3.Connection) -> list[tuple[int, bytes, int | None]]:
    """Every tested page's latest sketch and stored leader, leaders first, in crawl
    order; none from a file written before the test existed."""
    fetch_cols = {r[1] for r in conn.execute("PRAGMA table_info(fetches)")}
    url_cols = {r[1] for r in conn.execute("PRAGMA table_info(urls)")}
    if "sketch" not in fetch_cols or "near_of" not in url_cols:
        return []
    rows: list[tuple[int, bytes, int | None]] = conn.execute(
        "SELECT u.id, f.sketch, u.near_of FROM urls u JOIN fetches f ON f.id ="
        " (SELECT max(id) FROM fetches WHERE url_id = u.id AND digest IS NOT NULL)"
        " WHERE u.duplicate_of IS NULL AND u.outcome = 'fetched'"
        " AND f.sketch IS NOT NULL"
        " ORDER BY u.near_of IS NOT NULL, u.seq, u.id").fetchall()
    return rows
