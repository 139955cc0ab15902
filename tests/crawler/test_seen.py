"""Compact per-URL state: the fingerprint URL-seen test (crawler.seen), the URL texts
(crawler.url_texts) and the growable columns (crawler.columns)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import webcrawl.crawler.seen as seen_module
import webcrawl.crawler.url_texts as texts_module
from webcrawl.crawler.columns import Column
from webcrawl.crawler.seen import UrlSeen
from webcrawl.crawler.url_texts import UrlTexts

#: The sizes from which UrlSeen runs its compiled loops: the default (these small sets
#: stay on numpy) and 0 (compiled throughout, when numba is installed).
PATHS = pytest.mark.parametrize("compiled_from", [seen_module.COMPILED_MIN, 0],
                                ids=["numpy", "compiled"])


def _path(compiled_from: int) -> int:
    if compiled_from == 0:
        pytest.importorskip("numba")
    return compiled_from


def _urls(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = {f"http://h{rng.randrange(50)}.test/p/{rng.randrange(10**6)}?q=é{rng.randrange(9)}"
           for _ in range(n)}
    return sorted(out)


@PATHS
@pytest.mark.parametrize("fingerprint", [hash, lambda url: len(url) % 7],
                         ids=["siphash", "colliding"])
def test_url_seen_is_exact_against_a_dict(monkeypatch: pytest.MonkeyPatch,
                                          fingerprint: object, compiled_from: int) -> None:
    """Whatever the fingerprints (here also one where nearly every URL collides), the
    set answers as a dict of the URLs would: hits are confirmed against the text."""
    monkeypatch.setattr(seen_module, "MERGE_MIN", 50)  # many batch merges
    monkeypatch.setattr(seen_module, "HOT_MAX", 64)  # URLs confirmed last: dropped often
    monkeypatch.setattr(texts_module, "TEXT_BUFFER", 300)  # texts in file and buffer
    urls = _urls(3000, 1)
    rng = random.Random(2)
    rng.shuffle(urls)
    known, unknown = urls[:2000], urls[2000:]
    texts = UrlTexts()
    seen = UrlSeen(texts.__getitem__, fingerprint,  # type: ignore[arg-type]
                   compiled_from=_path(compiled_from))
    oracle: dict[str, int] = {}
    preloaded = known[:700]  # a resume's bulk load, then live adds
    texts.extend(preloaded)
    seen.extend(preloaded, 0)
    oracle.update((u, i) for i, u in enumerate(preloaded))
    for url in known[700:]:
        assert seen.get(url) is None
        texts.append(url)
        seen.add(url, len(oracle))
        oracle[url] = len(oracle)
        probe = rng.choice(known[:len(oracle)])
        assert seen.get(probe) == oracle[probe]
    assert len(seen) == len(oracle) == 2000
    assert [seen.get(u) for u in known] == [oracle[u] for u in known]
    assert all(seen.get(u) is None for u in unknown)
    assert [texts[i] for i in range(len(texts))] == list(oracle)
    if fingerprint is not hash:
        # one URL per distinct fingerprint in the arrays, every other one apart
        assert seen.collisions == 2000 - len({len(u) % 7 for u in known})


def test_url_texts_round_trip_across_the_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(texts_module, "TEXT_BUFFER", 64)
    texts = UrlTexts()
    urls = [f"http://a.test/{'x' * (i % 40)}/ü{i}" for i in range(500)]
    for url in urls[:250]:
        texts.append(url)
    texts.extend(urls[250:])
    assert [texts[i] for i in range(500)] == urls
    assert texts.nbytes < 500 * 8 + 64 + 8 * 1024  # offsets and a buffer: no strings
    texts.close()


def test_column_grows_and_reads_back() -> None:
    col = Column(np.uint32)
    for i in range(10):
        col.append(i)
    col.extend([10, 11])
    col.resize(15)
    assert col.array.tolist() == [*range(12), 0, 0, 0] and len(col) == 15
    assert col.array.dtype == np.uint32 and col.nbytes == 15 * 4
    col[3] = 7
    assert col[3] == 7 and col.slice(2, 5).tolist() == [2, 7, 4]
    assert col.slice(14, 99).tolist() == [0] and col.slice(20).tolist() == []
    with pytest.raises(IndexError):
        col[15]


@PATHS
@pytest.mark.parametrize("fingerprint", [hash, lambda url: len(url) % 7 - 3],
                         ids=["siphash", "colliding"])
def test_batches_give_the_ids_of_one_url_at_a_time(monkeypatch: pytest.MonkeyPatch,
                                                   fingerprint: object,
                                                   compiled_from: int) -> None:
    """``add_batch`` on page-like batches (known URLs, repeats within a page, new ones)
    gives the same ids and the same new URLs as ``get`` then ``add`` one at a time, in
    order, through every kind of merge (dict into the recent run, the recent run into
    the main run in windows), whatever the fingerprints."""
    monkeypatch.setattr(seen_module, "RECENT_MAX", 40)
    monkeypatch.setattr(seen_module, "MERGE_MIN", 100)
    monkeypatch.setattr(seen_module, "MERGE_WINDOW", 16)
    monkeypatch.setattr(seen_module, "HOT_MAX", 16)
    monkeypatch.setattr(texts_module, "TEXT_BUFFER", 500)
    monkeypatch.setattr(texts_module, "TEXT_BLOCK_BITS", 5)  # blocks of 32 URL texts
    monkeypatch.setattr(texts_module, "TEXT_BLOCK", 32)
    monkeypatch.setattr(texts_module, "_BLOCK_MASK", 31)
    pool = _urls(4000, 3)
    rng = random.Random(4)
    texts = UrlTexts()
    seen = UrlSeen(texts.__getitem__, fingerprint,  # type: ignore[arg-type]
                   compiled_from=_path(compiled_from))
    oracle: dict[str, int] = {}
    preloaded = pool[:300]  # a resume's bulk load first
    texts.extend(preloaded)
    seen.extend(preloaded, 0)
    oracle.update((u, i) for i, u in enumerate(preloaded))
    for _ in range(150):
        page = [rng.choice(pool) for _ in range(rng.randrange(0, 60))]
        page += rng.sample(page, min(len(page), rng.randrange(3)))  # repeats
        expected = []
        fresh = []
        for url in page:  # the one-at-a-time reference: a dict
            if url not in oracle:
                oracle[url] = len(oracle)
                fresh.append(url)
            expected.append(oracle[url])
        first = len(texts)
        ids, new = seen.add_batch(page, first)
        assert ids.tolist() == expected
        assert [page[k] for k in new] == fresh
        texts.extend(fresh)
        assert len(seen) == len(oracle) == len(texts)
    assert [seen.get(u) for u in pool] == [oracle.get(u) for u in pool]
    assert [texts[i] for i in range(len(texts))] == list(oracle)
    seen.merge()
    assert [seen.get(u) for u in pool] == [oracle.get(u) for u in pool]
    if fingerprint is not hash:
        assert seen.collisions == len(oracle) - len({len(u) % 7 for u in oracle})


def test_urls_confirmed_lately_need_no_text_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A known URL whose fingerprint hit was confirmed against its text is found again
    by its text alone (no read), among at most HOT_MAX such URLs; one dropped from
    them, or never confirmed, is read and compared again, so a colliding fingerprint
    never gives another URL's id."""
    monkeypatch.setattr(seen_module, "HOT_MAX", 8)
    texts = UrlTexts()
    reads: list[int] = []

    def text_of(url_id: int) -> str:
        reads.append(url_id)
        return texts[url_id]

    seen = UrlSeen(text_of, lambda url: 7 if url.endswith("x") else hash(url))
    urls = _urls(40, 5)
    seen.add_batch(urls, 0)
    texts.extend(urls)
    assert seen.add_batch(urls[:5], 40)[0].tolist() == [0, 1, 2, 3, 4]
    assert reads == [0, 1, 2, 3, 4]
    page = [urls[3], urls[0], "http://new.test/x", urls[4]]
    ids, new = seen.add_batch(page, 40)
    assert ids.tolist() == [3, 0, 40, 4] and new == [2]
    assert reads == [0, 1, 2, 3, 4]  # the known ones confirmed before: no read
    texts.append("http://new.test/x")
    ids, new = seen.add_batch(["http://new.test/x", "http://other.test/x"], 41)
    assert ids.tolist() == [40, 41] and new == [1]  # same fingerprint 7, told apart
    assert reads == [0, 1, 2, 3, 4, 40, 40]
    texts.append("http://other.test/x")
    seen.add_batch(urls[5:30], 42)  # 25 confirmations: the dict drops the oldest
    assert len(seen._hot) <= seen_module.HOT_MAX
    reads.clear()
    assert seen.add_batch(urls[:2], 42)[0].tolist() == [0, 1]
    assert reads == [0, 1]  # dropped: read and compared again
    assert seen.get("http://other.test/x") == 41 and seen.get(urls[0]) == 0


@PATHS
def test_the_in_place_merge_keeps_the_runs_sorted(monkeypatch: pytest.MonkeyPatch,
                                                  compiled_from: int) -> None:
    """The main run after in-place merges of every size against windows of every size
    (or the compiled backward merge) equals a plain sort of all fingerprints with their
    ids."""
    rng = np.random.default_rng(5)
    for window in (1, 3, 64, 1 << 18):
        monkeypatch.setattr(seen_module, "MERGE_WINDOW", window)
        seen = UrlSeen(lambda url_id: "", compiled_from=_path(compiled_from))
        everything = np.empty(0, dtype=np.int64)
        oracle: dict[int, int] = {}
        for size in (0, 1, 7, 200, 5, 1000, 1):
            fps = np.setdiff1d(rng.integers(-2**63, 2**63 - 1, size, dtype=np.int64),
                               everything)
            ids = rng.integers(0, 2**32 - 1, len(fps), dtype=np.uint32)
            seen._merge_main(fps, ids)  # sorted and new, as its callers give them
            everything = np.concatenate((everything, fps))
            oracle.update(zip(fps.tolist(), ids.tolist(), strict=True))
            assert seen._fps.tolist() == sorted(oracle)
            assert seen._ids.tolist() == [oracle[f] for f in sorted(oracle)]


@pytest.mark.parametrize("n", [1, 2, 17, 1000, 40_000])
@pytest.mark.parametrize("spread", ["uniform", "clustered"])
def test_directory_search_is_a_bisection(n: int, spread: str) -> None:
    """A look-up through a run's directory finds the place a bisection finds: keys
    present, absent, before and after every fingerprint, at the extremes of int64,
    and fingerprints far from uniform (one bucket too wide: the bisection itself)."""
    rng = np.random.default_rng(n)
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    if spread == "uniform":
        fps = np.unique(rng.integers(lo, hi, n, dtype=np.int64, endpoint=True))
    else:
        fps = np.unique(rng.integers(-1000, 1000, n, dtype=np.int64))
    directory = seen_module._Directory(fps)
    if seen_module.compile_loops():  # the compiled one-pass build gives the same starts
        assert seen_module._Directory(fps, True).starts.tolist() == directory.starts.tolist()
    assert directory.nbytes <= 8 * (len(fps) // seen_module.DIR_LOAD + 2)
    assert (directory.steps is None) == (spread == "clustered" and n >= 1000)
    keys = np.concatenate([fps, fps - 1, fps + 1, [lo, hi, 0, -1],
                           rng.integers(lo, hi, 500, dtype=np.int64, endpoint=True)])
    for part in (keys, keys[:1], keys[:0]):
        want = np.minimum(fps.searchsorted(part), len(fps) - 1)
        assert directory.candidates(fps, part).tolist() == want.tolist()
