"""A URL's origin, request target and Host header (:func:`split_url`): the string fast
path gives what :func:`urllib.parse.urlsplit` gives, for every URL, errors included."""

from __future__ import annotations

import pytest
import webcrawl.crawler.http1.wire as wire
from hypothesis import given, settings
from hypothesis import strategies as st
from webcrawl.crawler.http1.wire import split_url

CASES = [
    ("http://a.test/", (("http", "a.test", 80), "/", "a.test")),
    ("http://a.test", (("http", "a.test", 80), "/", "a.test")),
    ("https://a.test/x/y.html", (("https", "a.test", 443), "/x/y.html", "a.test")),
    ("http://a.test:8080/p?q=1", (("http", "a.test", 8080), "/p?q=1", "a.test:8080")),
    ("http://a.test:80/p", (("http", "a.test", 80), "/p", "a.test")),
    ("https://a.test:80/p", (("https", "a.test", 80), "/p", "a.test:80")),
    ("http://a.test?q", (("http", "a.test", 80), "/?q", "a.test")),
    ("http://a.test/p?", (("http", "a.test", 80), "/p", "a.test")),
    ("http://a.test/p#f?x", (("http", "a.test", 80), "/p", "a.test")),
    ("http://a.test#f", (("http", "a.test", 80), "/", "a.test")),
    ("http://A.Test/P", (("http", "a.test", 80), "/P", "a.test")),
    ("http://u:pw@a.test:81/p", (("http", "a.test", 81), "/p", "a.test:81")),
    ("http://[::1]:8000/p", (("http", "::1", 8000), "/p", "[::1]:8000")),
    ("HTTP://a.test/p", (("http", "a.test", 80), "/p", "a.test")),
]


@pytest.mark.parametrize(("url", "expected"), CASES)
def test_known_answers(url: str, expected: tuple[object, ...]) -> None:
    assert split_url(url) == expected
    assert split_url(url) == expected  # again, the origin remembered


@pytest.mark.parametrize("url", ["ftp://a.test/", "http://", "http:///p", "a.test/p",
                                 "http://a.test/a b", "http://a.test/\u00e9",
                                 "http://a.test:99999/", "http://a.test:x/"])
def test_unsendable_urls_raise(url: str) -> None:
    with pytest.raises(ValueError):
        split_url(url)


def _outcome(split: object, url: str) -> object:
    try:
        return split(url)  # type: ignore[operator]
    except ValueError as error:
        return ValueError, str(error)


_PART = st.text(alphabet="aB0-._~%:@/?#[]! \t\u00e9", max_size=12)


@settings(max_examples=600, deadline=None)
@given(scheme=st.sampled_from(["http://", "https://", "HTTP://", "http:", "ftp://", ""]),
       host=st.sampled_from(["a.test", "B.test", "a.test:8080", "a.test:80", "[::1]",
                             "[::1]:81", "u@a.test", "", "a.test:", "a.test:0x"]),
       rest=_PART)
def test_same_as_urlsplit(scheme: str, host: str, rest: str) -> None:
    url = scheme + host + rest
    assert _outcome(split_url, url) == _outcome(wire._split_parsed, url)


def test_remembered_origins_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "_ORIGINS", {})
    monkeypatch.setattr(wire, "_ORIGINS_MAX", 3)
    for i in range(10):
        assert split_url(f"http://h{i}.test:81/p") == (("http", f"h{i}.test", 81), "/p",
                                                        f"h{i}.test:81")
        assert len(wire._ORIGINS) <= 3
