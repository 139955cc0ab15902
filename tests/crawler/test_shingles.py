"""Text sketches: the shingle hash against an independent pure-Python reading of its
definition, and the sketch's resemblance estimate against the exact resemblance of the
shingle sets (Broder 1997) within the estimator's standard error."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from selectolax.lexbor import LexborCSSSelector, LexborHTMLParser
from webcrawl.crawler.page_text import _FURNITURE, _furniture
from webcrawl.crawler.shingles import (
    MAX_TEXT_BYTES,
    MIN_WORDS,
    SKETCH_SIZE,
    page_text,
    resemblance,
    shingle_hashes,
    text_sketch,
    text_sketches,
)
from webcrawl.fixtures import FixtureConfig, FixtureWeb
from webcrawl.fixtures.html import PageRenderer

_MASK = (1 << 64) - 1
_BASE = 0x9E3779B97F4A7C15
_MIX = 0x94D049BB133111EB


def _reference_hashes(text: str, w: int = 2) -> list[int]:
    """The module docstring's hash, one shingle at a time: words are runs of ASCII
    letters and digits and non-ASCII bytes, ASCII case-folded; a shingle is its words
    joined by one NUL byte; its hash sum(byte * P**i) mod 2**64, times the mix
    constant, xor itself shifted right by 31."""
    words = re.findall(rb"[0-9a-z\x80-\xff]+", text.encode("utf-8").lower())
    out = []
    for j in range(len(words) - w + 1):
        h = sum(b * pow(_BASE, i, 1 << 64) for i, b in enumerate(b"\0".join(words[j:j + w])))
        h = (h * _MIX) & _MASK
        out.append(h ^ (h >> 31))
    return out


def _exact_resemblance(a: str, b: str) -> float:
    sa, sb = set(_reference_hashes(a)), set(_reference_hashes(b))
    return len(sa & sb) / len(sa | sb)


def test_shingle_hashes_follow_their_definition() -> None:
    text = "The Quick brown fox, jumps over the lazy dog 42 times; café naïve Ωmega"
    assert shingle_hashes(text).tolist() == _reference_hashes(text)
    assert shingle_hashes(text, 3).tolist() == _reference_hashes(text, 3)
    assert shingle_hashes(text.encode()).tolist() == _reference_hashes(text)


def test_word_boundaries_and_case() -> None:
    assert shingle_hashes("ab c d").tolist() != shingle_hashes("a bc d").tolist()
    assert shingle_hashes("Hello, World!").tolist() == shingle_hashes("hello world").tolist()
    assert shingle_hashes("one").size == 0


def _words(rng: random.Random, n: int) -> list[str]:
    return [f"w{rng.randrange(5000)}" for _ in range(n)]


def test_sketch_estimates_the_exact_resemblance() -> None:
    rng = random.Random(7)
    errors = []
    for _ in range(60):
        base = _words(rng, 300)
        other = list(base)
        for _ in range(rng.randrange(1, 60)):  # edit some words
            other[rng.randrange(len(other))] = f"x{rng.randrange(10**6)}"
        a, b = " ".join(base), " ".join(other)
        exact = _exact_resemblance(a, b)
        sa, sb = text_sketch(a), text_sketch(b)
        assert sa is not None and sb is not None
        est = resemblance(sa, sb)
        sigma = (max(exact * (1 - exact), 0.01) / SKETCH_SIZE) ** 0.5
        errors.append(abs(est - exact) / sigma)
    # Unbiased with the binomial spread: no estimate beyond 4.5 sigma, and the mean
    # absolute error near sqrt(2/pi) = 0.8 sigma (not a biased or collapsed estimator).
    assert max(errors) < 4.5
    assert 0.4 < float(np.mean(errors)) < 1.3


def test_same_text_same_sketch_and_short_text_none() -> None:
    text = " ".join(_words(random.Random(1), 50))
    a, b = text_sketch(text), text_sketch(text.encode())
    assert a is not None and b is not None and a.dtype == np.uint16 and a.size == SKETCH_SIZE
    assert np.array_equal(a, b) and resemblance(a, b) == 1.0
    assert text_sketch(" ".join(f"w{i}" for i in range(MIN_WORDS - 1))) is None
    assert text_sketch(" ".join(f"w{i}" for i in range(MIN_WORDS))) is not None


def test_text_beyond_the_cap_is_ignored() -> None:
    head = " ".join(_words(random.Random(2), MAX_TEXT_BYTES // 4))[:MAX_TEXT_BYTES]
    assert np.array_equal(text_sketch(head + " tail one"), text_sketch(head + " other end"))


def test_sparse_text_fills_every_bin() -> None:
    # 9 words: 8 shingles for 64 bins, the rest filled by rotation; still self-equal
    # and unlike another short text.
    a = text_sketch("alpha beta gamma delta epsilon zeta eta theta iota")
    b = text_sketch("one two three four five six seven eight nine")
    assert a is not None and b is not None
    assert resemblance(a, b) < 0.2


@pytest.mark.parametrize("markup", [
    "<nav>Home About</nav>", "<header>Site</header>", "<footer>(c) 2026</footer>",
    "<aside>Ads</aside>", "<script>var x = 1</script>", "<style>p {}</style>",
    '<div role="navigation">Home About</div>', '<div role="banner">Site</div>',
    '<nav>outer <nav>inner</nav> <header>deep</header></nav>',
])
def test_page_text_leaves_out_the_furniture(markup: str) -> None:
    html = f"<html><body><p>Main text here.</p>{markup}<p>More text.</p></body></html>"
    assert page_text(LexborHTMLParser(html)).split() == ["Main", "text", "here.", "More",
                                                         "text."]


#: Pages whose furniture the tag-or-role selector and the Python role test must find as
#: the one selector of the five role values does (lexbor's own matching is the oracle).
_ROLE_PAGES = [
    '<div role="Navigation">case</div><div role=" navigation">space</div>'
    '<div role="navigation banner">two</div><div data-role="search">data</div>'
    '<div role="search">search</div>',
    '<nav role="navigation">both</nav><aside role="note">aside</aside>'
    '<form role="search"><nav>in</nav></form>',
    '<svg><a xlink:role="navigation">svg link</a><style>x</style></svg>'
    '<math><mi xlink:role="search">m</mi></math>',
    '<svg><a role="presentation" xlink:role="navigation">first</a>'
    '<a xlink:role="navigation" role="presentation">second</a></svg>',
    '<div xlink:role="banner" role="navigation">html element</div><p role="banner">b</p>',
    '<template><nav>t</nav></template><noscript>n</noscript><div role="contentinfo">c</div>',
]


@pytest.mark.parametrize("markup", _ROLE_PAGES)
def test_furniture_is_what_the_role_value_selector_finds(markup: str) -> None:
    html = f"<html><body><p>Main text here.</p>{markup}<p>More text.</p></body></html>"
    tree = LexborHTMLParser(html)
    oracle = LexborCSSSelector().find(_FURNITURE, tree.root)
    want = list(dict.fromkeys(node.mem_id for node in oracle))  # lexbor repeats a node
    assert [node.mem_id for node in _furniture(tree)] == want   # matched twice
    assert want  # every page has furniture


def test_page_text_of_an_empty_document() -> None:
    assert page_text(LexborHTMLParser("")) == ""


def _same_sketches(texts: list[str]) -> None:
    batch = text_sketches(texts)
    assert len(batch) == len(texts)
    for text, got in zip(texts, batch, strict=True):
        one = text_sketch(text)
        assert (got is None) == (one is None)
        assert got is None or (got.dtype == np.uint16 and np.array_equal(got, one))


def test_batched_sketches_are_the_page_sketches_of_the_fixture() -> None:
    # The fixture's pages, planted near copies and similar pages included.
    web = FixtureWeb.build(FixtureConfig(pages=300, hosts=3, seed=4,
                                         near_duplicate_pairs=40, similar_pages=40))
    renderer = PageRenderer(web, 8080)
    texts = [page_text(LexborHTMLParser(renderer.render(p, 0))) for p in range(web.pages)]
    assert sum(text_sketch(t) is not None for t in texts) > 250
    _same_sketches(texts)


def test_batched_sketches_at_the_edges() -> None:
    rng = random.Random(5)
    long = " ".join(_words(rng, MAX_TEXT_BYTES // 3))
    short = " ".join(f"w{i}" for i in range(MIN_WORDS - 1))
    enough = " ".join(f"w{i}" for i in range(MIN_WORDS))
    sparse = "alpha beta gamma delta epsilon zeta eta theta iota"
    # Texts that begin or end between words, empty ones, texts beyond the cap (each
    # alone in its pipeline) and one word split across two texts (not a shingle).
    texts = ["", "  " + enough, short, enough + " ", long, "!!", sparse, long[:5000],
             "x", "\u00e9t\u00e9 " + enough, long, "", "ab", "cd " + sparse]
    _same_sketches(texts)
    _same_sketches([])
    _same_sketches([enough] * 3)
