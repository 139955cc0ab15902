"""The near-duplicate test's groups on hand-made sketches with known equal bins, checked
against a brute-force leader clustering (every leader compared, no LSH)."""

from __future__ import annotations

import numpy as np
import pytest
from webcrawl.crawler.near_seen import NearSeen, decode_sketch, encode_sketch
from webcrawl.crawler.shingles import SKETCH_SIZE
from webcrawl.storage.errors import ConfigError

RNG = np.random.default_rng(11)


def _random() -> np.ndarray:
    return RNG.integers(0, 1 << 16, SKETCH_SIZE, dtype=np.uint16)


def _copy(sk: np.ndarray, changed: int, clustered: bool = False) -> np.ndarray:
    """``sk`` with ``changed`` bins (spread over the bands, or the first ones) set to new
    values."""
    out = sk.copy()
    if clustered:
        at: np.ndarray | list[int] = np.arange(changed)
    else:
        at = np.linspace(0, SKETCH_SIZE - 1, changed).astype(int) if changed else []
    out[at] = out[at] + np.uint16(1)
    return out


def _brute(sketches: list[np.ndarray], minimum: int) -> dict[int, int]:
    """Leader clustering by comparing every leader: page -> leader (near copies only)."""
    leaders: list[int] = []
    out = {}
    for i, sk in enumerate(sketches):
        equal = [int(np.count_nonzero(sketches[j] == sk)) for j in leaders]
        best = max(equal, default=-1)
        if best >= minimum:
            out[i] = min(j for j, e in zip(leaders, equal, strict=True) if e == best)
        else:
            leaders.append(i)
    return out


def test_copy_joins_at_the_threshold_and_reports_its_resemblance() -> None:
    seen = NearSeen(0.8)
    a = _random()
    assert seen.see(1, a) == []
    assert seen.see(2, _copy(a, 12)) == [(2, 1, 52 / 64)]   # 52/64 = 0.81 >= 0.8
    assert seen.see(3, _copy(a, 13)) == []                    # 51/64 < 0.8: a leader
    assert seen.near_of(2) == (1, 52 / 64) and seen.near_of(3) is None
    assert seen.see(4, None) == [] and len(seen) == 3 and seen.near_duplicates == 1


@pytest.mark.parametrize(("threshold", "minimum"), [(0.8, 52), (0.9, 58), (0.7, 45)])
@pytest.mark.parametrize("clustered", [False, True])
def test_groups_match_brute_force_leader_clustering(threshold: float, minimum: int,
                                                    clustered: bool) -> None:
    # Families of copies at many distances, in an interleaved order; LSH with 16 bands
    # of 4 finds every copy within 13 changed bins (at most 13 bands touched).  Changed
    # bins spread over the bands or packed into as few bands as they fill: the
    # candidates passed over for sharing too few bands must be those that could not
    # win (the brute force compares every leader).
    bases = [_random() for _ in range(30)]
    sketches = [_copy(bases[k % 30], (k * 7) % 14, clustered) for k in range(300)]
    seen = NearSeen(threshold)
    for i, sk in enumerate(sketches):
        seen.see(i, sk)
    got = {i: leader for i in range(300) if (near := seen.near_of(i)) for leader in [near[0]]}
    assert got == _brute(sketches, minimum)
    assert len(got) > 60


def test_a_changed_leader_regroups_its_members() -> None:
    seen = NearSeen(0.8)
    a = _random()
    seen.see(1, a)
    two, three = _copy(a, 4), _copy(a, 6)
    seen.see(2, two)
    seen.see(3, three)
    # Page 1 changes beyond recognition: 2 leads now and 3 joins it.
    updates = seen.see(1, _random())
    equal = int(np.count_nonzero(two == three))
    assert equal >= 52
    assert sorted(updates, key=lambda u: u[0]) == [(2, None, None), (3, 2, equal / 64)]
    assert seen.see(1, None) == [] and len(seen) == 2


def test_an_unchanged_sketch_changes_nothing() -> None:
    seen = NearSeen(0.8)
    a = _random()
    seen.see(1, a)
    seen.see(2, _copy(a, 3))
    assert seen.see(2, _copy(a, 3)) == [] and seen.near_of(2) == (1, 61 / 64)


def test_encoding_round_trips() -> None:
    sk = _random()
    blob = encode_sketch(sk)
    assert len(blob) == 2 * SKETCH_SIZE
    assert np.array_equal(decode_sketch(blob), sk)
    assert blob == sk.astype("<u2").tobytes()


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5])
def test_threshold_out_of_range(bad: float) -> None:
    with pytest.raises(ConfigError):
        NearSeen(bad)


def test_two_bands_with_one_key_lead_and_leave() -> None:
    # Bands 0 and 1 xored with their salts give one table key: the page is entered
    # under it twice, found by a copy, and leaves cleanly when its text changes.
    from webcrawl.crawler.near_seen import _BAND_SALTS, _band_keys

    sk = _random()
    bands = sk.view(np.uint64)
    bands[1] = bands[0] ^ _BAND_SALTS[0] ^ _BAND_SALTS[1]
    keys = _band_keys(sk)
    assert keys[0] == keys[1]
    seen = NearSeen(0.8)
    assert seen.see(1, sk) == []
    copy = _copy(sk, 4)
    assert seen.see(2, copy) == [(2, 1, 60 / 64)]
    assert seen.see(1, _random()) == [(2, None, None)]  # the leader left: 2 leads now
    assert seen.see(3, copy) == [(3, 2, 1.0)]
