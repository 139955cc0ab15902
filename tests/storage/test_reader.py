"""CrawlReader: numpy columns of a hand-made crawl."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from webcrawl.storage.errors import StoreError
from webcrawl.storage.reader import OUTCOMES, CrawlReader, outcome_code
from webcrawl.storage.records import Outcome

from tests.storage.conftest import SMALL_FETCHED, SMALL_URLS


def test_urls_columns(small_db: Path) -> None:
    with CrawlReader(small_db) as r:
        t = r.urls()
    assert t.ids.tolist() == [0, 1, 2, 3, 4]
    assert t.urls == [SMALL_URLS[i][0] for i in range(5)]
    assert t.host_ids.tolist() == [0, 0, 1, 1, 0]
    assert t.depth.tolist() == [0, 1, 1, 2, 1]
    assert t.discovered_seq.tolist() == [-1, 0, 0, 1, 0]
    assert [None if c < 0 else OUTCOMES[c] for c in t.outcome] == [
        Outcome.FETCHED, Outcome.FETCHED, None, None, Outcome.HTTP_ERROR]
    assert t.seq.tolist() == [0, 1, -1, -1, 2]
    assert t.has_outcome("fetched").tolist() == [True, True, False, False, False]
    assert t.in_frontier.tolist() == [False, False, True, True, False]
    assert outcome_code(Outcome.FETCHED) == OUTCOMES.index(Outcome.FETCHED)


def test_links_csr_and_nofollow(small_db: Path) -> None:
    with CrawlReader(small_db) as r:
        links = r.links_csr()
        nofollow = r.nofollow_csr()
    assert links.src.tolist() == [0, 1]
    assert links.indptr.tolist() == [0, 4, 6]
    assert links.dst.tolist() == [1, 2, 4, 1, 3, 0]
    assert links.edge_src.tolist() == [0, 0, 0, 0, 1, 1]
    assert nofollow.src.tolist() == [0] and nofollow.dst.tolist() == [2]


def test_small_tables_and_order(small_db: Path) -> None:
    with CrawlReader(small_db) as r:
        ids, names = r.hosts()
        assert ids.tolist() == [0, 1] and names == ["a.test", "b.test:8080"]
        assert r.seeds().tolist() == [0]
        assert r.seed_urls() == ["http://a.test/"]
        assert r.meta()["schema_version"] == "8"
        assert r.url_strings(np.array([3, 0])) == [SMALL_URLS[3][0], SMALL_URLS[0][0]]
        url_ids, seqs, times = r.fetch_order()
    assert url_ids.tolist() == [0, 1, 4] and seqs.tolist() == [0, 1, 2]
    assert times.tolist() == [1700000000.5, 1700000001.5, 1700000002.5]


def test_empty_tables_give_empty_arrays(tmp_path: Path) -> None:
    import asyncio

    from webcrawl.storage.store import CrawlStore

    async def make() -> None:
        await (await CrawlStore.open(tmp_path / "e.db")).aclose()

    asyncio.run(make())
    with CrawlReader(tmp_path / "e.db") as r:
        assert len(r.urls()) == 0
        assert r.links_csr().dst.size == 0 and r.links_csr().indptr.tolist() == [0]
        assert r.fetches()["seq"].size == 0
        assert r.fetch_order()[0].size == 0


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no crawl database"):
        CrawlReader(tmp_path / "nope.db")


@pytest.mark.parametrize("chunk", [1, 9, 1 << 27], ids=["page-by-page", "9-bytes", "whole"])
def test_links_read_in_ranges_of_pages(small_db: Path, monkeypatch: pytest.MonkeyPatch,
                                       chunk: int) -> None:
    from webcrawl.storage import _linkread

    monkeypatch.setattr(_linkread, "BLOB_CHUNK", chunk)
    with CrawlReader(small_db) as r:
        links = r.links_csr()
    assert links.src.tolist() == sorted(SMALL_FETCHED)
    assert [links.dst[links.indptr[k]:links.indptr[k + 1]].tolist()
            for k in range(links.src.size)] == [SMALL_FETCHED[s][1] for s in sorted(SMALL_FETCHED)]
