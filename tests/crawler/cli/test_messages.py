"""Messages in the user's words: each names the option typed, or suggests the fix."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from crawldb import write_crawl
from miniweb import MiniWeb, html
from webcrawl.crawler.cli import main
from webcrawl.crawler.settings import CrawlSettings, user_agent

_FAST = ["--min-delay", "0", "--delay-factor", "0", "--resolve", "*.test=127.0.0.1"]


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(("argv", "meant"), [
    (["crawll"], "'crawl'"),
    (["reprot", "--db", "c.db"], "'report'"),
    (["export", "edgez", "--db", "c.db"], "'edges'"),
    (["analyze", "pagernak", "--db", "c.db"], "'pagerank'"),
])
def test_a_mistyped_choice_names_the_close_one(argv: list[str], meant: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(argv, capsys)
    assert f"did you mean {meant}?" in err and err.count("\n") == 1, err


def test_a_choice_like_none_suggests_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["zzzz"], capsys)
    assert "did you mean" not in err and "choose from 'demo'" in err


@pytest.mark.parametrize(("seed", "meant"), [
    ("example.org", "http://example.org/"),
    ("localhost:8080/docs", "http://localhost:8080/docs"),
    ("ftp://example.org/", None),
    ("/var/www", None),
])
def test_a_seed_without_scheme_suggests_the_url(seed: str, meant: str | None, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", seed, "--db", str(tmp_path / "c.db")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"bad seed URL {seed!r}" in err, err
    if meant is None:
        assert "did you mean" not in err
    else:
        assert f"(did you mean {meant!r}?)" in err
    assert not (tmp_path / "c.db").exists()


def _site(web: MiniWeb) -> str:
    web.add("a.test", "/", html("/1", "/2", "/3"))
    for page in ("/1", "/2", "/3"):
        web.add("a.test", page, html())
    return web.url("a.test")


async def test_max_fetches_is_named_as_typed(mini_web: MiniWeb, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The summary, the JSON and the resume note say --max-fetches and fetches, never
    the settings field (scope_max_pages) or "pages" for URLs fetched."""
    db = str(tmp_path / "c.db")
    argv = ["crawl", _site(mini_web), "--db", db, "--max-fetches", "2", *_FAST]
    assert await asyncio.to_thread(main, argv) == 0
    err = capsys.readouterr().err
    assert "crawl stopped at --max-fetches: 2 URLs fetched" in err, err
    resume = ["crawl", "--db", db, "--resume", "--max-fetches", "3", "--json", *_FAST]
    assert await asyncio.to_thread(main, resume) == 0
    out, err = capsys.readouterr()
    assert "webcrawl: note: overriding the crawl's stored settings: --max-fetches 2 -> 3" \
        in err, err
    stats = json.loads(out)
    assert stats["stopped"] == "max_fetches" and stats["fetches"] == 3
    assert "pages" not in stats and "pages_per_second" not in stats
    assert "max_pages" not in out + err


async def test_resuming_a_finished_crawl_says_nothing_is_left(
        mini_web: MiniWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "c.db"
    assert await asyncio.to_thread(main, ["crawl", _site(mini_web), "--db", str(db),
                                          *_FAST]) == 0
    assert "crawl done: 4 URLs fetched" in capsys.readouterr().err
    assert await asyncio.to_thread(main, ["crawl", "--db", str(db), "--resume"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"nothing left to crawl: the crawl in {db} is finished (4 URLs "
                          "fetched, none left in the frontier)"), err
    assert "crawl done" not in err and err.count("\n") == 1


async def test_resuming_at_max_fetches_says_to_raise_it(
        mini_web: MiniWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "c.db"
    argv = ["crawl", _site(mini_web), "--db", str(db), "--max-fetches", "2", *_FAST]
    assert await asyncio.to_thread(main, argv) == 0
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["crawl", "--db", str(db), "--resume"]) == 0
    err = capsys.readouterr().err
    assert "nothing crawled" in err and "resume with a larger --max-fetches" in err, err


def _crawl_db(tmp_path: Path, links: dict[int, list[int]]) -> Path:
    urls = ["http://a.test/", "http://a.test/1", "http://a.test/2"]
    return write_crawl(tmp_path / "c.db", urls, links)


def test_report_of_a_crawl_without_pages_says_so(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = _crawl_db(tmp_path, {})  # the seed stayed in the frontier: no page fetched
    out = tmp_path / "r.html"
    assert main(["report", "--db", str(db), "--output", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"webcrawl: error: no page to report: {db} holds 3 URLs and no fetched HTML " \
        "page" in err, err


def test_quiet_report_prints_nothing(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    db = _crawl_db(tmp_path, {0: [1, 2], 1: [0], 2: [1]})
    out = tmp_path / "r.html"
    assert main(["report", "--db", str(db), "--output", str(out), "-q"]) == 0
    assert capsys.readouterr() == ("", "")
    assert out.stat().st_size > 0
    assert main(["report", "--db", str(db), "--output", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out} (")


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # unwrapped


def test_export_help_prints_a_plain_percent(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(["export"], capsys)
    assert "95% interval" in text and "%%" not in text


def test_crawl_help_names_the_real_default_user_agent(
        capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(["crawl"], capsys)
    default = CrawlSettings().fetch_user_agent
    assert default == user_agent(CrawlSettings().fetch_robots_agent, None)
    assert f"'{default}' without it" in text, text
    with_contact = CrawlSettings(fetch_contact="CONTACT").fetch_user_agent
    assert f"'{with_contact}' with CONTACT the --contact given" in text
    assert "project URL" not in text


def test_fixture_serve_hints_the_same_day_length_to_revisit() -> None:
    """The server's hints (stderr) name --day-seconds as given to it."""
    argv = [sys.executable, "-m", "webcrawl.crawler.cli", "fixture", "serve", "--port", "0",
            "--pages", "20", "--hosts", "1", "--day-seconds", "1.5"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as server:
        assert server.stderr is not None
        try:
            lines = []
            for line in server.stderr:  # the hints come once the server listens
                lines.append(line)
                if "webcrawl revisit" in line:
                    break
        finally:
            server.send_signal(signal.SIGTERM)
            server.communicate(timeout=60)
    assert "--day-seconds 1.5 (this server's day length)" in lines[-1], lines


@pytest.mark.parametrize(("rows", "what", "said"), [
    (1, "pages", "exported 1 page"), (2701, "edges", "exported 2,701 links"),
    (0, "fetches", "exported 0 fetches"), (3, "rates", "exported 3 change rates")])
def test_export_counts_rows_in_the_users_words(rows: int, what: str, said: str) -> None:
    from webcrawl.crawler.cli.export import _exported

    assert _exported(rows, what) == said
