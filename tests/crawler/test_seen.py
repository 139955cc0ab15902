"""Compact per-URL state (crawler.seen): the fingerprint URL-seen test and the URL texts."""

from __future__ import annotations

import random

import numpy as np
import pytest
import webcrawl.crawler.seen as seen_module
from webcrawl.crawler.seen import Column, UrlSeen, UrlTexts


def _urls(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = {f"http://h{rng.randrange(50)}.test/p/{rng.randrange(10**6)}?q=é{rng.randrange(9)}"
           for _ in range(n)}
    return sorted(out)


@pytest.mark.parametrize("fingerprint", [hash, lambda url: len(url) % 7],
                         ids=["siphash", "colliding"])
def test_url_seen_is_exact_against_a_dict(monkeypatch: pytest.MonkeyPatch,
                                          fingerprint: object) -> None:
    """Whatever the fingerprints (here also one where nearly every URL collides), the
    set answers as a dict of the URLs would: hits are confirmed against the text."""
    monkeypatch.setattr(seen_module, "MERGE_MIN", 50)  # many batch merges
    monkeypatch.setattr(seen_module, "TEXT_BUFFER", 300)  # texts in file and buffer
    urls = _urls(3000, 1)
    rng = random.Random(2)
    rng.shuffle(urls)
    known, unknown = urls[:2000], urls[2000:]
    texts = UrlTexts()
    seen = UrlSeen(texts.__getitem__, fingerprint)  # type: ignore[arg-type]
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
    monkeypatch.setattr(seen_module, "TEXT_BUFFER", 64)
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
