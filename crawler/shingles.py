"""A page's text sketch: Broder's min-hash resemblance over the 2-word shingles of its text.

Broder et al. [1]_ call two documents near-duplicates when their *resemblance* is high:
the Jaccard similarity ``|S(A) & S(B)| / |S(A) | S(B)|`` of their sets of w-word
shingles (overlapping runs of w words).  A min-hash sketch estimates it from a few
numbers per page: under a random hash, the smallest shingle of A and of B are equal
with probability exactly the resemblance.  This module computes a page's sketch; the
test over sketches is :mod:`webcrawl.crawler.near_seen`.

Contract
--------
* **Text, not markup.**  :func:`page_text` (:mod:`webcrawl.crawler.page_text`, which
  does not import numpy) is the text of the parsed page's ``<body>`` without the site's
  furniture.
* **Shingles.**  Words are runs of ASCII letters and digits and of non-ASCII bytes
  (UTF-8 sequences of other scripts stay inside their words), case-folded (ASCII); the
  features are the *set* of overlapping 2-word shingles.  Measured on the fixture's
  planted near-duplicates (``benchmarks/bench_near_dup.py``,
  docs/results/near-duplicates.md): 2-word shingles keep the resemblance of an edited
  copy high (each changed word touches 2 shingles, 4 with Broder's w = 4) while
  distinct pages that share a long notice stay far apart; Charikar's 64-bit simhash
  (Manku et al. [2]_) of the same text reached recall 0.95 only where its precision
  had fallen to 0.73.
* **Hashes, vectorised over the text's bytes.**  A shingle's hash is a polynomial hash
  modulo 2**64 (Karp and Rabin [6]_) of its words joined by one NUL byte (so "ab c"
  and "a bc" differ), then mixed by a multiply and an xor-shift.  Every word's hash
  comes from one prefix sum of ``byte * P**position`` over the case-folded text,
  divided back by ``P**start`` (``P`` odd, so invertible modulo 2**64); a shingle
  chains its words' hashes with ``P**(length + 1)``.  No Python runs per word: about
  a dozen numpy calls a page, whatever its length.
* **Sketch.**  One-permutation min-hash (Li, Owen and Zhang [3]_): the top 6 bits of a
  shingle's hash pick one of :data:`SKETCH_SIZE` = 64 bins and a bin keeps its
  smallest hash (one ``np.minimum.at``); an empty bin takes the next non-empty bin's
  value (rotation densification, Shrivastava and Li [4]_).  A bin's value is kept as
  its low 16 bits (b-bit min-hash [5]_: two different values agree by chance with
  probability 2**-16), so a sketch is 64 uint16, 128 bytes.  The share of equal bins
  of two sketches estimates their resemblance (standard error about
  ``sqrt(r (1 - r) / 64)``: 0.05 at r = 0.8).
* **Batches.**  :func:`text_sketches` gives the :func:`text_sketch` of many texts, bit
  for bit, with one set of numpy calls per 32 KiB of text (a page's sketch costs mostly
  numpy's per-call overhead: about half of it saved on fixture pages).
* **Deterministic.**  The same text gives the same sketch in every process and on every
  platform: unsigned 64-bit arithmetic wraps the same everywhere, and Python's salted
  ``hash`` is never used.
* **Cost.**  Measured in ``benchmarks/bench_near_dup.py`` (the results page): the
  page's text, then numpy over its bytes; only the first :data:`MAX_TEXT_BYTES` of the
  text are read, and the power tables (2 x 2 MiB) are made at the first sketch.  A
  text with fewer than :data:`MIN_WORDS` words has no sketch (``None``): too little text
  to call two pages near copies.

References
----------
.. [1] A. Z. Broder, S. C. Glassman, M. S. Manasse and G. Zweig, "Syntactic
   clustering of the web", WWW6, 1997.
.. [2] G. S. Manku, A. Jain and A. Das Sarma, "Detecting near-duplicates for web
   crawling", WWW 2007.
.. [3] P. Li, A. B. Owen and C.-H. Zhang, "One permutation hashing", NIPS 2012.
.. [4] A. Shrivastava and P. Li, "Densifying one permutation hashing via rotation for
   fast near neighbor search", ICML 2014.
.. [5] P. Li and A. C. König, "b-bit minwise hashing", WWW 2010.
.. [6] R. M. Karp and M. O. Rabin, "Efficient randomized pattern-matching
   algorithms", IBM Journal of Research and Development 31(2), 1987.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from webcrawl.crawler.page_text import MAX_TEXT_BYTES, page_text

__all__ = ["MAX_TEXT_BYTES", "MIN_WORDS", "SKETCH_SIZE", "page_text", "resemblance",
           "shingle_hashes", "sketch", "text_sketch", "text_sketches"]

#: Fewer words than this: no sketch.
MIN_WORDS = 8
#: Bins of a sketch (a power of two: a bin is the top bits of a shingle's hash).
SKETCH_SIZE = 64
_BIN_SHIFT = np.uint64(64 - 6)
_U64 = np.uint64
#: Byte -> its code in a word (ASCII letters folded to lower case), 0 between words.
_FOLD = bytes(c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 or c >= 128
              else 0 for c in range(256))
#: The polynomial hash's base (odd: invertible modulo 2**64).
_BASE = 0x9E3779B97F4A7C15
#: The final mix: SplitMix64's last multiply and xor-shift (the polynomial hash's low
#: bits depend only on the bytes' low bits; the shift brings the high bits down).
_MIX = _U64(0x94D049BB133111EB)
_SHIFT = _U64(31)
_EMPTY = _U64(0xFFFF_FFFF_FFFF_FFFF)


@functools.cache
def _powers() -> tuple[np.ndarray, np.ndarray]:
    """``_BASE ** i`` and its inverse modulo 2**64, for i up to the text cap (+ 2)."""
    n = MAX_TEXT_BYTES + 2
    tables = []
    for base in (_BASE, pow(_BASE, -1, 1 << 64)):
        out = np.empty(n, dtype=_U64)
        out[0], k = 1, 1
        while k < n:  # doubling: out[k:2k] = out[:k] * base**k
            m = min(k, n - k)
            np.multiply(out[:m], _U64(pow(base, k, 1 << 64)), out=out[k:k + m])
            k += m
        tables.append(out)
    return tables[0], tables[1]


def shingle_hashes(text: str | bytes, w: int = 2) -> np.ndarray:
    """The 64-bit hashes of the overlapping ``w``-word shingles of ``text``, in order
    (see the module docstring); empty below ``w`` words."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    power, inverse = _powers()
    # Case-folded, a 0 for every byte between words, one 0 before and after ...
    codes = np.frombuffer((b"\0" + raw[:MAX_TEXT_BYTES] + b"\0").translate(_FOLD),
                          dtype=np.uint8)
    in_word = codes.view(np.bool_)
    keep = np.empty(codes.size, dtype=np.bool_)
    keep[0] = True
    np.logical_or(in_word[1:], in_word[:-1], out=keep[1:])
    # ... then each run of 0s cut to one: "0 w1 0 w2 0 ... wn 0".
    joined = codes[keep]
    zeros = np.flatnonzero(joined == 0)
    if zeros.size <= w:
        return np.empty(0, dtype=_U64)
    # Shingle j is the bytes between zeros j and j + w: sum of byte * P**(i - start).
    prefix = np.cumsum(joined * power[:joined.size])
    at_zeros = prefix[zeros]
    shingles: np.ndarray = at_zeros[w:] - at_zeros[:-w]
    shingles *= inverse[1:][zeros[:-w]]
    shingles *= _MIX
    shingles ^= shingles >> _SHIFT
    return shingles


#: The offset a densified bin adds per bin it moved.
_ROTATION = np.uint16(0x9E37)
_BINS = np.arange(SKETCH_SIZE)
_NO_MINS = np.full(SKETCH_SIZE, _EMPTY)


def sketch(features: np.ndarray) -> np.ndarray:
    """The one-permutation min-hash sketch of a set of 64-bit feature hashes: 64 uint16
    (see the module docstring).  ``features`` must not be empty."""
    mins = _NO_MINS.copy()
    np.minimum.at(mins, (features >> _BIN_SHIFT).view(np.int64), features)
    return _densify(mins)


def _densify(mins: np.ndarray) -> np.ndarray:
    """A sketch from its bins' least hashes (all ones: an empty bin)."""
    low = mins.astype(np.uint16)  # the low 16 bits
    # (A bin whose least hash is all ones is taken as empty: chance 2**-58 a page.)
    filled = np.flatnonzero(mins != _EMPTY)
    if filled.size == SKETCH_SIZE:
        return low
    # Rotation: an empty bin takes the next filled bin's value (circularly), plus an
    # offset per bin moved, so two pages agree on it only if they agree there.
    source = filled[np.searchsorted(filled, _BINS) % filled.size]
    moved = ((source - _BINS) % SKETCH_SIZE).astype(np.uint16)
    dense: np.ndarray = low[source] + moved * _ROTATION
    return dense


def text_sketch(text: str | bytes, *, w: int = 2) -> np.ndarray | None:
    """The sketch of a text's ``w``-word shingle set (see the module docstring); None
    below :data:`MIN_WORDS` words.  ``w`` other than 2 is for the benchmark."""
    features = shingle_hashes(text, w)
    if features.size <= max(MIN_WORDS, w) - w:
        return None
    return sketch(features)


def resemblance(a: np.ndarray, b: np.ndarray) -> float:
    """Estimated resemblance of two pages from their sketches: the share of equal bins."""
    return float(np.count_nonzero(a == b)) / SKETCH_SIZE


#: Bytes of text one pipeline of :func:`text_sketches` takes at most (a longer text goes
#: alone): more pays less per-call overhead but falls out of the CPU's caches.
_BATCH_BYTES = 32 * 1024


def text_sketches(texts: Sequence[str | bytes]) -> list[np.ndarray | None]:
    """:func:`text_sketch` of each text (``w`` = 2), bit for bit, with one numpy pipeline
    for as many texts as fit in the power tables: a page's sketch costs mostly numpy's
    per-call overhead, which a batch pays once."""
    raws = [t.encode("utf-8", "surrogatepass") if isinstance(t, str) else t for t in texts]
    out: list[np.ndarray | None] = []
    start, room = 0, _BATCH_BYTES
    for end, raw in enumerate(raws):
        size = min(len(raw), MAX_TEXT_BYTES) + 2
        if size > room and end > start:
            out += _batch_sketches(raws[start:end])
            start, room = end, _BATCH_BYTES
        room -= size
    out += _batch_sketches(raws[start:])
    return out


def _batch_sketches(raws: Sequence[bytes], w: int = 2) -> list[np.ndarray | None]:
    """The sketches of texts whose capped codes fit in the power tables together.

    The texts' codes are laid end to end, each as :func:`shingle_hashes` lays it out;
    a shingle's hash does not depend on where its bytes sit (it is divided back by
    ``P**start``), and a shingle whose words span two texts is dropped.
    """
    if not raws:
        return []
    power, inverse = _powers()
    capped = [raw[:MAX_TEXT_BYTES] for raw in raws]
    # Each text as "\0" + text + "\0", end to end (one join: no copy a text).
    lengths = np.fromiter(map(len, capped), dtype=np.int64, count=len(capped)) + 2
    offsets = np.cumsum(lengths) - lengths
    codes = np.frombuffer((b"\0" + b"\0\0".join(capped) + b"\0").translate(_FOLD),
                          dtype=np.uint8)
    in_word = codes.view(np.bool_)
    keep = np.empty(codes.size, dtype=np.bool_)
    keep[0] = True
    np.logical_or(in_word[1:], in_word[:-1], out=keep[1:])
    keep[offsets] = True  # every text's leading 0, as in shingle_hashes
    joined = codes[keep]
    # A text's first code in ``joined``: the codes kept before it (no index array of
    # the kept codes: a third less time for the whole sketch on fixture pages).
    kept = np.add.reduceat(keep, offsets, dtype=np.int64)
    starts = np.cumsum(kept) - kept
    zeros = np.flatnonzero(joined == 0)
    page = np.searchsorted(starts, zeros, side="right") - 1
    prefix = np.multiply(joined, power[:joined.size])
    np.cumsum(prefix, out=prefix)
    at_zeros = prefix[zeros]
    shingles = at_zeros[w:] - at_zeros[:-w]
    shingles *= inverse[1:][zeros[:-w]]
    shingles *= _MIX
    shingles ^= shingles >> _SHIFT
    owner = page[:-w]
    inside = owner == page[w:]
    shingles, owner = shingles[inside], owner[inside]
    counts = np.bincount(owner, minlength=len(raws))
    mins = np.full(len(raws) * SKETCH_SIZE, _EMPTY)
    np.minimum.at(mins, owner * SKETCH_SIZE + (shingles >> _BIN_SHIFT).view(np.int64),
                  shingles)
    rows = mins.reshape(len(raws), SKETCH_SIZE)
    # Rotation as in sketch(), for every row at once: an empty bin's source is the
    # first filled bin at or after it, circularly (the row laid twice end to end).
    at = np.where(rows != _EMPTY, _BINS, 2 * SKETCH_SIZE)
    ahead = np.minimum.accumulate(np.concatenate((at, at + SKETCH_SIZE), axis=1)[:, ::-1],
                                  axis=1)[:, ::-1]
    source = ahead[:, :SKETCH_SIZE] % SKETCH_SIZE
    moved = ((source - _BINS) % SKETCH_SIZE).astype(np.uint16)
    dense = np.take_along_axis(rows.astype(np.uint16), source, axis=1) + moved * _ROTATION
    enough = counts > MIN_WORDS - w
    return [row if ok else None for row, ok in zip(dense, enough.tolist(), strict=True)]
