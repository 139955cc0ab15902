"""NearBatch: the pages of a commit sketched and tested together, the same as one by one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from webcrawl.crawler.links import PageLinks, extract_links
from webcrawl.crawler.near_batch import MIN_SKETCH_BATCH, NearBatch, sketch_answers
from webcrawl.crawler.near_process import NearProcess
from webcrawl.crawler.near_seen import NearSeen, decode_sketch
from webcrawl.crawler.orders import PageDone
from webcrawl.crawler.shingles import text_sketch
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

WORDS = [f"w{i}" for i in range(300)]


def _texts(n: int, seed: int = 5) -> list[str]:
    """Random texts and near copies of earlier ones (one word changed), and a few too
    short to sketch."""
    rng = np.random.default_rng(seed)
    texts: list[str] = []
    for i in range(n):
        if i % 3 == 2:
            words = texts[i - 2].split()
            words[int(rng.integers(len(words)))] = "changed"
            texts.append(" ".join(words))
        elif i % 17 == 0:
            texts.append("too short")
        else:
            texts.append(" ".join(rng.choice(WORDS, 120).tolist()))
    return texts


def _page(url_id: int, text: str) -> PageLinks:
    """Page ``url_id`` as the test gets it: every 7th sketched already (a shard worker's
    page), every 5th as its HTML (the crawl's own downloader with ``near_process``), the
    others as their text; the HTML's text is ``text``."""
    if url_id % 7 == 0:
        return PageLinks(sketch=text_sketch(text))
    if url_id % 5 == 0:
        html = f"<html><body><nav>menu {url_id}</nav><p>{text}</p></body></html>"
        page = extract_links(html, f"http://a.test/{url_id}", keep_html=True)
        assert page.text is None and page.html == html
        assert extract_links(html, "http://a.test/", text=True).text == text
        return page
    return PageLinks(text=text)


@pytest.mark.parametrize("process", [False, True], ids=["in-process", "own-process"])
async def test_a_commits_pages_get_the_one_by_one_sketches_and_groups(
        tmp_path: Path, process: bool) -> None:
    path = tmp_path / "c.db"
    texts = _texts(90)
    copies = {10, 11, 40}  # byte-for-byte copies: sketch stored, not tested
    store = await CrawlStore.open(path, batch_size=10_000, flush_interval=60)
    batch = NearBatch(NearProcess(0.8) if process else NearSeen(0.8), store)
    store.add_host(HostRow(0, "a.test"))
    counts = []
    for url_id, text in enumerate(texts):
        store.add_url(UrlRow(url_id, f"http://a.test/{url_id}", 0, 0, -1))
        fetch_id = store.add_fetch(FetchRecord(url_id=url_id, seq=url_id, started_at=1.0,
                                               ended_at=1.0, outcome=Outcome.FETCHED))
        page = _page(url_id, text)
        batch.add(url_id, fetch_id, page, tested=url_id not in copies)
        assert page.html is None  # let go once handed over
        if url_id in (29, 60):
            assert len(batch) > 0
            await store.flush()  # three commits: 30, 31 and 29 pages
            assert len(batch) == 0
            counts.append(batch.near_duplicates)
    await store.aclose()
    batch.close()

    one_by_one = NearSeen(0.8)
    expected = {}
    for url_id, text in enumerate(texts):
        sketch = text_sketch(text)
        expected[url_id] = sketch
        one_by_one.see(url_id, None if url_id in copies else sketch)
    with sqlite3.connect(path) as conn:
        stored = dict(conn.execute("SELECT url_id, sketch FROM fetches"))
        groups = dict(conn.execute("SELECT id, near_of FROM urls WHERE near_of IS NOT NULL"))
    for url_id, sketch in expected.items():
        if sketch is None:
            assert stored[url_id] is None
        else:
            assert (decode_sketch(stored[url_id]) == sketch).all()
    want = {i: near[0] for i in expected if (near := one_by_one.near_of(i)) is not None}
    assert groups == want
    assert batch.near_duplicates == one_by_one.near_duplicates
    assert 0 < counts[0] < counts[1] < batch.near_duplicates  # as of each commit
    assert len(want) >= 20  # most planted copies found (the copies of copies excepted)


def test_sketch_answers_replaces_each_text_by_its_sketch() -> None:
    texts = _texts(MIN_SKETCH_BATCH + 4, seed=9)
    answers: list[object] = [PageDone(i, (), None, PageLinks(text=t), 0.0)
                             for i, t in enumerate(texts)]
    answers.append(PageDone(99, (), None, None, 0.0))  # no HTML page
    answers.append("not a page answer")
    sketch_answers(answers)
    for answer, text in zip(answers, texts, strict=False):
        assert isinstance(answer, PageDone) and answer.links is not None
        want = text_sketch(text)
        assert answer.links.text is None
        got = answer.links.sketch
        assert (got is None) if want is None else (got is not None and (got == want).all())


def test_sketch_answers_leaves_a_small_batch_to_the_coordinator() -> None:
    texts = _texts(MIN_SKETCH_BATCH - 1, seed=10)
    answers: list[object] = [PageDone(i, (), None, PageLinks(text=t), 0.0)
                             for i, t in enumerate(texts)]
    sketch_answers(answers)
    for answer, text in zip(answers, texts, strict=True):
        assert isinstance(answer, PageDone) and answer.links is not None
        assert answer.links.text == text and answer.links.sketch is None


@pytest.mark.parametrize(("workers", "cores", "own_process"), [
    (1, 1, True),    # one process: the child parses the pages' HTML, whatever the cores
    (1, 2, True),
    (2, 2, False),   # coordinator and two workers keep both cores busy
    (2, 3, False),
    (2, 4, True),    # a core left for the test's process
    (4, 8, True),
], ids=lambda v: str(v))
async def test_a_sharded_crawl_keeps_the_test_in_its_thread_without_a_free_core(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, cores: int,
        own_process: bool) -> None:
    from dataclasses import replace

    from webcrawl.crawler import near_batch
    from webcrawl.crawler.settings import CrawlSettings

    monkeypatch.setattr(near_batch, "worker_count", lambda: cores)
    store = await CrawlStore.open(tmp_path / "c.db")
    settings = replace(CrawlSettings(), near_duplicates=True, workers=workers)
    batch = NearBatch.open(store, settings, workers=workers)
    # A caller that runs no workers (a revisit or an import with a sharded crawl's
    # settings) keeps the process: its downloader hands the test the pages' HTML.
    alone = NearBatch.open(store, settings)
    try:
        assert (batch._process is not None) == own_process
        assert (batch._near is None) == own_process
        assert alone._process is not None
        # near_process off: in the thread whatever the cores
        off = NearBatch.open(store, replace(settings, near_process=False), workers=workers)
        assert off._process is None and off._near is not None
    finally:
        await store.aclose()
        batch.close()
        alone.close()
