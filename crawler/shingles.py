"""A page's text sketch: Broder's min-hash resemblance over the 2-word shingles of its text.

Broder et al. [1]_ call two documents near-duplicates when their *resemblance* is high:
the Jaccard similarity ``|S(A) & S(B)| / |S(A) | S(B)|`` of their sets of w-word
shingles (overlapping runs of w words).  A min-hash sketch estimates it from a few
numbers per page: under a random hash, the smallest shingle of A and of B are equal
with probability exactly the resemblance.  This module computes a page's sketch; the
test over sketches is :mod:`webcrawl.crawler.near_seen`.

Contract
--------
* **Text, not markup.**  :func:`page_text` is the text of the parsed page's ``<body>``
  with what is not the page's own content taken out first: ``script``, ``style``,
  ``noscript``, ``template``, the HTML5 elements for site furniture (``nav``,
  ``header``, ``footer``, ``aside``) and elements with the matching ARIA landmark roles
  (``navigation``, ``banner``, ``contentinfo``, ``complementary``, ``search``).  The
  tree is changed in place: call it after the links were read.
* **Shingles.**  Words are runs of ASCII letters and digits and of non-ASCII
  characters, case-folded (ASCII); the features are the *set* of overlapping 2-word
  shingles.  Measured on the fixture's planted near-duplicates
  (``benchmarks/bench_near_dup.py``, docs/results/near-duplicates.md): 2-word shingles
  keep the resemblance of an edited copy high (each changed word touches 2 shingles, 4
  with Broder's w = 4) while distinct pages that share a long notice stay far apart;
  Charikar's 64-bit simhash (Manku et al. [2]_) of the same text reached recall 0.95
  only where its precision had fallen to 0.73.
* **Sketch.**  One-permutation min-hash (Li, Owen and Zhang [3]_): each shingle is
  hashed once to 64 bits; the top 6 bits pick one of :data:`SKETCH_SIZE` = 64 bins and
  a bin keeps its smallest hash; an empty bin takes the next non-empty bin's value
  (rotation densification, Shrivastava and Li [4]_).  A bin's value is kept as its low
  16 bits (b-bit min-hash [5]_: two different values agree by chance with probability
  2**-16), so a sketch is 64 uint16, 128 bytes.  The share of equal bins of two
  sketches estimates their resemblance (standard error about
  ``sqrt(r (1 - r) / 64)``: 0.05 at r = 0.8).
* **Deterministic.**  The same text gives the same sketch in every process and on every
  platform: words are hashed with CRC-32 and shingles with a SplitMix64 finaliser,
  never Python's salted ``hash``.
* **Cost.**  One regular-expression pass, a CRC-32 call a word, then vectorised numpy
  and a sort of the shingles (about 15 numpy calls a page); only the first
  :data:`MAX_TEXT_BYTES` of the text are read.  A text with
  fewer than :data:`MIN_WORDS` words has no sketch (``None``): too little text to call
  two pages near copies.

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
"""

from __future__ import annotations

import re
import zlib

import numpy as np
from selectolax.lexbor import LexborHTMLParser

__all__ = ["MAX_TEXT_BYTES", "MIN_WORDS", "SKETCH_SIZE", "page_text", "resemblance",
           "shingle_hashes", "sketch", "text_sketch", "word_hashes"]

#: Bytes of a page's text read for its sketch (the rest is ignored).
MAX_TEXT_BYTES = 256 * 1024
#: Fewer words than this: no sketch.
MIN_WORDS = 8
#: Bins of a sketch (a power of two: a bin is the top bits of a shingle's hash).
SKETCH_SIZE = 64
_BIN_BITS = 6
#: Elements whose text is not the page's own content.
_FURNITURE = ("script, style, noscript, template, nav, header, footer, aside, "
              '[role="navigation"], [role="banner"], [role="contentinfo"], '
              '[role="complementary"], [role="search"]')

_U64 = np.uint64
_MASK64 = (1 << 64) - 1
#: Multiplier that mixes a word's hash into its pair's.
_PAIR = 0x9E3779B97F4A7C15

#: A word: ASCII letters and digits, and every non-ASCII byte (UTF-8 sequences of
#: other scripts stay inside their words); matched after ASCII case folding.
_WORD = re.compile(rb"[0-9a-z\x80-\xff]+")
_LOWER = bytes.maketrans(bytes(range(65, 91)), bytes(range(97, 123)))


def page_text(tree: LexborHTMLParser) -> str:
    """The text of the page's own content (see the module docstring); changes ``tree``."""
    # One selector pass; matches come in document order, so in reverse a node's matched
    # descendants are removed before it (never a node already freed with its ancestor).
    for node in reversed(tree.css(_FURNITURE)):
        node.decompose()
    body = tree.body
    if body is None:
        return ""
    return body.text(deep=True, separator=" ")


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, element-wise (every input bit moves every output bit)."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> _U64(30))
        x = x * _U64(0xBF58476D1CE4E5B9)
        x = x ^ (x >> _U64(27))
        x = x * _U64(0x94D049BB133111EB)
        out: np.ndarray = x ^ (x >> _U64(31))
        return out


def word_hashes(text: str | bytes) -> np.ndarray:
    """The hash of each word of ``text``, in order: CRC-32 of its bytes (uint64 holding
    32 bits; one C call a word, unsalted), case-folded (ASCII)."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    words = _WORD.findall(raw[:MAX_TEXT_BYTES].translate(_LOWER))
    return np.fromiter(map(zlib.crc32, words), dtype=_U64, count=len(words))


def shingle_hashes(words: np.ndarray, w: int = 2) -> np.ndarray:
    """The 64-bit hashes of the overlapping ``w``-word shingles of ``words`` (a 2-word
    shingle's two 32-bit word hashes side by side, mixed: distinct pairs of word hashes
    never collide)."""
    with np.errstate(over="ignore"):
        if w == 1:
            return _mix(words)
        features = (words[:-1] << _U64(32)) | words[1:]
        for k in range(2, w):
            features = features * _U64(_PAIR) + words[k:]
            features = features[: words.size - k]
        return _mix(features)


#: The first hash of each bin, and the offset a densified bin adds per bin it moved.
_BIN_STARTS = np.arange(SKETCH_SIZE, dtype=_U64) << _U64(64 - _BIN_BITS)
_ROTATION = np.uint16(0x9E37)


def sketch(features: np.ndarray) -> np.ndarray:
    """The one-permutation min-hash sketch of a set of 64-bit feature hashes: 64 uint16
    (see the module docstring).  ``features`` must not be empty."""
    ordered = np.sort(features)
    at = np.searchsorted(ordered, _BIN_STARTS)
    at_ok = np.minimum(at, ordered.size - 1)
    values = ordered[at_ok]
    filled = (at < ordered.size) & ((values >> _U64(64 - _BIN_BITS)) == np.arange(
        SKETCH_SIZE, dtype=_U64))
    low = (values & _U64(0xFFFF)).astype(np.uint16)
    if filled.all():
        return low
    # Rotation: an empty bin takes the next filled bin's value (circularly), plus an
    # offset per bin moved, so two pages agree on it only if they agree there.
    idx = np.arange(SKETCH_SIZE)
    doubled = np.concatenate([np.where(filled, idx, 2 * SKETCH_SIZE),
                              np.where(filled, idx + SKETCH_SIZE, 2 * SKETCH_SIZE)])
    nxt = np.minimum.accumulate(doubled[::-1])[::-1][:SKETCH_SIZE]
    with np.errstate(over="ignore"):
        moved = (nxt - idx).astype(np.uint16)
        dense: np.ndarray = low[nxt % SKETCH_SIZE] + moved * _ROTATION
    return dense


def text_sketch(text: str | bytes, *, w: int = 2) -> np.ndarray | None:
    """The sketch of a text's ``w``-word shingle set (see the module docstring); None
    below :data:`MIN_WORDS` words.  ``w`` other than 2 is for the benchmark."""
    words = word_hashes(text)
    if words.size < max(MIN_WORDS, w):
        return None
    return sketch(shingle_hashes(words, w))


def resemblance(a: np.ndarray, b: np.ndarray) -> float:
    """Estimated resemblance of two pages from their sketches: the share of equal bins."""
    return float(np.count_nonzero(a == b)) / SKETCH_SIZE
