"""Resume through the library: the stored strategy and options come back (crawler.resume)."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest
from miniweb import read_db
from webcrawl.analysis.ordering.strategies import BreadthFirst, PageRankOrder
from webcrawl.crawler.config import resume_settings
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.resume import settings_json
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureServer, FixtureWeb
from webcrawl.storage.errors import ConfigError

# After 0 and 1 are fetched, 3 has in-links from both: PageRank takes it before 2, and
# breadth-first takes 2 first (it was discovered first).
PAGERANK = [(0, 1), (0, 2), (0, 3), (1, 3)]


def _settings(**overrides: object) -> CrawlSettings:
    return CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                    **overrides)


def _order(db: Path, web: FixtureWeb, port: int) -> list[int]:
    page_of = {web.url_of(p, port): p for p in range(web.pages)}
    return [page_of[url] for url, _seq, _o, _s, attempt, *_ in read_db(db)["fetches"]
            if attempt == 1]


async def test_library_resume_continues_in_the_stored_pagerank_order(tmp_path: Path) -> None:
    web = FixtureWeb.from_edges(PAGERANK)
    db = tmp_path / "crawl.db"
    async with FixtureServer(web) as server:
        first = await Crawler(db, [server.seed_url],
                              _settings(frontier_strategy="pagerank", scope_max_pages=2)).run()
        assert first.stopped == "max_pages"
        assert _order(db, web, server.port) == [0, 1]
        resumed = Crawler(db, resume=True, overrides={"scope_max_pages": None})
        assert resumed.strategy.name == "pagerank"
        assert resumed.settings.resolve == ("*.test=127.0.0.1",)
        stats = await resumed.run()
        order = _order(db, web, server.port)
    assert stats.stopped == "done"
    assert order == [0, 1, 3, 2]  # breadth-first would take 2 before 3
    assert {row[1] for row in _fetch_strategies(db)} == {"pagerank"}


def _fetch_strategies(db: Path) -> list[tuple[int, str]]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT seq, strategy FROM fetches").fetchall()


async def test_a_conflicting_strategy_is_refused(tmp_path: Path) -> None:
    web = FixtureWeb.from_edges(PAGERANK)
    db = tmp_path / "crawl.db"
    async with FixtureServer(web) as server:
        await Crawler(db, [server.seed_url],
                      _settings(frontier_strategy="pagerank", scope_max_pages=1)).run()
    with pytest.raises(ConfigError, match=r"'pagerank' strategy.*'bfs'"):
        Crawler(db, resume=True, overrides={"frontier_strategy": "bfs"})
    with pytest.raises(ConfigError, match=r"'pagerank' strategy.*'bfs'"):
        Crawler(db, resume=True, strategy=BreadthFirst())
    # A settings object gives the fields that differ from the defaults (one meaning for
    # every entry point): bfs is the default, so it names no strategy and the stored
    # one continues.
    assert Crawler(db, resume=True, settings=_settings()).settings.frontier_strategy == \
        "pagerank"
    # The stored strategy given again is no conflict and no note.
    again = Crawler(db, resume=True, strategy=PageRankOrder(), overrides={"scope_max_pages": 1})
    assert again.notes == ()


def _nondefault(tmp_path: Path) -> CrawlSettings:
    ca = tmp_path / "ca.pem"
    ca.write_text("not read until a TLS connection is made\n")
    return CrawlSettings(
        fetch_total_timeout=7.5, fetch_user_agent="probe/1 (+mailto:x@example.org)",
        polite_delay_factor=2.0, polite_min_delay=0.25, polite_max_delay=3.0,
        robots_obey=False, retry_attempts=5, scope_hosts=("*.test", "a.example"),
        scope_domains=("example.org",), scope_max_depth=4, scope_max_pages=100,
        scope_max_per_host=9, scope_skip_extensions=(".pdf",), tls_ca_file=str(ca),
        resolve=("*.test=127.0.0.1", "*:443=127.0.0.1:8443"), concurrency=3,
        frontier_strategy="opic", frontier_seed=42)


def test_every_stored_setting_comes_back(tmp_path: Path) -> None:
    stored = _nondefault(tmp_path)
    meta = {"settings": settings_json(stored), "strategy": "opic"}
    back = resume_settings(meta)
    assert back.settings == stored
    assert back.notes == ()
    differ = [f.name for f in fields(CrawlSettings)
              if getattr(stored, f.name) != getattr(CrawlSettings(), f.name)]
    assert len(differ) == 18  # every group of the command line's options is covered


def test_given_settings_override_with_one_note(tmp_path: Path) -> None:
    stored = _nondefault(tmp_path)
    meta = {"settings": settings_json(stored), "strategy": "opic"}
    back = resume_settings(meta, overrides={"scope_max_pages": 200, "tls_ca_file": None,
                                            "tls_insecure": True, "scope_max_depth": 4})
    assert back.settings.scope_max_pages == 200
    assert back.settings.tls_ca_file is None and back.settings.tls_insecure
    assert back.settings.resolve == stored.resolve  # not given: kept
    assert back.notes == (
        "overriding the crawl's stored settings: scope_max_pages 100 -> 200; "
        f"tls_ca_file {stored.tls_ca_file} -> None; tls_insecure False -> True",
    )  # scope_max_depth given with its stored value: not listed
    # A settings object gives only the fields that differ from the defaults (one meaning
    # for every entry point): the stored values it does not name are kept.
    assert stored.concurrency != 7
    full = resume_settings(meta, given=CrawlSettings(frontier_strategy="opic",
                                                     concurrency=7))
    assert full.settings == replace(stored, frontier_strategy="opic", concurrency=7)
    assert full.notes == (f"overriding the crawl's stored settings: concurrency "
                          f"{stored.concurrency} -> 7",)


def test_bad_resume_settings_are_config_errors(tmp_path: Path) -> None:
    stored = _nondefault(tmp_path)
    meta = {"settings": settings_json(stored), "strategy": "opic"}
    with pytest.raises(ConfigError,
                       match=r"unknown setting 'max_pages' \(did you mean scope_max_pages"):
        resume_settings(meta, overrides={"max_pages": 3})
    Path(stored.tls_ca_file or "").unlink()
    with pytest.raises(ConfigError, match="no CA file"):
        resume_settings(meta)
    with pytest.raises(ConfigError, match="not valid JSON"):
        resume_settings({"settings": "{"})


def test_resume_without_a_database_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nothing to resume"):
        Crawler(tmp_path / "none.db", resume=True)


def test_a_derived_user_agent_follows_a_new_contact() -> None:
    meta = {"settings": settings_json(CrawlSettings(fetch_robots_agent="probe"))}
    back = resume_settings(meta, overrides={"fetch_contact": "ops@example.org"})
    assert back.settings.fetch_user_agent == CrawlSettings(
        fetch_robots_agent="probe", fetch_contact="ops@example.org").fetch_user_agent
    assert "contact: ops@example.org" in back.settings.fetch_user_agent
    assert back.notes == (
        "overriding the crawl's stored settings: fetch_contact None -> ops@example.org",)
    # A User-Agent written out in full stays as stored.
    meta = {"settings": settings_json(CrawlSettings(fetch_user_agent="mine/2"))}
    assert resume_settings(
        meta, overrides={"fetch_contact": "a@b.c"}).settings.fetch_user_agent == "mine/2"


@pytest.mark.parametrize("edges", ["http://a.test/ http://a.test/b\nhttp://a.test/b http://b.test/\n",
                                   "0 1\n1 2\n2 0\n"], ids=["urls", "integer-ids"])
def test_resuming_an_imported_edge_list_is_one_line(tmp_path: Path, edges: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """An edge list holds a graph, not a crawl (no seeds, no fetches, no depths)."""
    from webcrawl.crawler.cli import main

    (tmp_path / "e.txt").write_text(edges)
    db = tmp_path / "g.db"
    assert main(["import", "edges", str(tmp_path / "e.txt"), "--db", str(db), "-q"]) == 0
    capsys.readouterr()
    assert main(["crawl", "--resume", "--db", str(db)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"webcrawl: error: {db} holds a graph imported from an edge list")
    assert "there is no crawl to resume" in err and "Traceback" not in err
