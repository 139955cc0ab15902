"""Schema version 1 files (before link_cuts and url_sources) stay readable and are
upgraded to the current version when a crawl resumes them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from webcrawl.storage.reader import CrawlReader
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow


async def test_version_1_file_read_then_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test"))
    store.add_url(UrlRow(0, "http://a.test/", 0, 0, -1))
    await store.aclose()
    conn = sqlite3.connect(path)
    conn.executescript("DROP TABLE link_cuts; DROP TABLE url_sources;"
                       " UPDATE meta SET value = '1' WHERE key = 'schema_version';")
    conn.close()
    with CrawlReader(path) as reader:
        assert reader.meta()["schema_version"] == "1"
        assert reader.link_cuts() == [] and reader.url_sources() == []
        assert reader.seed_urls() == ["http://a.test/"]
    store = await CrawlStore.open(path, resume=True)
    store.add_link_cut(0, 10, 5)
    await store.aclose()
    with CrawlReader(path) as reader:
        assert reader.meta()["schema_version"] == "8"
        assert reader.link_cuts() == [(0, 10, 5)]


async def test_version_4_file_gets_duplicate_of(tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test"))
    store.add_url(UrlRow(0, "http://a.test/", 0, 0, -1))
    store.add_url(UrlRow(1, "https://a.test/", 0, 1, 0))
    await store.aclose()
    conn = sqlite3.connect(path)
    conn.executescript("ALTER TABLE urls DROP COLUMN duplicate_of;"
                       " UPDATE meta SET value = '4' WHERE key = 'schema_version';")
    conn.close()
    with CrawlReader(path) as reader:  # read as it is: no duplicates
        assert [a.tolist() for a in reader.duplicates()] == [[], []]
    store = await CrawlStore.open(path, resume=True)
    store.set_duplicate(1, 0)
    await store.aclose()
    with CrawlReader(path) as reader:
        assert reader.meta()["schema_version"] == "8"
        assert [a.tolist() for a in reader.duplicates()] == [[1], [0]]


async def test_version_5_file_read_then_gets_link_blocks_and_the_new_view(tmp_path: Path) -> None:
    """A version 5 file (no link_blocks, the view over links only) reads as it is, and
    on resume gets the table and the view that reads both: the same links either way."""
    path = tmp_path / "v5.db"
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test"))
    for i in range(3):
        store.add_url(UrlRow(i, f"http://a.test/{i}", 0, 0, -1))
    store.add_links(0, (1, 2, 1))
    await store.aclose()
    old_view = ("CREATE VIEW edges (src, dst, position, src_url, dst_url) AS"
                " SELECT l.src, 0, 0, NULL, NULL FROM links AS l")
    conn = sqlite3.connect(path)
    conn.executescript(f"DROP TABLE link_blocks; DROP VIEW edges; {old_view};"
                       " UPDATE meta SET value = '5' WHERE key = 'schema_version';")
    conn.close()
    with CrawlReader(path) as reader:
        assert reader.meta()["schema_version"] == "5"
        assert reader.links_csr().dst.tolist() == [1, 2, 1]
    store = await CrawlStore.open(path, resume=True)
    await store.aclose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT src, dst, position FROM edges ORDER BY position"
                            ).fetchall() == [(0, 1, 0), (0, 2, 1), (0, 1, 2)]
        assert conn.execute("SELECT count(*) FROM link_blocks").fetchone() == (0,)
    with CrawlReader(path) as reader:
        assert reader.meta()["schema_version"] == "8"


async def test_version_6_imported_graph_read_then_upgraded(tmp_path: Path) -> None:
    """A version 6 import of integer ids (a urls row a node, no id_ranges, the view
    naming nodes from urls only) reads as the version 7 import of the same file, and
    on resume gets the empty table and the new view: the same rows either way."""
    import re

    from webcrawl.storage.edgelist import import_edges

    edges = tmp_path / "e.txt"
    edges.write_text("3 4\n3 8\n4 3\n8 8\n8 11\n")
    import_edges(edges, tmp_path / "v7.db", seeds=["4"])
    path = tmp_path / "v6.db"
    import_edges(edges, path, seeds=["4"])
    with CrawlReader(path) as reader:
        table = reader.urls()
    rows = [(i, u, -1 if i in (1,) else 0, "fetched" if o >= 0 else None)
            for i, u, o in zip(table.ids.tolist(), table.urls, table.outcome.tolist(),
                               strict=True)]
    conn = sqlite3.connect(path)
    view = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'edges'").fetchone()[0]
    old_view = re.sub(r"\(SELECT ifnull\(\(SELECT url FROM urls WHERE id = x\.v\),.*?"
                      r"FROM \(SELECT e\.(\w+) AS v\) AS x\)",
                      r"(SELECT url FROM urls WHERE id = e.\1)", view, flags=re.S)
    assert old_view.count("id_ranges") == 0 < view.count("id_ranges")
    conn.executemany("INSERT INTO urls (id, url, host_id, depth, discovered_seq, outcome)"
                     " VALUES (?, ?, 0, -1, ?, ?)", rows)
    conn.executescript(f"DROP TABLE id_ranges; DROP VIEW edges; {old_view};"
                       " UPDATE meta SET value = '6' WHERE key = 'schema_version';")
    conn.close()
    view_rows = "SELECT src, dst, position, src_url, dst_url FROM edges ORDER BY position"
    with sqlite3.connect(tmp_path / "v7.db") as conn:
        expected = conn.execute(view_rows).fetchall()
    assert [r[3:] for r in expected] == [("3", "4"), ("3", "8"), ("4", "3"), ("8", "8"),
                                        ("8", "11")]

    def same_as_v7() -> None:
        with CrawlReader(path) as old, CrawlReader(tmp_path / "v7.db") as new:
            a, b = old.urls(), new.urls()
            assert list(a.urls) == list(b.urls) == ["3", "4", "8", "11"]
            for column in ("ids", "host_ids", "depth", "discovered_seq", "outcome", "seq"):
                assert getattr(a, column).tolist() == getattr(b, column).tolist(), column
            assert old.seeds().tolist() == new.seeds().tolist() == [1]
            assert list(old.iter_edges()) == list(new.iter_edges())
            assert list(old.iter_pages()) == list(new.iter_pages())
            assert old.links_csr().dst.tolist() == new.links_csr().dst.tolist()
        with sqlite3.connect(path) as conn:
            assert conn.execute(view_rows).fetchall() == expected

    with CrawlReader(path) as reader:
        assert reader.meta()["schema_version"] == "6"
    same_as_v7()
    store = await CrawlStore.open(path, resume=True)
    await store.aclose()
    with CrawlReader(path) as reader:
        assert reader.meta()["schema_version"] == "8"
    same_as_v7()


async def test_version_7_file_gets_the_near_duplicate_columns(tmp_path: Path) -> None:
    """A version 7 file (no sketches, no near copies) reads as it is, and on resume gets
    fetches.sketch, urls.near_of and urls.near_resemblance, all empty until written."""
    path = tmp_path / "v7.db"
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test"))
    store.add_url(UrlRow(0, "http://a.test/", 0, 0, -1))
    store.add_url(UrlRow(1, "http://a.test/b", 0, 1, 0))
    await store.aclose()
    conn = sqlite3.connect(path)
    conn.executescript("ALTER TABLE urls DROP COLUMN near_of;"
                       " ALTER TABLE urls DROP COLUMN near_resemblance;"
                       " ALTER TABLE fetches DROP COLUMN sketch;"
                       " UPDATE meta SET value = '7' WHERE key = 'schema_version';")
    conn.close()
    with CrawlReader(path) as reader:  # read as it is: no near copies
        assert [a.tolist() for a in reader.near_duplicates()] == [[], [], []]
    store = await CrawlStore.open(path, resume=True)
    store.set_near_duplicate(1, 0, 0.875)
    await store.aclose()
    with CrawlReader(path) as reader:
        assert reader.meta()["schema_version"] == "8"
        assert [a.tolist() for a in reader.near_duplicates()] == [[1], [0], [0.875]]
    with sqlite3.connect(path) as conn:
        assert {r[1] for r in conn.execute("PRAGMA table_info(fetches)")} >= {"sketch"}
