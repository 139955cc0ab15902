"""`crawl --warc` and `revisit --warc`: WARC files that `warcio check` accepts, rotated,
and that import back to the same pages and links as the crawl that wrote them."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from warcdata import crawl_settings, crawl_view, fixture_web
from warcio.archiveiterator import ArchiveIterator
from webcrawl.crawler.archive import IDENTICAL_PAYLOAD_PROFILE, NOT_MODIFIED_PROFILE
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.ingest import import_warc
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings, RevisitStats
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb, serve_in_thread

WARCIO = [sys.executable, "-m", "warcio.cli"]


def warcio_check(path: Path) -> None:
    run = subprocess.run([*WARCIO, "check", "-v", str(path)], capture_output=True,
                         text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "digest pass" in run.stdout


def record_types(path: Path) -> list[tuple[str, str | None]]:
    with open(path, "rb") as f:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Profile"))
                for r in ArchiveIterator(f)]


@pytest.fixture(scope="module")
def warc_crawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    tmp = tmp_path_factory.mktemp("out")
    db, folder = tmp / "crawl.db", tmp / "warc"
    with serve_in_thread(fixture_web()) as server:
        # A small rotation size so that the crawl spans several files.
        settings = crawl_settings(warc_dir=str(folder), warc_max_size=60_000)
        asyncio.run(Crawler(db, [server.seed_url], settings).run())
    return db, sorted(folder.iterdir())


def test_every_file_passes_warcio_check_and_rotates(warc_crawl: tuple[Path, list[Path]]) -> None:
    _, files = warc_crawl
    assert len(files) >= 3
    for path in files:
        warcio_check(path)
        kinds = record_types(path)
        assert kinds[0][0] == "warcinfo"
        assert {k for k, _ in kinds[1:]} <= {"request", "response"}
        assert path.stat().st_size < 60_000 + 40_000  # rotated once past the size
    with open(files[0], "rb") as f:
        info = next(iter(ArchiveIterator(f))).content_stream().read().decode()
    assert "webcrawl-settings" in info and '"warc_max_size": 60000' in info


def test_crawl_warc_imports_to_the_same_pages_and_links(warc_crawl: tuple[Path, list[Path]],
                                                        tmp_path: Path) -> None:
    db, files = warc_crawl
    import_warc(files, tmp_path / "back.db")
    want, got = crawl_view(db), crawl_view(tmp_path / "back.db")
    assert len(want["links"]) > 50
    assert got["fetches"] == want["fetches"]
    assert got["outcomes"] == want["outcomes"]
    assert got["links"] == want["links"]
    assert got["urls"] == want["urls"]


def test_revisit_writes_revisit_records_for_304(tmp_path: Path) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=20, hosts=2, seed=3,
                                         change_mixture=((1.0, 50.0, 100.0),)))
    db, folder = tmp_path / "c.db", tmp_path / "warc"

    async def run() -> RevisitStats:
        async with FixtureServer(web, day_seconds=0.2) as server:
            await Crawler(db, [server.seed_url], crawl_settings()).run()
            settings = RevisitSettings(policy="uniform", budget=40.0, duration=1.0,
                                       day_seconds=0.2)
            return await RevisitCrawler(db, settings, crawl_settings(
                warc_dir=str(folder), warc_dedup_repeats=True)).run()

    stats = asyncio.run(run())
    (path,) = folder.iterdir()
    warcio_check(path)
    kinds = record_types(path)
    revisits = [k for k in kinds if k[0] == "revisit"]
    assert NOT_MODIFIED_PROFILE in {p for _, p in revisits}
    # The summary and --json count the records as the crawl's do (a 304's revisit is no
    # payload stored again; a repeated body's would be).
    repeats = revisits.count(("revisit", IDENTICAL_PAYLOAD_PROFILE))
    assert stats.warc is not None
    assert (stats.warc.records, stats.warc.revisits) == (len(kinds) - 1, repeats)
    assert stats.as_dict()["warc"] == stats.warc.as_dict()
    assert f"WARC: {len(kinds) - 1:,} records, {repeats:,} revisits" in stats.summary()
    revisits = [k for k in revisits if k[1] == NOT_MODIFIED_PROFILE]
    # warcinfo, then a request and its answer (response, or revisit for a 304) per fetch.
    assert [k for k, _ in kinds[1::2]] == ["request"] * (len(kinds) // 2)
    with sqlite3.connect(db) as conn:
        not_modified = conn.execute("SELECT count(*) FROM fetches WHERE kind = 'revisit'"
                                    " AND status = 304").fetchone()[0]
        revisit_fetches = conn.execute("SELECT count(*) FROM fetches WHERE kind = 'revisit'"
                                       " AND status IS NOT NULL").fetchone()[0]
    assert len(revisits) == not_modified > 0
    assert len(kinds) // 2 == revisit_fetches
    # Imported, each 304 is an unchanged refetch.
    import_warc([path], tmp_path / "r.db")
    with sqlite3.connect(tmp_path / "r.db") as conn:
        rows = conn.execute("SELECT changed, outcome FROM fetches WHERE status = 304").fetchall()
    assert len(rows) == not_modified
    assert {r for r in rows} <= {(0, "not_modified"), (None, "not_modified")}


def test_cli_crawl_json_and_warc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve_in_thread(fixture_web(pages=30, hosts=2, seed=2)) as server:
        argv = ["crawl", server.seed_url, "--db", str(tmp_path / "c.db"), "--warc",
                str(tmp_path / "w"), "--json", "--quiet", "--min-delay", "0",
                "--max-delay", "0", "--delay-factor", "0", "--resolve", "*.test=127.0.0.1",
                "--allow-host", "*.test"]
        assert main(argv) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["stopped"] == "done" and stats["fetches"] > 20
    (path,) = (tmp_path / "w").iterdir()
    responses = [k for k, _ in record_types(path) if k == "response"]
    assert len(responses) == stats["requests"]
