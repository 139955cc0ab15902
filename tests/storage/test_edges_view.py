"""The ``edges`` view: every stored link as a row, for tools that read SQL only.

Checked with the stock ``sqlite3`` module, sqlite-utils and DuckDB's SQLite scanner
against the links the store was given (the hand-made crawl of ``conftest.py``, a page
of 5,000 links with ids up to 2**31 - 1, and an imported edge list), and on a file of
schema version 3 that a resumed crawl upgrades.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from webcrawl.storage.edgelist import import_edges
from webcrawl.storage.reader import CrawlReader
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

from tests.storage.conftest import SMALL_FETCHED, SMALL_URLS, read_rows

EXPECTED = [(src, d, k, SMALL_URLS[src][0], SMALL_URLS[d][0])
            for src, (_, dst, _) in sorted(SMALL_FETCHED.items()) for k, d in enumerate(dst)]


_rows = read_rows


def test_view_lists_every_stored_link(small_db: Path) -> None:
    got = _rows(small_db, "SELECT src, dst, position, src_url, dst_url FROM edges"
                          " ORDER BY src, position")
    assert got == EXPECTED  # duplicates kept (0 -> 1 twice), odd URLs intact
    assert _rows(small_db, "SELECT count(*) FROM edges") == [(len(EXPECTED),)]


@pytest.fixture(params=["crawl", "imported-ids"])
def viewed(request: pytest.FixtureRequest, small_db: Path,
           tmp_path: Path) -> tuple[Path, list[tuple[str, str]]]:
    """A database and its links' (src_url, dst_url) in view order: the hand-made crawl,
    or an imported graph of integer ids with gaps (its names in ``id_ranges``)."""
    if request.param == "crawl":
        return small_db, [e[3:] for e in EXPECTED]
    edges = [(5, 9), (5, 5), (5, 12), (9, 2), (12, 9), (12, 2), (12, 40), (40, 5)]
    path = tmp_path / "ids.txt"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    import_edges(path, tmp_path / "ids.db")
    return tmp_path / "ids.db", [(str(a), str(b)) for a, b in edges]


def test_sqlite_utils_reads_the_view(viewed: tuple[Path, list[tuple[str, str]]]) -> None:
    sqlite_utils = pytest.importorskip("sqlite_utils")
    path, expected = viewed
    db = sqlite_utils.Database(path)
    assert "edges" in db.view_names()
    assert db["edges"].count == len(expected)
    rows = list(db.query("SELECT src_url, dst_url FROM edges ORDER BY src, position"))
    assert [(r["src_url"], r["dst_url"]) for r in rows] == expected


def test_duckdb_sqlite_scanner_reads_the_view(viewed: tuple[Path, list[tuple[str, str]]]) -> None:
    small_db, expected = viewed
    duckdb = pytest.importorskip("duckdb")
    scanner = pytest.importorskip("duckdb_extension_sqlite_scanner")
    binary = next(Path(scanner.__file__).parent.glob(
        f"extensions/v{duckdb.__version__}/sqlite_scanner.duckdb_extension"))
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{binary}'")
    con.execute(f"ATTACH '{small_db}' AS crawl (TYPE sqlite, READ_ONLY)")
    rows = con.execute("SELECT src_url, dst_url FROM crawl.edges ORDER BY src, position")
    assert [tuple(map(str, r)) for r in rows.fetchall()] == expected
    assert con.execute("SELECT count(*) FROM crawl.edges").fetchone() == (len(expected),)


async def test_large_pages_and_ids(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    pages = {0: rng.integers(0, 2**31 - 1, 5000).tolist(), 1: [2**31 - 1, 0, 2**24, 255, 256],
             2: [7] * 17, 3: []}
    path = tmp_path / "big.db"
    store = await CrawlStore.open(path)
    store.add_host(HostRow(0, "a.test"))
    for src, dst in pages.items():
        store.add_url(UrlRow(src, f"http://a.test/{src}", 0, 0, -1))
        store.add_links(src, dst)
    await store.aclose()
    got = _rows(path, "SELECT src, dst, position FROM edges ORDER BY src, position")
    assert got == [(s, d, k) for s, dst in pages.items() for k, d in enumerate(dst)]


def test_imported_graph(tmp_path: Path) -> None:
    edges = tmp_path / "e.txt"
    rng = np.random.default_rng(2)
    src = np.sort(rng.integers(0, 300, 4000))
    dst = rng.integers(0, 300, 4000)
    edges.write_text("".join(f"{a}\t{b}\n" for a, b in zip(src, dst, strict=True)))
    db = tmp_path / "g.db"
    result = import_edges(edges, db)
    assert _rows(db, "SELECT count(*) FROM edges") == [(result.edges,)] == [(4000,)]
    pairs = _rows(db, "SELECT src_url, dst_url FROM edges ORDER BY src, position")
    assert pairs == [(str(a), str(b)) for a, b in zip(src.tolist(), dst.tolist(), strict=True)]


async def test_version_3_file_is_read_then_gets_the_view(small_db: Path) -> None:
    conn = sqlite3.connect(small_db)
    conn.executescript("DROP VIEW edges;"
                       " UPDATE meta SET value = '3' WHERE key = 'schema_version';")
    conn.close()
    with CrawlReader(small_db) as reader:
        assert reader.meta()["schema_version"] == "3"
        assert reader.links_csr().dst.size == len(EXPECTED)
    store = await CrawlStore.open(small_db, resume=True)
    await store.aclose()
    assert _rows(small_db, "SELECT count(*) FROM edges") == [(len(EXPECTED),)]
    with CrawlReader(small_db) as reader:
        assert reader.meta()["schema_version"] == "8"
