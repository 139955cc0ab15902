"""CrawlStore: round trips, batching atomicity, crash safety, resume, errors."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from webcrawl.storage.errors import (
    SchemaVersionError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)
from webcrawl.storage.reader import CrawlReader
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

from tests.storage.conftest import read_rows

REPO = Path(__file__).resolve().parents[2]


_rows = read_rows


def _full_fetch(url_id: int, seq: int) -> FetchRecord:
    return FetchRecord(
        url_id=url_id, seq=seq, started_at=1700000000.25, ended_at=1700000000.5,
        outcome=Outcome.FETCHED, status=200, content_type="text/html; charset=utf-8",
        size=1234, digest="ab" * 16, etag='W/"x"', last_modified="Tue, 15 Nov 1994 08:12:31 GMT",
        error=None, attempt=2, kind=FetchKind.CRAWL, strategy="bfs", priority=0.75, rank=3,
        changed=None,
    )


async def test_round_trip_every_record_type(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path)
    host = HostRow(3, "a.test:8080", robots_status=200, robots_body="User-agent: *\nAllow: /\n",
                   robots_fetched_at=1700000000.0, crawl_delay=1.5)
    seed = UrlRow(10, "http://a.test:8080/", 3, 0, -1)
    child = UrlRow(11, "http://a.test:8080/x?q=1", 3, 1, 0)
    fetch = _full_fetch(10, 0)
    revisit = FetchRecord(10, 5, 1700000100.0, 1700000100.5, Outcome.NOT_MODIFIED, status=304,
                          kind=FetchKind.REVISIT, changed=False, error=None)
    store.set_meta("strategy", "bfs")
    store.add_host(host)
    store.add_url(seed)
    store.add_url(child)
    store.add_fetch(fetch)
    store.add_fetch(revisit)
    store.add_links(10, [11, 10, 11], nofollow_ids=[11])
    store.set_outcome(10, Outcome.FETCHED, 0)
    store.update_host(3, crawl_delay=2.0)
    await store.aclose()

    store = await CrawlStore.open(path, resume=True)
    state = await store.load_state()
    await store.aclose()
    assert state.meta["strategy"] == "bfs"
    assert state.meta["schema_version"] == "8"
    host.crawl_delay = 2.0
    assert state.hosts == [host]
    seed.outcome, seed.seq = Outcome.FETCHED, 0
    assert state.urls == [seed, child]
    assert state.urls[0].outcome is Outcome.FETCHED
    assert state.next_seq == 6
    assert state.next_url_id == 12 and state.next_host_id == 4
    assert [(src, list(dst)) for src, dst in state.fetched_links] == [(10, [11, 10, 11])]

    with CrawlReader(path) as reader:
        f = reader.fetches()
        assert f["seq"].tolist() == [0, 5]
        assert f["status"].tolist() == [200, 304]
        assert f["size"].tolist() == [1234, -1]
        assert f["attempt"].tolist() == [2, 1]
        assert f["priority"][0] == 0.75 and f["rank"].tolist() == [3, -1]
        assert f["changed"].tolist() == [-1, 0]
        assert f["digest"].tolist() == ["ab" * 16, None]
        assert f["etag"][0] == 'W/"x"'
        assert f["last_modified"][0] == fetch.last_modified
        assert f["content_type"][0] == fetch.content_type
        assert f["strategy"].tolist() == ["bfs", None]
        assert f["started_at"].tolist() == [1700000000.25, 1700000100.0]
        assert f["ended_at"].tolist() == [1700000000.5, 1700000100.5]
        nf = reader.nofollow_csr()
        assert nf.src.tolist() == [10] and nf.dst.tolist() == [11]
        revisits = reader.fetches(kind="revisit")
        assert revisits["seq"].tolist() == [5] and revisits["changed"].tolist() == [0]


async def test_records_enqueued_together_commit_together(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    # A large batch size and interval: nothing commits until the explicit flush.
    store = await CrawlStore.open(path, batch_size=10_000, flush_interval=60)
    store.add_host(HostRow(0, "a.test"))
    for i in range(5):
        store.add_url(UrlRow(i, f"http://a.test/{i}", 0, 0, -1))
    await asyncio.sleep(0.05)  # the writer runs, but the batch is not due
    assert _rows(path, "SELECT count(*) FROM urls") == [(0,)]
    assert store.pending == 6
    await store.flush()
    assert _rows(path, "SELECT count(*) FROM urls") == [(5,)]
    assert store.pending == 0
    await store.aclose()


async def test_new_urls_at_once_are_the_rows_of_one_at_a_time(tmp_path: Path) -> None:
    """A page's new URLs given together are stored as the same rows, each counted."""
    rows = [UrlRow(7, "http://a.test/x", 0, 2, 5),
            UrlRow(8, "http://b.test/y.pdf", 1, 2, 5, Outcome.OUT_OF_SCOPE),
            UrlRow(9, "http://a.test/z", 0, 2, 5)]
    tables = []
    for name, at_once in (("one.db", False), ("many.db", True)):
        store = await CrawlStore.open(tmp_path / name)
        store.add_host(HostRow(0, "a.test"))
        store.add_host(HostRow(1, "b.test"))
        if at_once:
            store.add_new_urls(7, [r.url for r in rows], [r.host_id for r in rows], 2, 5,
                               [r.outcome for r in rows])
        else:
            for row in rows:
                store.add_url(row)
        assert store.pending == 5
        await store.aclose()
        tables.append(_rows(tmp_path / name, "SELECT * FROM urls ORDER BY id"))
    assert tables[0] == tables[1] and len(tables[0]) == 3
    assert tables[1][1][:6] == (8, "http://b.test/y.pdf", 1, 2, 5, "out_of_scope")


async def test_background_writer_commits_by_size_and_interval(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path, batch_size=3, flush_interval=0.05)
    store.add_host(HostRow(0, "a.test"))
    store.add_url(UrlRow(0, "http://a.test/", 0, 0, -1))
    store.add_url(UrlRow(1, "http://a.test/1", 0, 1, 0))  # third record: batch due
    for _ in range(200):
        await asyncio.sleep(0.01)
        if _rows(path, "SELECT count(*) FROM urls") == [(2,)]:
            break
    assert _rows(path, "SELECT count(*) FROM urls") == [(2,)]
    store.add_url(UrlRow(2, "http://a.test/2", 0, 1, 0))  # below batch size: by interval
    for _ in range(200):
        await asyncio.sleep(0.01)
        if _rows(path, "SELECT count(*) FROM urls") == [(3,)]:
            break
    assert _rows(path, "SELECT count(*) FROM urls") == [(3,)]
    await store.aclose()


_CHILD = textwrap.dedent("""
    import asyncio, sys, os
    from webcrawl.storage.store import CrawlStore, HostRow, UrlRow
    from webcrawl.storage.records import FetchRecord, Outcome

    def page(store, i):
        # All records of one fetch, no await in between: one transaction.
        store.add_url(UrlRow(i + 1, f"http://a.test/{i + 1}", 0, 1, i))
        store.add_fetch(FetchRecord(i, i, 1.0, 2.0, Outcome.FETCHED, 200))
        store.add_links(i, [i + 1, 0])
        store.set_outcome(i, Outcome.FETCHED, i)

    async def main(path, mode):
        store = await CrawlStore.open(path, batch_size=50, flush_interval=0.01)
        store.add_host(HostRow(0, "a.test"))
        store.add_url(UrlRow(0, "http://a.test/0", 0, 0, -1))
        if mode == "tail":
            for i in range(100):
                page(store, i)
            await store.flush()
            for i in range(100, 150):
                page(store, i)
            os._exit(0)  # dies without flushing: the 50-page tail is lost
        i = 0
        while True:
            page(store, i)
            i += 1
            if i == 200:
                await store.flush()
                print("ready", flush=True)
            if i % 7 == 0:
                await asyncio.sleep(0)

    asyncio.run(main(sys.argv[1], sys.argv[2]))
""")


def _run_child(path: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(path), mode], env=env,
                            stdout=subprocess.PIPE, text=True)


def _check_consistent(path: Path) -> int:
    """Integrity ok and every fetched page has all its records; return the page count."""
    assert _rows(path, "PRAGMA integrity_check") == [("ok",)]
    fetched = {r[0] for r in _rows(path, "SELECT id FROM urls WHERE outcome = 'fetched'")}
    fetches = {r[0] for r in _rows(path, "SELECT url_id FROM fetches")}
    links = {r[0] for r in _rows(path, "SELECT src FROM links")}
    urls = {r[0] for r in _rows(path, "SELECT id FROM urls")}
    assert fetched == fetches == links
    assert urls == set(range(len(fetched) + 1))  # each page's new URL came with it
    return len(fetched)


def test_exit_without_flush_loses_only_the_uncommitted_tail(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    child = _run_child(path, "tail")
    child.communicate(timeout=60)
    assert child.returncode == 0
    assert _check_consistent(path) == 100


def test_kill_9_during_writes_keeps_batches_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    child = _run_child(path, "loop")
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.3)  # let it write many more batches, then kill it mid-stream
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    assert _check_consistent(path) >= 200


async def test_existing_crawl_without_resume_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path)
    await store.aclose()
    with pytest.raises(StoreError, match="--resume"):
        await CrawlStore.open(path)


async def test_resume_without_a_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="nothing to resume"):
        await CrawlStore.open(tmp_path / "missing.db", resume=True)


async def test_missing_folder_is_a_one_line_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        await CrawlStore.open(tmp_path / "no" / "such" / "c.db")


async def test_schema_version_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path)
    await store.aclose()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError, match="999"):
        await CrawlStore.open(path, resume=True)
    with pytest.raises(SchemaVersionError):
        CrawlReader(path)


@pytest.mark.parametrize("content", [b"not a database at all" * 100, b""], ids=["junk", "empty"])
async def test_foreign_or_empty_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "c.db"
    path.write_bytes(content)
    if content:
        with pytest.raises(StoreError, match="not a crawl database"):
            await CrawlStore.open(path, resume=True)
    else:  # an empty file is a fresh database
        store = await CrawlStore.open(path)
        await store.aclose()
        assert _rows(path, "SELECT value FROM meta WHERE key='schema_version'") == [("8",)]


async def test_sqlite_file_of_another_application(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(StoreError, match="not a webcrawl crawl database"):
        await CrawlStore.open(path, resume=True)


async def test_disk_full_stops_cleanly_and_keeps_committed_data(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path, batch_size=100_000, flush_interval=60)
    store.add_host(HostRow(0, "a.test"))
    store.add_url(UrlRow(0, "http://a.test/", 0, 0, -1))
    await store.flush()
    pages = _rows(path, "PRAGMA page_count")[0][0]
    # The writer connection may not grow the file beyond its current size: SQLITE_FULL.
    store._db.execute(f"PRAGMA max_page_count = {pages}")
    for i in range(1, 2000):
        store.add_url(UrlRow(i, f"http://a.test/{'x' * 200}{i}", 0, 1, 0))
    with pytest.raises(StoreFullError, match="disk full"):
        await store.flush()
    with pytest.raises(StoreFullError):  # the error sticks: never swallowed
        store.add_url(UrlRow(5000, "http://a.test/late", 0, 1, 0))
    with pytest.raises(StoreFullError):
        await store.aclose()
    assert _rows(path, "PRAGMA integrity_check") == [("ok",)]
    assert _rows(path, "SELECT id FROM urls") == [(0,)]


async def test_background_write_error_reaches_the_next_call(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path, batch_size=10, flush_interval=0.01)
    store.add_host(HostRow(0, "a.test"))
    await store.flush()
    store._db.execute("PRAGMA query_only = 1")  # the file turns read-only
    store.add_url(UrlRow(0, "http://a.test/", 0, 0, -1))
    for _ in range(300):  # the background writer fails on its own
        await asyncio.sleep(0.01)
        if store._error is not None:
            break
    with pytest.raises(StoreReadOnlyError, match="read-only"):
        store.set_meta("k", "v")
    with pytest.raises(StoreReadOnlyError):
        await store.aclose()
    assert _rows(path, "SELECT name FROM hosts") == [("a.test",)]
    assert _rows(path, "SELECT count(*) FROM urls") == [(0,)]


async def test_read_only_database_is_refused_at_open(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path)
    await store.aclose()
    # Running as root makes chmod meaningless; a read-only connection is the same
    # condition for SQLite (SQLITE_READONLY on the first write).
    monkeypatch.setattr(CrawlStore, "_open_mode", "ro")
    with pytest.raises(StoreReadOnlyError, match="read-only"):
        await CrawlStore.open(path, resume=True)
    assert _rows(path, "PRAGMA integrity_check") == [("ok",)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
async def test_read_only_file_by_permissions(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path)
    await store.aclose()
    path.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(StoreReadOnlyError):
            await CrawlStore.open(path, resume=True)
    finally:
        tmp_path.chmod(0o755)
        path.chmod(0o644)


async def test_second_writer_is_refused_between_commits_until_the_first_closes(
        tmp_path: Path) -> None:
    from webcrawl.storage.errors import StoreLockedError
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path)
    store.set_meta("k", "v")
    await store.flush()  # idle between commits: SQLite itself holds no lock now
    for resume in (True, False):
        with pytest.raises(StoreLockedError, match=rf"pid {os.getpid()}"):
            await CrawlStore.open(path, resume=resume)
    await store.aclose()
    again = await CrawlStore.open(path, resume=True)  # released on close
    await again.aclose()


async def test_closed_store_refuses_writes(tmp_path: Path) -> None:
    store = await CrawlStore.open(tmp_path / "c.db")
    await store.aclose()
    await store.aclose()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        store.add_host(HostRow(0, "a.test"))


async def test_update_host_rejects_unknown_fields(tmp_path: Path) -> None:
    store = await CrawlStore.open(tmp_path / "c.db")
    with pytest.raises(StoreError, match="unknown host fields"):
        store.update_host(0, name_typo="x")
    await store.aclose()


async def test_resume_state_orders_links_by_fetch_seq(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test"))
    for i in range(4):
        store.add_url(UrlRow(i, f"http://a.test/{i}", 0, 0 if i == 0 else 1, -1 if i == 0 else 0))
    # fetched in the order 2, 0, 3 (seq 0, 1, 2); URL 1 stays in the frontier
    for seq, page in enumerate([2, 0, 3]):
        store.add_fetch(FetchRecord(page, seq, 1.0, 2.0, Outcome.FETCHED, 200))
        store.add_links(page, [1, page])
        store.set_outcome(page, Outcome.FETCHED, seq)
    await store.aclose()
    store = await CrawlStore.open(path, resume=True)
    state = await store.load_state()
    await store.aclose()
    assert [src for src, _ in state.fetched_links] == [2, 0, 3]
    assert [list(d) for _, d in state.fetched_links] == [[1, 2], [1, 0], [1, 3]]
    assert [u.id for u in state.urls if u.outcome is None] == [1]
    assert state.next_seq == 3


async def test_resume_continues_writing(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test"))
    store.add_url(UrlRow(0, "http://a.test/", 0, 0, -1))
    await store.aclose()
    store = await CrawlStore.open(path, resume=True)
    state = await store.load_state()
    store.add_url(UrlRow(state.next_url_id, "http://a.test/b", 0, 1, 0))
    await store.aclose()
    assert _rows(path, "SELECT id, url FROM urls ORDER BY id") == [
        (0, "http://a.test/"), (1, "http://a.test/b")]


async def test_concurrent_reader_sees_commits_while_the_crawl_writes(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await CrawlStore.open(path, batch_size=10_000, flush_interval=60)
    store.add_host(HostRow(0, "a.test"))
    store.add_url(UrlRow(0, "http://a.test/0", 0, 0, -1))
    await store.flush()
    reader = CrawlReader(path)  # opened while the writer holds the file
    try:
        assert len(reader.urls()) == 1
        with reader.snapshot():
            before = len(reader.urls())
            for i in range(1, 50):
                store.add_url(UrlRow(i, f"http://a.test/{i}", 0, 1, 0))
            await store.flush()
            assert len(reader.urls()) == before == 1  # the snapshot is stable
        assert len(reader.urls()) == 50  # a new read sees the new commits
        store.add_url(UrlRow(50, "http://a.test/50", 0, 1, 0))
        await store.flush()
        assert reader.urls().urls[-1] == "http://a.test/50"
    finally:
        reader.close()
        await store.aclose()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"batch_size": 0}, "batch_size"), ({"flush_interval": 0}, "flush_interval")],
    ids=["batch", "interval"])
async def test_bad_settings(tmp_path: Path, kwargs: dict[str, float], match: str) -> None:
    from webcrawl.storage.errors import ConfigError
    with pytest.raises(ConfigError, match=match):
        await CrawlStore.open(tmp_path / "c.db", **kwargs)  # type: ignore[arg-type]


async def test_backlog_holds_a_producer_back_until_the_commit(tmp_path: Path) -> None:
    """``backlogged`` turns on past DRAIN_BATCHES batches of pending records, and
    ``on_commit`` tells a producer that never awaits the store when the writer caught
    up (also after a failed commit, whose error the next call raises)."""
    from webcrawl.storage.store import DRAIN_BATCHES

    path = tmp_path / "c.db"
    store = await CrawlStore.open(path, batch_size=2, flush_interval=60)
    seen: list[tuple[bool, int]] = []
    store.on_commit(lambda: seen.append((store.backlogged, store.pending)))
    store.add_host(HostRow(0, "a.test"))
    for i in range(DRAIN_BATCHES * 2 - 1):  # no await: the writer cannot run meanwhile
        store.add_url(UrlRow(i, f"http://a.test/{i}", 0, 0, -1))
    assert store.pending == DRAIN_BATCHES * 2 and not store.backlogged
    store.add_url(UrlRow(99, "http://a.test/99", 0, 0, -1))
    assert store.backlogged
    await store.flush()
    assert seen == [(False, 0)]
    assert _rows(path, "SELECT count(*) FROM urls") == [(DRAIN_BATCHES * 2,)]
    store._db.execute("PRAGMA query_only = 1")  # the next commit fails
    store.add_url(UrlRow(100, "http://a.test/100", 0, 0, -1))
    with pytest.raises(StoreReadOnlyError):
        await store.flush()
    assert len(seen) == 2
    with pytest.raises(StoreReadOnlyError):
        await store.aclose()
