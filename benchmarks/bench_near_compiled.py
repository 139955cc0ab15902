"""What a compiled text sketch would cost a crawl: a numba kernel that gives
``shingles.text_sketches``'s sketches bit for bit, against the numpy pipeline, with
numba's fixed costs.

The crawl's sketch is numpy (:mod:`webcrawl.crawler.shingles`): about a dozen calls a
batch of texts, most of their cost numpy's per-call overhead.  One loop over the
texts' bytes, compiled, does the same work several times faster; but numba (the
optional ``fast`` extra, which the frontier and the URL-seen test use from a million
URLs) is dear to load: its import, and the first call of a function even when its
machine code comes from numba's cache on disk.  This script measures all three:

* the sketch's CPU a page, numpy and compiled, on the same fixture texts in batches
  of 64 (interleaved rounds; the page's text, found before, is not counted), and
  whether every sketch is the same;
* in fresh interpreters, the CPU of ``import numba`` beside ``import numpy``, and of
  the compiled sketch's first call with its cache already on disk.

The kernel is a measurement, not a second sketch: the crawl does not use it
(docs/results/near-duplicates.md says why).  Needs numba (``pip install -e '.[fast]'``)::

    python benchmarks/bench_near_compiled.py [--cost-pages 2000 --rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from bench_near_dup import fixture_pages
from selectolax.lexbor import LexborHTMLParser
from webcrawl.crawler.page_text import MAX_TEXT_BYTES, page_text
from webcrawl.crawler.shingles import _BASE, _FOLD, MIN_WORDS, SKETCH_SIZE, text_sketches

_MIX = 0x94D049BB133111EB
_ROTATION = 0x9E37
_W = 2  # the crawl's 2-word shingles

#: The kernel's source, compiled here and in the fresh interpreters that time its first
#: call (the same text: the same cache entry).
KERNEL = textwrap.dedent(f"""
    import numpy as np
    from numba import njit

    @njit(cache=True)
    def sketch_kernel(codes, offsets, lengths, out, ok):
        # codes: each text's case-folded bytes, 0 between words, one 0 after each text.
        empty = np.uint64(0xFFFFFFFFFFFFFFFF)
        base = np.uint64({_BASE})
        mix = np.uint64({_MIX})
        mins = np.empty({SKETCH_SIZE}, dtype=np.uint64)
        for t in range(offsets.size):
            mins[:] = empty
            end = offsets[t] + lengths[t]
            # A word's hash h = sum byte * P**i and P**len; a shingle "w1 NUL w2" is
            # h1 + P**(len1 + 1) * h2, then mixed (shingles.shingle_hashes).
            prev_h = np.uint64(0)
            prev_pw = np.uint64(1)
            have_prev = False
            h = np.uint64(0)
            pw = np.uint64(1)
            in_word = False
            count = 0
            for i in range(offsets[t], end + 1):
                c = codes[i]
                if c != 0:
                    h += np.uint64(c) * pw
                    pw *= base
                    in_word = True
                elif in_word:
                    if have_prev:
                        s = (prev_h + prev_pw * base * h) * mix
                        s ^= s >> np.uint64(31)
                        b = np.int64(s >> np.uint64(58))
                        if s < mins[b]:
                            mins[b] = s
                        count += 1
                    prev_h = h
                    prev_pw = pw
                    have_prev = True
                    h = np.uint64(0)
                    pw = np.uint64(1)
                    in_word = False
            ok[t] = count > {MIN_WORDS - _W}
            # Rotation densification: an empty bin takes the next filled bin's value
            # (circularly) plus an offset a bin moved (shingles._densify).
            src = -1
            for b in range(2 * {SKETCH_SIZE} - 1, -1, -1):
                if mins[b % {SKETCH_SIZE}] != empty:
                    src = b
                if b < {SKETCH_SIZE}:
                    if src < 0:
                        ok[t] = False
                        break
                    low = mins[src % {SKETCH_SIZE}] & np.uint64(0xFFFF)
                    moved = np.uint64((src - b) % {SKETCH_SIZE})
                    out[t, b] = np.uint16((low + moved * np.uint64({_ROTATION}))
                                          & np.uint64(0xFFFF))
""")

#: Where the kernel's module and numba's cache of it live (outside the source tree).
_CACHE_HOME = (Path(tempfile.gettempdir()) / "webcrawl-bench-near-compiled"
               / "near_compiled_kernel.py")


def _kernel_module() -> Path:
    """The kernel as a module file (numba's cache sits beside its source)."""
    _CACHE_HOME.parent.mkdir(parents=True, exist_ok=True)
    if not _CACHE_HOME.exists() or _CACHE_HOME.read_text() != KERNEL:
        _CACHE_HOME.write_text(KERNEL)
    return _CACHE_HOME


#: Texts whose sketches take the kernel's other branches: too few words, few shingles
#: (empty bins to fill), other scripts, punctuation runs, past the length cap.
_EDGE_TEXTS = ["", "one", "a b c d e f g h", "a b c d e f g h i", "w " * 9 + "x",
               "Größe straße ÉTÉ 東京 タワー ... nine ten eleven twelve", "--- a -- b ;; c " * 5,
               " ".join(f"word{i}" for i in range(30)),
               " ".join(f"w{i % 977}" for i in range(MAX_TEXT_BYTES // 3))]


def compiled_sketches(texts: Sequence[str], kernel: object) -> list[np.ndarray | None]:
    """:func:`~webcrawl.crawler.shingles.text_sketches` of ``texts`` by the kernel."""
    capped = [t.encode("utf-8", "surrogatepass")[:MAX_TEXT_BYTES] for t in texts]
    lengths = np.fromiter(map(len, capped), dtype=np.int64, count=len(capped))
    offsets = np.cumsum(lengths + 1) - (lengths + 1)
    codes = np.frombuffer((b"\0".join(capped) + b"\0").translate(_FOLD), dtype=np.uint8)
    out = np.empty((len(capped), SKETCH_SIZE), dtype=np.uint16)
    ok = np.empty(len(capped), dtype=np.bool_)
    kernel(codes, offsets, lengths, out, ok)  # type: ignore[operator]
    return [row if k else None for row, k in zip(out, ok.tolist(), strict=True)]


def _fresh_cpu(script: str) -> float:
    """CPU seconds a fresh interpreter reports for ``script`` (which prints them)."""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=_CACHE_HOME.parent)
    return float(out.stdout.split()[-1])


def fixed_costs(rounds: int) -> dict[str, float]:
    """Median CPU seconds of numpy's and numba's imports and of the kernel's first call
    from numba's cache, each in a fresh interpreter."""
    timer = "import time\nt = time.process_time()\n"
    scripts = {
        "import numpy": timer + "import numpy\nprint(time.process_time() - t)",
        "import numpy, numba": timer + "import numpy, numba\nprint(time.process_time() - t)",
        "first call, cached": (
            "import numpy as np, numba\nfrom near_compiled_kernel import sketch_kernel\n"
            + timer + "c = np.zeros(20, np.uint8); z = np.zeros(1, np.int64)\n"
            "sketch_kernel(c, z, z + 19, np.empty((1, 64), np.uint16), np.empty(1, np.bool_))\n"
            "print(time.process_time() - t)"),
    }
    _fresh_cpu(scripts["first call, cached"])  # fills the cache
    return {name: statistics.median(_fresh_cpu(s) for _ in range(rounds))
            for name, s in scripts.items()}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=8000)
    ap.add_argument("--pairs", type=int, default=1200)
    ap.add_argument("--similar", type=int, default=1000)
    ap.add_argument("--cost-pages", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    try:
        import numba  # noqa: F401
    except ImportError:
        print("bench_near_compiled: needs numba (pip install -e '.[fast]')", file=sys.stderr)
        return 2
    sys.path.insert(0, str(_kernel_module().parent))
    from near_compiled_kernel import sketch_kernel

    _, pages = fixture_pages(args.pages, 20, args.pairs, args.similar, seed=0)
    texts = [page_text(LexborHTMLParser(body)) for body, _ in pages[:args.cost_pages]]
    batches = [texts[i:i + args.batch] for i in range(0, len(texts), args.batch)]
    checked = [*batches, _EDGE_TEXTS, *([t] for t in _EDGE_TEXTS)]
    want = [s for b in checked for s in text_sketches(b)]
    got = [s for b in checked for s in compiled_sketches(b, sketch_kernel)]
    differ = sum((a is None) != (b is None) or (a is not None and not np.array_equal(a, b))
                 for a, b in zip(want, got, strict=True))
    print(f"{len(texts):,} fixture texts in batches of {args.batch} and {len(_EDGE_TEXTS)} "
          f"edge cases: {differ} of {len(want):,} sketches differ, "
          f"{sum(s is None for s in want)} without a sketch")
    times: dict[str, list[float]] = {"numpy": [], "compiled": []}
    for _ in range(args.rounds):
        for name, fn in (("numpy", text_sketches),
                         ("compiled", lambda b: compiled_sketches(b, sketch_kernel))):
            t = time.process_time()
            for b in batches:
                fn(b)
            times[name].append((time.process_time() - t) / len(texts) * 1e6)
    for name, us in times.items():
        print(f"sketch, {name}: {statistics.median(us):.1f} us a page "
              f"({min(us):.1f}-{max(us):.1f}, {args.rounds} rounds)")
    for name, cpu in fixed_costs(args.rounds).items():
        print(f"fresh interpreter, {name}: {cpu:.3f} CPU-s (median of {args.rounds})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
