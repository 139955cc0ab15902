"""Link history in the store (schema version 2): a page's changed links keep the previous
set as an earlier version with its fetch; the reader and loader pick versions by seq; a
version-1 file is read as it is and upgraded by a writer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from webcrawl.analysis.graph import load_graph
from webcrawl.storage._sqlite import decode_ids
from webcrawl.storage.reader import CrawlReader
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow


def fetch(url_id: int, seq: int, kind: FetchKind = FetchKind.CRAWL) -> FetchRecord:
    return FetchRecord(url_id, seq, 100.0 + seq, 100.5 + seq, Outcome.FETCHED, 200,
                       "text/html", kind=kind)


async def write_history(path: Path) -> None:
    """Page 0 links [1, 2] (seq 0), then [2, 3] (seq 1), then [2, 3] again (seq 2), then
    twice in one batch: [1] (seq 3) and [3, 1] (seq 4).  Page 1 links [0] once (seq 5)."""
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test"))
    for i in range(4):
        store.add_url(UrlRow(i, f"http://a.test/{i}", 0, 0 if i == 0 else 1, -1 if i == 0 else 0))
    store.add_fetch(fetch(0, 0))
    store.add_links(0, [1, 2])
    store.set_outcome(0, Outcome.FETCHED, 0)
    await store.flush()
    for seq, links in ((1, [2, 3]), (2, [2, 3])):
        store.add_fetch(fetch(0, seq, FetchKind.REVISIT))
        store.add_links(0, links)
        await store.flush()
    store.add_fetch(fetch(0, 3, FetchKind.REVISIT))
    store.add_links(0, [1])
    store.add_fetch(fetch(0, 4, FetchKind.REVISIT))
    store.add_links(0, [3, 1], [3])
    store.add_fetch(fetch(1, 5))
    store.add_links(1, [0])
    store.set_outcome(1, Outcome.FETCHED, 5)
    await store.aclose()


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


async def test_changed_links_keep_the_previous_version(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    await write_history(path)
    seq_of = dict(rows(path, "SELECT id, seq FROM fetches"))
    versions = [(src, seq_of[f], seq_of[by], list(decode_ids(d)))
                for src, f, by, d in rows(path, "SELECT src, fetch_id, superseded_by, dst"
                                                " FROM link_versions ORDER BY rowid")]
    # [2, 3] seen again at seq 2 is no new version; seq 3 and 4 came in one batch.
    assert versions == [(0, 0, 1, [1, 2]), (0, 1, 3, [2, 3]), (0, 3, 4, [1])]
    latest = {src: (seq_of[f], list(decode_ids(d)), list(decode_ids(n)))
              for src, f, d, n in rows(path, "SELECT src, fetch_id, dst, nofollow FROM links")}
    assert latest == {0: (4, [3, 1], [3]), 1: (5, [0], [])}


async def test_reader_and_loader_pick_versions_by_seq(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    await write_history(path)
    expected = {None: {0: [3, 1], 1: [0]}, 0: {0: [1, 2]}, 1: {0: [2, 3]}, 2: {0: [2, 3]},
                3: {0: [1]}, 4: {0: [3, 1]}, 5: {0: [3, 1], 1: [0]}}
    with CrawlReader(path) as reader:
        for seq, want in expected.items():
            csr = reader.links_csr(seq)
            got = {int(s): csr.dst[csr.indptr[k]:csr.indptr[k + 1]].tolist()
                   for k, s in enumerate(csr.src)}
            assert got == want, seq
        nf = reader.nofollow_csr(4)
        assert nf.src.tolist() == [0] and nf.dst.tolist() == [3]
    latest = load_graph(path, graph="all", drop_self_loops=False)
    assert sorted(zip(*latest.adjacency.nonzero(), strict=True)) == [(0, 1), (0, 3), (1, 0)]
    early = load_graph(path, graph="all", links_as_of_seq=0)
    assert sorted(zip(*early.adjacency.nonzero(), strict=True)) == [(0, 1), (0, 2)]
    assert np.array_equal(early.store_ids, latest.store_ids)


async def test_version_1_file_is_read_and_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    await write_history(path)
    with sqlite3.connect(path) as conn:  # what a version-1 writer left
        conn.execute("DROP TABLE link_versions")
        conn.execute("ALTER TABLE links DROP COLUMN fetch_id")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    graph = load_graph(path, graph="all")  # readers read it as it is
    assert graph.m == 3
    with CrawlReader(path) as reader:
        assert reader.links_csr(0).src.tolist() == [0, 1]  # one version per page
    store = await CrawlStore.open(path, resume=True)
    store.add_fetch(fetch(1, 6, FetchKind.REVISIT))
    store.add_links(1, [2])
    await store.aclose()
    assert rows(path, "SELECT value FROM meta WHERE key = 'schema_version'") == [("8",)]
    (version,) = rows(path, "SELECT src, fetch_id, dst FROM link_versions")
    assert version[0] == 1 and version[1] is None and list(decode_ids(version[2])) == [0]
