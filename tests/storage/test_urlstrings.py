"""UrlStrings built from Arrow buffers equals what ``pyarrow.array`` builds (the reference
implementation), whatever the strings: empty, non-ASCII, a NUL inside."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from webcrawl.storage.urlstrings import UrlStrings, int64_array

CASES = {
    "none": [],
    "one-empty": [""],
    "ascii": ["http://b.test/", "http://a.test/x?y=1", ""],
    "non-ascii": ["http://é.test/ü", "http://a.test/日本", "http://a.test/\U0001f600"],
    "nul-inside": ["a\x00b", "c"],
}


@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_from_list_matches_pyarrow_array(values: list[str]) -> None:
    ours = UrlStrings.from_list(values)
    assert ours.arrow.equals(pa.array(values, pa.large_string()))
    assert list(ours) == values


@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_take_and_sort_indices_match_pyarrow(values: list[str]) -> None:
    urls = UrlStrings.from_list(values)
    positions = np.arange(len(values))[::-1]
    assert list(urls.take(positions)) == [values[i] for i in positions]
    expected = pc.sort_indices(pa.array(values, pa.large_string())).to_pylist()
    order = urls.sort_indices()
    assert order.dtype == np.int64 and order.tolist() == expected
    # a slice (an offset into the buffer) sorts its own strings
    tail = UrlStrings(urls.arrow[1:])
    assert tail.sort_indices().tolist() == pc.sort_indices(urls.arrow[1:]).to_pylist()


def test_from_joined_splits_at_nul_and_checks_the_count() -> None:
    assert UrlStrings.from_joined("http://a.test/\x00http://é.test/", 2) == [
        "http://a.test/", "http://é.test/"]
    assert UrlStrings.from_joined("a\x00b", 3) is None
    assert UrlStrings.from_joined("", 0) == []


def test_int64_array_matches_pyarrow_array() -> None:
    values = np.array([5, -1, 2**40], dtype=np.int64)
    assert int64_array(values).equals(pa.array(values))
    strided = np.arange(10)[::3]
    assert int64_array(strided).to_pylist() == strided.tolist()
