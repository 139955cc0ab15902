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
  spares most comparisons.  The shared bands are counted over the page's small
  buckets only, the few big ones (:data:`_SET_FROM` leaders or more) asked by a set
  whether they hold each counted leader: by pigeonhole the same candidates as a count
  over every bucket, for 11 instead of 169 entries a fixture page.  Memory: a sketch
  (128 bytes) per tested page, 16 table entries per leader (a bucket of one leader is
  its URL id, no list), and a set beside each big bucket.

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
#: Leaders a band's bucket holds from which it also keeps them as a set, for the
#: look-up's membership tests in the biggest buckets (8 % of the entries on the
#: fixture's pages, in 252 of 203,201 buckets).
_SET_FROM = 32

#: A band key's leaders in the look-up table: one leader as its URL id (no list for the
#: most common case: 12 of a new leader's 16 keys on the fixture's pages), more as a
#: list (a leader twice in it if it has the key in two bands).
_Bucket = int | list[int]


def _count(buckets: list[_Bucket | None], leader: int) -> int:
    """Times ``leader`` is in ``buckets``, each as often as it holds it."""
    return sum((b == leader) if isinstance(b, int) else b.count(leader)
               for b in buckets if b is not None)


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

    __slots__ = ("_big", "_lead", "_leader", "_members", "_min", "_need", "_sketch", "_table",
                 "_twice")

    def __init__(self, min_resemblance: float = 0.8) -> None:
        if not 0.0 < min_resemblance <= 1.0:
            raise ConfigError(f"near_min_resemblance must be in (0, 1], got {min_resemblance}")
        self._min = int(np.ceil(min_resemblance * SKETCH_SIZE - 1e-9))  # equal bins needed
        self._need = max(1, self._min - (SKETCH_SIZE - BANDS))  # equal bands needed
        self._sketch: dict[int, np.ndarray] = {}          # url id -> its sketch
        self._leader: dict[int, int] = {}                 # member -> its leader
        self._members: dict[int, dict[int, int]] = {}     # leader -> {member: equal bins}
        self._table: dict[int, _Bucket] = {}              # band key -> leaders
        self._lead: dict[int, int] = {}                   # leader -> its sketch (int)
        self._big: dict[int, set[int]] = {}               # band key -> leaders, if many
        self._twice: set[int] = set()                     # leaders with a key twice

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
        buckets = list(map(self._table.get, keys))  # each band's leaders (None: none)
        me = _as_int(sk)
        found = self._candidates(keys, buckets)
        if found:
            lead = self._lead
            best, leader = max((_equal_bins(me, lead[c]), -c) for c in found)
            if best >= self._min:  # the most equal bins, then the lowest URL id
                self._leader[url_id] = -leader
                self._members[-leader][url_id] = best
                return
        self._members[url_id] = {}
        self._lead[url_id] = me
        twice = len(set(keys)) < BANDS  # two bands with one key (chance 2**-57)
        if twice:
            self._twice.add(url_id)
        self._enter(url_id, keys, buckets, twice)

    def _enter(self, url_id: int, keys: list[int], buckets: list[_Bucket | None],
               twice: bool) -> None:
        """Add leader ``url_id`` to the buckets of its band keys (``buckets``: what they
        held before; ``twice``: two of the keys are one)."""
        table = self._table
        for key, bucket in zip(keys, buckets, strict=True):
            if twice and not isinstance(bucket, list):
                bucket = table.get(key)  # one of the page's earlier bands had this key?
            if bucket is None:
                table[key] = url_id
                continue
            if isinstance(bucket, int):
                table[key] = bucket = [bucket, url_id]
            else:
                bucket.append(url_id)
            if len(bucket) >= _SET_FROM:
                big = self._big.get(key)
                if big is None:
                    self._big[key] = set(bucket)
                else:
                    big.add(url_id)

    def _candidates(self, keys: list[int], buckets: list[_Bucket | None]) -> list[int]:
        """The leaders that share at least ``need`` bands with a page whose band keys are
        ``keys`` (``buckets``: each key's leaders), counted as ``Counter`` over the
        buckets' leaders would count them.

        Each band that differs holds a differing bin: a leader sharing fewer than
        ``need`` bands cannot reach the threshold, and is not compared.  A leader in
        ``need`` of the page's buckets is in one of any ``hits - need + 1`` of them
        (pigeonhole): the leaders are counted over the small buckets only, and looked up
        in the sets of at most ``need - 1`` big ones (:data:`_SET_FROM`): on the
        fixture's pages, whose common words make a few buckets hold hundreds of leaders,
        97 % of the pages have at most 3 big buckets.  A leader with one key in two of
        its bands (:attr:`_twice`) can be twice in a bucket: it is counted over the
        buckets themselves.
        """
        need = self._need
        if BANDS - buckets.count(None) < need:
            return []
        ones: list[int] = []  # buckets of one leader
        small: list[list[int]] = []
        big: list[int] = []  # keys
        for key, bucket in zip(keys, buckets, strict=True):
            if bucket is None:
                continue
            if isinstance(bucket, int):
                ones.append(bucket)
            elif len(bucket) < _SET_FROM:
                small.append(bucket)
            else:
                big.append(key)
        table = self._table
        if len(big) >= need:  # the need - 1 biggest by their sets, the others counted
            big.sort(key=lambda key: len(table[key]))  # type: ignore[arg-type]
            cut = len(big) - need + 1
            small += [table[key] for key in big[:cut]]  # type: ignore[misc]
            del big[:cut]
        shared = Counter(chain(ones, *small))
        if not big:
            found = [leader for leader, n in shared.items() if n >= need]
        else:
            sets = [self._big[key] for key in big]
            low = need - len(sets)  # fewer counted: not enough even in every set
            found = []
            for leader, n in shared.items():
                if n >= low:
                    for members in sets:
                        if leader in members:
                            n += 1
                    if n >= need:
                        found.append(leader)
        if self._twice:  # (chance 2**-57 a leader)
            found = [c for c in found if c not in self._twice]
            found += [c for c in self._twice if _count(buckets, c) >= need]
        return found

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
        self._twice.discard(url_id)
        table = self._table
        for key in _band_keys(sk):
            bucket = table[key]
            if isinstance(bucket, int):  # url_id alone
                del table[key]
                continue
            bucket.remove(url_id)
            big = self._big.get(key)
            if big is not None and url_id not in bucket:
                big.discard(url_id)
            if not bucket:
                del table[key]
                self._big.pop(key, None)
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
