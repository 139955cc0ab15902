"""The frontier's rank index (crawler.ranks) against a sorted list of key tuples."""

from __future__ import annotations

import bisect
import random

import pytest
from webcrawl.crawler.ranks import RankIndex


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rank_index_is_a_sorted_list(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Adds, removes (with their rank or not), rank queries and rebuilds answer as
    ``bisect`` on a sorted list of ``(-priority, url_id)`` tuples, with priorities of
    both signs, zeros of both signs, infinities, huge and tiny values, and ids up to
    2**32 - 1."""
    monkeypatch.setattr(RankIndex, "_LOAD", 8)  # many block splits and removals
    rng = random.Random(seed)
    values = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 1e300, -1e300, 5e-324, -5e-324,
              float("inf"), float("-inf"), 0.1, 3.0]
    index, oracle = RankIndex(), []
    next_id = 0
    for step in range(4000):
        if oracle and rng.random() < 0.4:
            at = rng.randrange(len(oracle))
            key = oracle.pop(at)
            if rng.random() < 0.5:
                index.remove(key)
            else:  # a frontier's take
                assert index.pop_rank(key) == at
        else:
            url_id = rng.choice([next_id, 2**32 - 1 - next_id])
            next_id += 1
            key = (rng.choice(values), url_id)
            bisect.insort(oracle, key)
            index.add(key)
        probe = (rng.choice(values), rng.randrange(2**32))
        assert index.rank(probe) == bisect.bisect_left(oracle, probe)
        if oracle:
            some = rng.choice(oracle)
            assert index.rank(some) == oracle.index(some)
        if step % 1000 == 999:
            index.rebuild(list(oracle))
        assert len(index) == len(oracle)
