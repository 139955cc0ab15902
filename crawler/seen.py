"""The URL-seen test on 64-bit fingerprints: a crawl's URL -> id, in compact memory.

A crawl discovers URLs far faster than it fetches them, so its per-URL memory sets how
far it can grow.  Mercator's answer, kept here: the URL-seen test works on 64-bit
fingerprints, and the URL strings are not held in memory.

:class:`UrlSeen` maps a normalised URL to its dense id.  Fingerprints live in sorted
``int64`` arrays with parallel ``uint32`` arrays of ids (12 bytes per URL): a main run,
and a recent run merged into it once it holds a sixteenth of it (so a merge costs O(1)
amortised per URL); the newest additions wait in a small dict (at most
:data:`RECENT_MAX` entries) before they join the recent run.  The main run grows in
place (``realloc``, which moves pages rather than copying them) and the merge writes it
from the end backwards a window at a time, so a merge needs one window of extra memory,
not a copy of the arrays.  A lookup is a dict probe and a binary search per run;
:meth:`UrlSeen.add_batch` looks up and registers a page's links at once (one
fingerprint pass, one vectorised search per run through the run's *directory*: where
each bucket of fingerprints sharing their top bits starts, 16 to 32 fingerprints a
bucket, at most half a byte a URL, so a look-up reads a bucket's bounds and its few
fingerprints instead of bisecting the whole run).

Collisions never merge two URLs: a fingerprint hit is confirmed against the URL's
stored text (``text_of``, one ``pread``), and a URL whose fingerprint another URL
already has is kept, exactly, in a small dict of its own.  So the test is exact; a
collision costs that URL a dict entry.  The URLs confirmed last are held in a bounded
dict of their own (at most :data:`HOT_MAX` strings, the most recently confirmed kept):
a page links mostly to URLs other pages just linked to (its site's navigation), and a
hit there is a string probe, with no fingerprint search and no ``pread``; the entries
are texts read back and compared, so that dict is exact too.  The fingerprint is
Python's ``hash`` of the string (64-bit SipHash, keyed per process): it is never
stored -- a resume rebuilds the set from the stored URLs -- and no input can be
crafted to collide on purpose.

The URL strings themselves are in :class:`~webcrawl.crawler.url_texts.UrlTexts` (a side
file); the per-URL fields in :class:`~webcrawl.crawler.columns.Column` arrays.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from itertools import islice
from typing import Any

import numpy as np
from webcrawl.storage._compiled import compiled

__all__ = ["UrlSeen", "compile_loops", "release_free_memory"]

#: Recent additions held in a dict before they join the recent sorted run.
RECENT_MAX = 1 << 14
#: Fewest fingerprints of the recent run merged into the main run at once.
MERGE_MIN = 1 << 16
#: The recent run is merged into the main run once it holds this fraction of it.
MERGE_FRACTION = 1 / 16
#: Entries written per step of the in-place merge (its only extra memory).
MERGE_WINDOW = 1 << 18
#: Fingerprints per bucket of a sorted run's directory: on average between this and
#: twice this (the directory costs 4 to 8 bytes a bucket: at most half a byte a URL).
DIR_LOAD = 16
#: Widest bucket searched through the directory; a wider one (fingerprints far from
#: uniform: a test's) is searched by bisection.
DIR_WIDTH_MAX = 256
_STEPS = np.arange(DIR_WIDTH_MAX)
#: Fingerprints a :class:`UrlSeen` holds before its look-ups, merges and directories
#: run as compiled loops (numba, the optional ``fast`` extra) instead of numpy calls:
#: below it a crawl never waits for a compiler, and numpy's cost per call (about a
#: microsecond, whatever the size) is not yet what an add costs most.
COMPILED_MIN = 1 << 20
#: Fewest keys of a look-up that goes through a run's directory: a page's few tens
#: are found faster by one bisection each (``searchsorted``: 1-4 us for 30 keys
#: against the directory's 13-25 us, on runs of a thousand to ten million
#: fingerprints); the directory wins from about a thousand keys (measured).
DIR_KEYS_MIN = 1 << 9
#: Most URLs held in the dict of those just confirmed (the oldest half is dropped
#: when it is full: between half this and this many, about 200 bytes each).  On a
#: 20,000-page site of 20 hosts, 87% of the confirmations a crawl makes are of a URL
#: confirmed before, all of them within the last 16,384 (measured).
HOT_MAX = 1 << 14
#: Bytes an entry of that dict is counted as (the string, the id, the slot).
HOT_BYTES = 200


def _libc_malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


_MALLOC_TRIM = _libc_malloc_trim()


def release_free_memory() -> None:
    """Give the heap's free pages back to the system.

    glibc keeps memory freed inside its heap resident (a growing crawl state frees
    many mid-sized arrays as it replaces them with larger ones: 17 of 66 resident bytes
    per URL at three million URLs, measured) until ``malloc_trim`` returns the free
    pages; elsewhere this does nothing.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def compile_loops() -> bool:
    """Compile the URL-seen test's loops now (or load them from numba's cache on disk)
    rather than at the first add past :data:`COMPILED_MIN`; False without numba."""
    if compiled(_find, "_find_one") is None:
        return False
    seen = UrlSeen(str, compiled_from=0)  # each loop runs once, on types a crawl's have
    for first, urls in enumerate((["a", "b"], ["c"])):
        seen.add_batch(urls, 2 * first)
        seen.merge()
    return True


class _Directory:
    """Where each bucket of a sorted run of fingerprints starts, bucket ``b`` holding
    those whose top bits, as a signed number, are ``b - buckets / 2`` (the order of
    the buckets is that of the fingerprints): a power of two of buckets,
    :data:`DIR_LOAD` to twice that fingerprints each on average.  A look-up
    (:meth:`candidates`) reads its bucket's start, then as many fingerprints from
    there as the widest bucket holds, all keys at once: on ten million fingerprints
    about half the time of a bisection, which misses the cache at each of its 23
    steps (measured)."""

    __slots__ = ("half", "shift", "starts", "steps")

    def __init__(self, fps: np.ndarray, fast: bool = False) -> None:
        n = len(fps)
        bits = max(1, (n // DIR_LOAD).bit_length())
        self.half, self.shift = 1 << (bits - 1), 64 - bits
        starts = np.empty((1 << bits) + 1, dtype=np.uint32 if n < 1 << 32 else np.int64)
        kernel = compiled(_bucket_starts) if fast else None
        if kernel is not None:  # one pass over the run, not a bisection per bucket
            kernel(fps, self.shift, self.half, starts)
        else:
            starts[0], starts[-1] = 0, n
            starts[1:-1] = fps.searchsorted(
                np.arange(1 - self.half, self.half, dtype=np.int64) << self.shift)
        width = int(np.diff(starts).max())
        self.starts = starts
        #: offsets of a bucket's fingerprints (None: too wide a bucket, bisect)
        self.steps = _STEPS[:width] if width <= DIR_WIDTH_MAX else None

    @property
    def nbytes(self) -> int:
        return int(self.starts.nbytes)

    def candidates(self, fps: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """``fps.searchsorted(keys)``, at most ``len(fps) - 1`` (``fps`` is the run the
        directory was made from, not empty): where each key is, if it is there."""
        last = len(fps) - 1
        if self.steps is None or len(keys) < DIR_KEYS_MIN:
            found = fps.searchsorted(keys)
        else:
            lo = self.starts[(keys >> self.shift) + self.half]
            window = fps.take(lo[:, None] + self.steps, mode="clip")
            # Past its bucket a fingerprint is larger than the key, but for the last
            # one, repeated by the clip: counted only if the key is past them all.
            found = lo + (window < keys[:, None]).sum(axis=1)
        np.minimum(found, last, out=found)
        return found


class UrlSeen:
    """Exact URL -> id on 64-bit fingerprints (see the module docstring).

    ``text_of(url_id)`` gives the URL of a known id; it confirms fingerprint hits.
    ``fingerprint`` maps a URL to a signed 64-bit integer (tests pass a colliding one).
    ``compiled_from``: the size from which the compiled loops run, when numba is there
    (None: :data:`COMPILED_MIN` as it is when the set is made).
    """

    def __init__(self, text_of: Callable[[int], str],
                 fingerprint: Callable[[str], int] = hash,
                 compiled_from: int | None = None) -> None:
        self._text_of = text_of
        self._compiled_from = COMPILED_MIN if compiled_from is None else compiled_from
        self._fingerprint = fingerprint
        self._fps = np.empty(0, dtype=np.int64)     # the main run, sorted
        self._ids = np.empty(0, dtype=np.uint32)    # parallel to _fps
        self._run_fps = np.empty(0, dtype=np.int64)  # the recent run, sorted
        self._run_ids = np.empty(0, dtype=np.uint32)
        self._dir = _Directory(self._fps)            # of the main run
        self._run_dir = _Directory(self._run_fps)    # of the recent run
        self._recent: dict[int, int] = {}           # fingerprint -> id, not in a run yet
        self._extra: dict[str, int] = {}            # URLs whose fingerprint is taken
        self._hot: dict[str, int] = {}              # URLs confirmed last (HOT_MAX)
        self._n = 0
        self._miss: int | None = None                # the fingerprint get() last missed

    def __len__(self) -> int:
        return self._n

    @property
    def collisions(self) -> int:
        """URLs kept apart because another URL has their fingerprint."""
        return len(self._extra)

    def _fp_id(self, fp: int) -> int | None:
        """The id registered under fingerprint ``fp``, if any."""
        got = self._recent.get(fp)
        if got is not None:
            return got
        for fps, ids in ((self._run_fps, self._run_ids), (self._fps, self._ids)):
            i = int(fps.searchsorted(fp))
            if i < len(fps) and fps[i] == fp:
                return int(ids[i])
        return None

    def get(self, url: str) -> int | None:
        """The id of ``url``, else None."""
        got = self._hot.get(url)
        if got is not None:
            return got
        if self._extra:
            got = self._extra.get(url)
            if got is not None:
                return got
        fp = self._fingerprint(url)
        url_id = self._fp_id(fp)
        if url_id is None:
            self._miss = fp  # the usual add() that follows needs no second search
            return None
        if self._text_of(url_id) != url:
            return None
        self._hot[url] = url_id
        self._cool()
        return url_id

    def _cool(self) -> None:
        """Keep the dict of URLs confirmed last at most :data:`HOT_MAX` long: past it,
        the newer half is kept (O(1) amortised per confirmation)."""
        hot = self._hot
        if len(hot) > HOT_MAX:
            self._hot = dict(islice(hot.items(), len(hot) - HOT_MAX // 2, None))

    def add(self, url: str, url_id: int) -> None:
        """Register a URL :meth:`get` does not know."""
        fp = self._fingerprint(url)
        self._n += 1
        miss, self._miss = self._miss, None
        if fp != miss and self._fp_id(fp) is not None:
            self._extra[url] = url_id
            return
        self._recent[fp] = url_id
        if len(self._recent) >= RECENT_MAX:
            self._settle()

    def add_batch(self, urls: Sequence[str], first_id: int) -> tuple[np.ndarray, list[int]]:
        """The ids of ``urls``, registering the unknown ones; and where the new ones are.

        A known URL gets its id; each unknown URL, at its first occurrence in
        ``urls``, the next id from ``first_id`` on (a repeat gets the same id).  The
        same as :meth:`get`, then :meth:`add` for each miss, in order: one
        fingerprint pass and one binary search per sorted run for the whole batch.
        Returns the ids (``int64``) and the positions in ``urls`` of the new URLs.
        URLs confirmed lately are found by their text first; only the others are
        fingerprinted and searched for.
        """
        self._miss = None
        if not self._hot:
            return self._add_cold(urls, first_id)
        got = list(map(self._hot.get, urls))
        if None not in got:
            return np.array(got, dtype=np.int64), []
        cold = [k for k, url_id in enumerate(got) if url_id is None]
        if len(cold) == len(urls):
            return self._add_cold(urls, first_id)
        ids, new = self._add_cold([urls[k] for k in cold], first_id)
        for k, url_id in zip(cold, ids.tolist(), strict=True):
            got[k] = url_id
        return np.array(got, dtype=np.int64), [cold[j] for j in new]

    def _add_cold(self, urls: Sequence[str], first_id: int) -> tuple[np.ndarray, list[int]]:
        """:meth:`add_batch` by fingerprint for URLs not confirmed lately."""
        n = len(urls)
        fps = np.fromiter(map(self._fingerprint, urls), dtype=np.int64, count=n)
        fp_list = fps.tolist()
        recent = self._recent
        # Short Python lists, not numpy, below: a page has tens of links, and a numpy
        # call costs about a microsecond whatever its size.
        cand: list[int | None] = list(map(recent.get, fp_list)) if recent else [None] * n
        self._find_in_runs(fps, cand)
        if not self._extra and cand.count(None) == n and len(set(fp_list)) == n:
            # The usual page: no fingerprint known, none twice, no URL kept apart (so
            # every URL is new, and distinct)
            recent.update(zip(fp_list, range(first_id, first_id + n), strict=True))
            self._n += n
            if len(recent) >= RECENT_MAX:
                self._settle()
            return np.arange(first_id, first_id + n, dtype=np.int64), list(range(n))
        ids: list[int | None] = [None] * n
        text_of, hot = self._text_of, self._hot
        for k, url_id in enumerate(cand):
            if url_id is not None and text_of(url_id) == urls[k]:  # confirmed
                ids[k] = hot[urls[k]] = url_id
        self._cool()
        extra = self._extra
        if extra:  # URLs kept apart, whose fingerprint another URL has
            for k, got in enumerate(ids):
                if got is None:
                    ids[k] = extra.get(urls[k])
        unknown = [k for k, got in enumerate(ids) if got is None]
        if not unknown:
            return np.array(ids, dtype=np.int64), []
        new_fps = [fp_list[k] for k in unknown]
        if len(set(new_fps)) == len(unknown) and all(cand[k] is None for k in unknown):
            # The usual page: fingerprints new and distinct (so the URLs are distinct)
            for url_id, k in enumerate(unknown, first_id):
                ids[k] = url_id
            recent.update(zip(new_fps, range(first_id, first_id + len(unknown)), strict=True))
            new = unknown
        else:
            new = self._add_apart(urls, fp_list, unknown, cand, ids, first_id)
        self._n += len(new)
        if len(recent) >= RECENT_MAX:
            self._settle()
        return np.array(ids, dtype=np.int64), new

    def _find_in_runs(self, fps: np.ndarray, cand: list[int | None]) -> None:
        """Set ``cand[k]`` to the id of each fingerprint ``fps[k]`` found in the sorted
        runs: one compiled pass over the batch at scale, else one vectorised search per
        run."""
        runs = ((self._run_fps, self._run_ids, self._run_dir), (self._fps, self._ids, self._dir))
        kernel = compiled(_find, "_find_one") if self._fast else None
        if kernel is not None:
            found = np.empty(len(fps), dtype=np.int64)
            (rf, ri, rd), (mf, mi, md) = runs
            if kernel(fps, rf, ri, rd.starts, rd.shift, rd.half,
                      mf, mi, md.starts, md.shift, md.half, found):
                hit = np.flatnonzero(found >= 0)
                for k, url_id in zip(hit.tolist(), found[hit].tolist(), strict=True):
                    cand[k] = url_id
            return
        for run_fps, run_ids, directory in runs:
            if len(run_fps):
                pos = directory.candidates(run_fps, fps)
                hit = np.flatnonzero(run_fps[pos] == fps)
                if len(hit):
                    for k, url_id in zip(hit.tolist(), run_ids[pos[hit]].tolist(),
                                         strict=True):
                        cand[k] = url_id

    @property
    def _fast(self) -> bool:
        """Whether the compiled loops run (when numba is there): from
        ``compiled_from`` fingerprints on (:data:`COMPILED_MIN` by default)."""
        return self._n >= self._compiled_from

    def _add_apart(self, urls: Sequence[str], fp_list: list[int], unknown: list[int],
                   cand: list[int | None], ids: list[int | None], first_id: int) -> list[int]:
        """:meth:`add_batch` for a batch with repeated URLs or fingerprints already
        taken: one URL at a time."""
        extra, recent = self._extra, self._recent
        batch: dict[str, int] = {}
        new: list[int] = []
        next_id = first_id
        for k in unknown:
            url = urls[k]
            got = batch.get(url)
            if got is not None:
                ids[k] = got
                continue
            ids[k] = batch[url] = next_id
            new.append(k)
            fp = fp_list[k]
            if cand[k] is not None or fp in recent:
                extra[url] = next_id
            else:
                recent[fp] = next_id
            next_id += 1
        return new

    def extend(self, urls: Sequence[str], first_id: int) -> None:
        """Register unknown ``urls`` with ids ``first_id``, ``first_id + 1``, ... at once."""
        if not urls:
            return
        self.merge()
        fps = np.fromiter(map(self._fingerprint, urls), dtype=np.int64, count=len(urls))
        ids = np.arange(first_id, first_id + len(urls), dtype=np.uint32)
        order = np.argsort(fps, kind="stable")
        fps, ids = fps[order], ids[order]
        # A fingerprint repeated in the batch, or already known: those URLs go apart.
        dup = np.zeros(len(fps), dtype=bool)
        dup[1:] = fps[1:] == fps[:-1]
        pos = np.searchsorted(self._fps, fps)
        inside = pos < len(self._fps)
        dup[inside] |= self._fps[pos[inside]] == fps[inside]
        for i in np.flatnonzero(dup).tolist():
            url_id = int(ids[i])
            self._extra[urls[url_id - first_id]] = url_id
        keep = ~dup
        self._merge_main(fps[keep], ids[keep])
        self._n += len(urls)

    def merge(self) -> None:
        """Move every recent addition into the main sorted run; forget the URLs
        confirmed last (memory is short when this is called)."""
        self._miss = None
        self._hot = {}
        self._settle(force=True)

    def _settle(self, force: bool = False) -> None:
        """Move the recent dict into the recent run; the recent run into the main run
        once it holds :data:`MERGE_FRACTION` of it (or when ``force``)."""
        recent = self._recent
        if recent:
            fps = np.fromiter(recent.keys(), dtype=np.int64, count=len(recent))
            ids = np.fromiter(recent.values(), dtype=np.uint32, count=len(recent))
            self._recent = {}
            self._miss = None
            order = np.argsort(fps)
            fps, ids = fps[order], ids[order]
            merge = compiled(_merge_back) if self._fast else None
            if merge is not None and len(self._run_fps):
                n = len(self._run_fps)
                self._run_fps.resize(n + len(fps), refcheck=False)
                self._run_ids.resize(n + len(fps), refcheck=False)
                merge(self._run_fps, self._run_ids, n, fps, ids)
            else:
                pos = self._run_fps.searchsorted(fps)
                self._run_fps = np.insert(self._run_fps, pos, fps)
                self._run_ids = np.insert(self._run_ids, pos, ids)
            self._run_dir = _Directory(self._run_fps, self._fast)
        run = len(self._run_fps)
        if run and (force or run >= max(MERGE_MIN, int(len(self._fps) * MERGE_FRACTION))):
            fps, ids = self._run_fps, self._run_ids
            self._run_fps = np.empty(0, dtype=np.int64)
            self._run_ids = np.empty(0, dtype=np.uint32)
            self._run_dir = _Directory(self._run_fps)
            self._merge_main(fps, ids)
            release_free_memory()  # after each growth of a sixteenth: O(1) amortised

    def _merge_main(self, fps: np.ndarray, ids: np.ndarray) -> None:
        """Merge sorted fingerprints (none of them in the main run) into the main run,
        in place: the arrays grow by ``realloc`` (no copy for large arrays), then the
        merged order is written from the end backwards, a window at a time, so the
        extra memory is one window, not a copy of the run."""
        m = len(fps)
        if not m:
            return
        n = len(self._fps)
        if not n:
            self._fps, self._ids = fps.copy(), ids.copy()
            self._dir = _Directory(self._fps, self._fast)
            return
        self._fps.resize(n + m, refcheck=False)
        self._ids.resize(n + m, refcheck=False)
        main_fps, main_ids = self._fps, self._ids
        merge = compiled(_merge_back) if self._fast else None
        if merge is not None:  # one backward pass, no extra memory
            merge(main_fps, main_ids, n, fps, ids)
            self._dir = _Directory(main_fps, True)
            return
        final = main_fps[:n].searchsorted(fps) + np.arange(m)  # where each new one lands
        hi = n + m
        while hi > 0:
            lo = max(0, hi - MERGE_WINDOW)
            b0, b1 = np.searchsorted(final, (lo, hi)).tolist()
            if b1 == 0:
                break  # main[0:hi] is where it belongs already
            at = final[b0:b1] - lo
            old = np.ones(hi - lo, dtype=bool)
            old[at] = False
            for run, new in ((main_fps, fps), (main_ids, ids)):
                window = np.empty(hi - lo, dtype=run.dtype)
                window[at] = new[b0:b1]
                window[old] = run[lo - b0:hi - b1]
                run[lo:hi] = window
            hi = lo
        self._dir = _Directory(main_fps)

    @property
    def nbytes(self) -> int:
        """Memory held: the arrays, plus an estimate of the dicts (100 B an entry)."""
        return (int(self._fps.nbytes + self._ids.nbytes + self._run_fps.nbytes
                    + self._run_ids.nbytes + self._dir.nbytes + self._run_dir.nbytes)
                + 100 * (len(self._recent) + len(self._extra)) + HOT_BYTES * len(self._hot))


# -- compiled loops (numba, when installed: see COMPILED_MIN) ----------------------

def _bucket_starts(fps: Any, shift: int, half: int,
                   starts: Any) -> None:  # pragma: no cover - compiled by numba
    """A :class:`_Directory`'s ``starts`` for the sorted ``fps``, in one pass."""
    buckets = len(starts) - 1
    b = 0
    starts[0] = 0
    for i in range(len(fps)):
        bucket = (fps[i] >> shift) + half
        while b < bucket:
            b += 1
            starts[b] = i
    while b < buckets:
        b += 1
        starts[b] = len(fps)


def _find_one(key: int, fps: Any, ids: Any, starts: Any, shift: int,
              half: int) -> Any:  # pragma: no cover - compiled by numba
    """The id under fingerprint ``key`` in one sorted run, or -1: a bisection of its
    directory bucket."""
    b = (key >> shift) + half
    lo, hi = np.int64(starts[b]), np.int64(starts[b + 1])
    while lo < hi:
        mid = (lo + hi) >> 1
        if fps[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < len(fps) and fps[lo] == key:
        return np.int64(ids[lo])
    return -1


def _find(keys: Any, a_fps: Any, a_ids: Any, a_starts: Any, a_shift: int, a_half: int,
          b_fps: Any, b_ids: Any, b_starts: Any, b_shift: int, b_half: int,
          out: Any) -> int:  # pragma: no cover - compiled by numba
    """``out[k]``: the id under fingerprint ``keys[k]`` in run a or run b, or -1; returns
    how many were found."""
    hits = 0
    for k in range(len(keys)):
        got = _find_one(keys[k], a_fps, a_ids, a_starts, a_shift, a_half)
        if got < 0:
            got = _find_one(keys[k], b_fps, b_ids, b_starts, b_shift, b_half)
        out[k] = got
        if got >= 0:
            hits += 1
    return hits


def _merge_back(run_fps: Any, run_ids: Any, n: int, fps: Any,
                ids: Any) -> None:  # pragma: no cover - compiled by numba
    """Merge sorted ``fps`` (and their ``ids``), none of them in ``run_fps[:n]``, into
    the run, which has room for them after its ``n`` entries: from the end backwards,
    so nothing is overwritten before it is read."""
    i, j = n - 1, len(fps) - 1
    k = n + j
    while j >= 0:
        if i >= 0 and run_fps[i] > fps[j]:
            run_fps[k], run_ids[k] = run_fps[i], run_ids[i]
            i -= 1
        else:
            run_fps[k], run_ids[k] = fps[j], ids[j]
            j -= 1
        k -= 1
