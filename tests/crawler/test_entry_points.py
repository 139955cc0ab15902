"""The library is the product: every entry point layers settings one way, picks the same
downloader and runs on the same event loop (library calls, the CLI, the demo)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import webcrawl.crawler.shard.coordinator as coordinator
from loopspy import expected_loop
from test_fixture_crawl import expected_edges, page_edges
from webcrawl.crawler.cli import build_parser, main
from webcrawl.crawler.cli.crawl import _given_settings as crawl_cli_settings
from webcrawl.crawler.cli.revisit import _given_settings as revisit_cli_settings
from webcrawl.crawler.config import (
    layer_settings,
    load_toml,
    parse_assignments,
    revisit_base_settings,
)
from webcrawl.crawler.engine import Crawler, crawl
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings, revisit
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard.forks import ForkServer
from webcrawl.crawler.shard.transport import Transport
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

pytestmark = pytest.mark.timeout(600)  # a hang guard, never a measurement (slow under load)

BASE = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",))


@pytest.fixture(scope="module")
def fixture_web() -> FixtureWeb:
    return FixtureWeb.build(FixtureConfig(pages=300, hosts=6, seed=5))


# -- one settings path ---------------------------------------------------------------

def test_the_same_layers_give_the_same_settings_everywhere(tmp_path: Path,
                                                           fixture_web: FixtureWeb) -> None:
    config = tmp_path / "c.toml"
    config.write_text("polite_min_delay = 0.002\nfetch_read_timeout = 7.5\n"
                      "[retry]\nattempts = 4\n", encoding="utf-8")
    argv = ["--config", str(config), "--min-delay", "0.003", "--max-delay", "1", "--timeout", "11",
            "--set", "concurrency=5", "--set", "fetch_read_timeout=8"]
    layers = [load_toml(config), {"polite_min_delay": 0.003, "polite_max_delay": 1.0,
                                   "fetch_total_timeout": 11.0},
              parse_assignments(["concurrency=5", "fetch_read_timeout=8"])]
    db = tmp_path / "stored.db"
    with serve_in_thread(fixture_web) as server:
        stored_run = CrawlSettings.polite_off(
            resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",), scope_max_pages=20,
            fetch_read_timeout=3.0, concurrency=9, retry_attempts=3)
        crawl([server.seed_url], db, stored_run)
        parser = build_parser()
        crawl_args = parser.parse_args(["crawl", server.seed_url, "--db", str(db), *argv])
        revisit_args = parser.parse_args(["revisit", "--db", str(db), "--budget", "5",
                                          *argv])
    given = crawl_cli_settings(crawl_args)

    # A new crawl: defaults < layers, through the CLI's options and the library alike.
    new = layer_settings(*layers).settings
    assert Crawler(tmp_path / "n.db", ["http://a.test/"], overrides=given).settings == new
    library = CrawlSettings(polite_min_delay=0.003, polite_max_delay=1.0, retry_attempts=4,
                            fetch_read_timeout=8.0, fetch_total_timeout=11.0, concurrency=5)
    assert Crawler(tmp_path / "n.db", ["http://a.test/"], library).settings == new
    assert (new.polite_min_delay, new.fetch_read_timeout, new.retry_attempts,
            new.fetch_total_timeout, new.concurrency) == (0.003, 8.0, 4, 11.0, 5)

    # A resume: stored < layers; a field no layer names keeps its stored value.
    resumed = Crawler(db, resume=True, overrides=given).settings
    want = layer_settings(*layers, stored=_stored(db)).settings
    assert resumed == want
    assert resumed.scope_max_pages == 20 and resumed.concurrency == 5
    assert Crawler(db, resume=True, settings=library).settings == want

    # A revisit: the crawl's stored settings (less its WARC folder) < layers.
    revisit_settings = RevisitCrawler(db, overrides=revisit_cli_settings(revisit_args))
    want_revisit = layer_settings(*layers, stored=revisit_base_settings(db)).settings
    assert revisit_settings.crawl_settings == want_revisit
    assert RevisitCrawler(db, crawl_settings=library).crawl_settings == want_revisit
    assert want_revisit.fetch_read_timeout == 8.0 and want_revisit.scope_max_pages == 20


def _stored(db: Path) -> dict[str, Any]:
    from webcrawl.crawler.config import stored_settings
    from webcrawl.crawler.resume import read_meta

    meta = read_meta(db)
    return {**stored_settings(meta), "frontier_strategy": meta["strategy"]}


def test_an_unknown_setting_is_refused_the_same_way_everywhere(tmp_path: Path) -> None:
    from webcrawl.storage.errors import ConfigError

    with pytest.raises(ConfigError, match=r"unknown setting 'concurency'.*concurrency"):
        Crawler(tmp_path / "x.db", ["http://a.test/"], overrides={"concurency": 3})
    with pytest.raises(ConfigError, match=r"unknown setting 'concurency'.*concurrency"):
        layer_settings({"concurency": 3})


# -- workers and loops ---------------------------------------------------------------

def test_library_crawl_with_workers_starts_worker_processes(
        tmp_path: Path, fixture_web: FixtureWeb, monkeypatch: pytest.MonkeyPatch,
        loops: list[str]) -> None:
    started: list[tuple[int, int]] = []
    real_spawn = coordinator.spawn_process

    async def counting(worker: int, generation: int, forks: ForkServer) -> Transport:
        started.append((worker, generation))
        return await real_spawn(worker, generation, forks)

    monkeypatch.setattr(coordinator, "spawn_process", counting)
    db = tmp_path / "c.db"
    with serve_in_thread(fixture_web) as server:
        stats = crawl([server.seed_url], db,
                      CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",),
                                               scope_hosts=("*.test",), workers=2))
        page_urls = {p.url for p in fixture_web.truth_pages(server.port)}
        want = expected_edges(fixture_web, server.port)
    assert stats.stopped == "done"
    assert sorted(started) == [(0, 0), (1, 0)]
    assert page_edges(db, page_urls) == want
    assert loops == [expected_loop()]


def test_library_cli_and_revisit_run_on_the_same_loop(
        tmp_path: Path, fixture_web: FixtureWeb, loops: list[str]) -> None:
    with serve_in_thread(fixture_web) as server:
        crawl([server.seed_url], tmp_path / "a.db", BASE)
        assert main(["crawl", server.seed_url, "--db", str(tmp_path / "b.db"), "--quiet",
                     "--resolve", "*.test=127.0.0.1", "--allow-domain", "test",
                     "--min-delay", "0", "--delay-factor", "0"]) == 0
        revisit(tmp_path / "a.db", RevisitSettings(duration=0.3, budget=50))
        assert main(["revisit", "--db", str(tmp_path / "b.db"), "--duration", "0.3",
                     "--budget", "50",
                     "--quiet"]) == 0
    # (the demo's crawl and revisit: tests/crawler/test_demo.py)
    assert loops == [expected_loop()] * 4
