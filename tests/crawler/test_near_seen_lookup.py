"""The near-duplicate test's look-up (a leader counted over the small buckets and looked
up in the big ones' sets) against the plain look-up it replaced as oracle: every
candidate leader counted with ``Counter`` over every bucket's list.  The same updates,
groups and resemblances after every call, on the fixture's planted pages and on
hypothesis-made sketches with few distinct band values (big buckets, ties, revisits and
bands that share a key)."""

from __future__ import annotations

from collections import Counter
from itertools import chain

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser
from webcrawl.crawler import near_seen
from webcrawl.crawler.near_seen import (
    _BAND_SALTS,
    BANDS,
    NearSeen,
    NearUpdate,
    _as_int,
    _band_keys,
    _equal_bins,
)
from webcrawl.crawler.shingles import SKETCH_SIZE, page_text, text_sketches
from webcrawl.fixtures import FixtureConfig, FixtureWeb
from webcrawl.fixtures.html import PageRenderer


class _PlainLookup:
    """The look-up as it was: one table of lists, every hit counted with ``Counter``."""

    def __init__(self, min_resemblance: float) -> None:
        self.min = int(np.ceil(min_resemblance * SKETCH_SIZE - 1e-9))
        self.need = max(1, self.min - (SKETCH_SIZE - BANDS))
        self.sketch: dict[int, np.ndarray] = {}
        self.leader: dict[int, int] = {}
        self.members: dict[int, dict[int, int]] = {}
        self.table: dict[int, list[int]] = {}
        self.lead: dict[int, int] = {}

    def near_of(self, url_id: int) -> tuple[int, float] | None:
        leader = self.leader.get(url_id)
        return None if leader is None else (leader, self.members[leader][url_id] / 64)

    def see(self, url_id: int, sketch: np.ndarray | None) -> list[NearUpdate]:
        old = self.sketch.get(url_id)
        if old is None:
            if sketch is None:
                return []
            self.sketch[url_id] = sketch
            self.place(url_id, sketch)
            leader = self.leader.get(url_id)
            return [] if leader is None else [
                (url_id, leader, self.members[leader][url_id] / SKETCH_SIZE)]
        if sketch is not None and np.array_equal(old, sketch):
            return []
        before = {url_id: self.near_of(url_id)}
        retest = self.leave(url_id, old)
        before.update((m, (url_id, e / SKETCH_SIZE)) for m, e in retest)
        if sketch is not None:
            self.sketch[url_id] = sketch
            self.place(url_id, sketch)
        for member, _ in retest:
            self.place(member, self.sketch[member])
        updates: list[NearUpdate] = []
        for page, was in before.items():
            now = self.near_of(page)
            if now != was:
                updates.append((page, *now) if now else (page, None, None))
        return updates

    def place(self, url_id: int, sk: np.ndarray) -> None:
        keys = _band_keys(sk)
        buckets = [self.table.get(k) for k in keys]
        hits = [b for b in buckets if b]
        if len(hits) >= self.need:
            shared = Counter(chain.from_iterable(hits))
            found = [c for c, n in shared.items() if n >= self.need]
            if found:
                best, leader = max((_equal_bins(_as_int(sk), self.lead[c]), -c)
                                   for c in found)
                if best >= self.min:
                    self.leader[url_id] = -leader
                    self.members[-leader][url_id] = best
                    return
        self.members[url_id] = {}
        self.lead[url_id] = _as_int(sk)
        for key in keys:
            self.table.setdefault(key, []).append(url_id)

    def leave(self, url_id: int, sk: np.ndarray) -> list[tuple[int, int]]:
        del self.sketch[url_id]
        leader = self.leader.pop(url_id, None)
        if leader is not None:
            del self.members[leader][url_id]
            return []
        members = list(self.members.pop(url_id).items())
        del self.lead[url_id]
        for key in _band_keys(sk):
            self.table[key].remove(url_id)
            if not self.table[key]:
                del self.table[key]
        for member, _ in members:
            del self.leader[member]
        return members


def _same_run(calls: list[tuple[int, np.ndarray | None]], threshold: float = 0.8) -> int:
    """Feed both look-ups the same calls; every answer and group must agree.  Returns the
    near copies found."""
    fast, plain = NearSeen(threshold), _PlainLookup(threshold)
    pages = sorted({url_id for url_id, _ in calls})
    for url_id, sk in calls:
        assert fast.see(url_id, sk) == plain.see(url_id, sk)
    assert [fast.near_of(p) for p in pages] == [plain.near_of(p) for p in pages]
    assert fast.near_duplicates == len(plain.leader)
    return fast.near_duplicates


@pytest.fixture(scope="module")
def fixture_sketches() -> list[np.ndarray | None]:
    web = FixtureWeb.build(FixtureConfig(pages=1500, hosts=4, seed=3,
                                         near_duplicate_pairs=200, similar_pages=150))
    renderer = PageRenderer(web, 8080)
    texts = [page_text(LexborHTMLParser(renderer.render(p, 0))) for p in range(web.pages)]
    return text_sketches(texts)


@pytest.mark.parametrize("set_from", [2, 8, 32], ids=lambda n: f"sets-from-{n}")
@pytest.mark.parametrize("threshold", [0.8, 0.7, 0.95])
def test_fixture_pages_group_as_with_the_plain_lookup(
        fixture_sketches: list[np.ndarray | None], set_from: int, threshold: float,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Smaller set sizes make most buckets big: the sets, and the fall-back to counting
    # all but the need - 1 biggest, are exercised on every page.
    monkeypatch.setattr(near_seen, "_SET_FROM", set_from)
    calls = list(enumerate(fixture_sketches))
    # ... then every tenth page revisited with another page's text (leaders leave and
    # their members are placed again).
    calls += [(p, fixture_sketches[(p * 7 + 3) % len(fixture_sketches)])
              for p in range(0, len(fixture_sketches), 10)]
    found = _same_run(calls, threshold)
    assert found > (150 if threshold < 0.9 else 50)


#: Few distinct values per band: many pages share many bands, so buckets grow big and
#: many candidates tie.
_BAND_VALUES = st.integers(0, 5)


@st.composite
def _sketches(draw: st.DrawFn) -> np.ndarray:
    values = draw(st.lists(_BAND_VALUES, min_size=BANDS, max_size=BANDS))
    bands = np.array(values, dtype=np.uint64)
    if draw(st.booleans()):  # two bands with one table key
        i, j = draw(st.integers(0, BANDS - 1)), draw(st.integers(0, BANDS - 1))
        if i != j:
            bands[j] = bands[i] ^ _BAND_SALTS[i] ^ _BAND_SALTS[j]
    sk: np.ndarray = bands.view(np.uint16).copy()
    for k in draw(st.lists(st.integers(0, SKETCH_SIZE - 1), max_size=6)):  # a changed bin
        sk[k] ^= np.uint16(1)
    return sk


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(st.tuples(st.integers(0, 40), st.none() | _sketches()),
                      min_size=1, max_size=120),
       set_from=st.sampled_from([2, 3, 32]),
       threshold=st.sampled_from([0.8, 0.7, 0.9]))
def test_made_up_sketches_group_as_with_the_plain_lookup(
        calls: list[tuple[int, np.ndarray | None]], set_from: int, threshold: float) -> None:
    saved = near_seen._SET_FROM
    near_seen._SET_FROM = set_from
    try:
        _same_run(calls, threshold)
    finally:
        near_seen._SET_FROM = saved
