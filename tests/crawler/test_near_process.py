"""NearProcess: the near-duplicate test in a child process, the same as in the crawl's own."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from test_near_batch import _texts
from webcrawl.crawler.near_process import NearProcess
from webcrawl.crawler.near_seen import NearSeen
from webcrawl.crawler.near_steps import NearPage, sketch_and_test
from webcrawl.storage.errors import CrawlError
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow


def _pages(texts: list[str], first: int = 0) -> list[NearPage]:
    return [(first + i, None, text, None, True) for i, text in enumerate(texts)]


def test_the_child_gives_the_sketches_and_changes_of_the_test_in_this_process() -> None:
    pages = _pages(_texts(150, seed=3))
    near = NearSeen(0.8)
    want = [sketch_and_test(near, pages[:70]), sketch_and_test(near, pages[70:])]
    child = NearProcess(0.8)
    try:
        child.send(pages[:40])  # frames of any size; the results are per call
        child.send(pages[40:70])
        first = child.results()
        child.send(pages[70:])
        second = child.results()
    finally:
        child.close()
    assert first[:2] == want[0] and second[:2] == want[1]
    assert second[2] == near.near_duplicates > first[2] > 0


async def test_the_child_starts_from_the_stored_groups(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    texts = _texts(30, seed=4)
    near = NearSeen(0.8)
    sketches, updates = sketch_and_test(near, _pages(texts))
    assert updates  # the stored pages hold groups
    store = await CrawlStore.open(db, batch_size=10_000, flush_interval=60)
    store.add_host(HostRow(0, "a.test"))
    for url_id, sketch in enumerate(sketches):
        store.add_url(UrlRow(url_id, f"http://a.test/{url_id}", 0, 0, -1))
        fetch_id = store.add_fetch(FetchRecord(url_id=url_id, seq=url_id, started_at=1.0,
                                               ended_at=1.0, outcome=Outcome.FETCHED,
                                               digest=f"{url_id:040x}"))
        store.set_outcome(url_id, Outcome.FETCHED, url_id)
        if sketch is not None:
            store.set_sketch(fetch_id, sketch)
    for page, leader, resemblance in updates:
        store.set_near_duplicate(page, leader, resemblance)
    await store.aclose()
    # The same texts again under new ids: copies of the stored leaders, tested here
    # from the stored state and in the child.
    again = _pages(texts, first=30)
    here = sketch_and_test(NearSeen.from_db(db, 0.8), again)
    child = NearProcess(0.8, db)
    try:
        child.send(again)
        there = child.results()
    finally:
        child.close()
    assert there[:2] == here
    stored_leaders = {i for i in range(30) if near.near_of(i) is None and sketches[i]}
    assert {leader for _, leader, _ in here[1]} == stored_leaders


def test_an_unreadable_database_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-crawl.db"
    bad.write_bytes(b"this is not an SQLite file" * 100)
    with pytest.raises(CrawlError, match=r"^the near-duplicate test failed: ") as caught:
        NearProcess(0.8, bad)
    assert "\n" not in str(caught.value)


def test_a_lost_child_fails_the_next_results() -> None:
    child = NearProcess(0.8)
    try:
        os.kill(child.pid, signal.SIGKILL)
        child.send(_pages(_texts(3)))  # not an error yet: the pipe may be open
        with pytest.raises(CrawlError, match="process ended"):
            child.results()
    finally:
        child.close()


def test_the_child_ends_at_the_end_of_its_input() -> None:
    child = NearProcess(0.8)
    child.send(_pages(_texts(5)))
    child.close()
    assert child.returncode == 0


def test_ctrl_c_does_not_stop_the_child() -> None:
    """Ctrl-C reaches the terminal's process group; the crawl's last commit, after it,
    still needs the child: the child has a group of its own, and ignores SIGINT."""
    pages = _pages(_texts(20))
    child = NearProcess(0.8)
    try:
        assert os.getpgid(child.pid) == child.pid != os.getpgid(0)
        child.send(pages[:10])
        child.results()  # (started: SIGINT ignored from here)
        os.kill(child.pid, signal.SIGINT)
        child.send(pages[10:])
        sketches, updates, _ = child.results()
    finally:
        child.close()
    near = NearSeen(0.8)
    sketch_and_test(near, pages[:10])
    assert (sketches, updates) == sketch_and_test(near, pages[10:])
    assert child.returncode == 0
