"""``webcrawl crawl``: arguments, errors as one line, summary, progress line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from miniweb import MiniWeb, html
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import CrawlStats
from webcrawl.crawler.progress import Progress, format_summary


@pytest.mark.parametrize("argv", [
    ["crawl", "ftp://x.test/", "--db", "{db}"],
    ["crawl", "not a url", "--db", "{db}"],
    ["crawl", "http://a.test/", "--db", "{db}", "--resolve", "*.test"],
    ["crawl", "http://a.test/", "--db", "{db}", "--resolve", "*.test=localhost"],
    ["crawl", "http://a.test/", "--db", "{db}", "--resolve", "*.test=127.0.0.1:99999"],
    ["crawl", "http://a.test/", "--db", "{db}", "--max-pages", "-1"],
    ["crawl", "http://a.test/", "--db", "{db}", "--min-delay", "-0.5"],
    ["crawl", "http://a.test/", "--db", "{db}", "--concurrency", "0"],
    ["crawl", "http://a.test/", "--db", "{db}", "--delay-factor", "nan"],
    ["crawl", "http://a.test/", "--db", "{db}", "--min-delay", "5", "--max-delay", "1"],
    ["crawl", "http://a.test/", "--db", "{db}", "--min-delay", "99"],
    ["crawl", "http://a.test/", "--db", "{db}", "--strategy", "nope"],
    ["crawl", "--db", "{db}"],
    ["crawl", "--db", "{db}", "--resume"],
    ["crawl", "http://a.test/", "--db", "{db}", "--ca-file", "/no/such.pem"],
], ids=["ftp", "garbage", "resolve-syntax", "resolve-name", "resolve-port", "neg-pages",
        "neg-delay", "zero-conc", "nan", "min-gt-max", "min-gt-default-max", "strategy",
        "no-seed", "no-db", "ca-file"])
def test_bad_arguments_one_line(argv: list[str], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{db}", str(tmp_path / "c.db")) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code != 0
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "c.db").exists() or argv[-1] == "--resume"


async def test_existing_db_needs_resume(mini_web: MiniWeb, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    mini_web.add("a.test", "/", html("/b"))
    mini_web.add("a.test", "/b", html())
    db = tmp_path / "c.db"
    argv = ["crawl", mini_web.url("a.test"), "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "--min-delay", "0", "--delay-factor", "0"]
    assert await asyncio.to_thread(main, argv) == 0
    err = capsys.readouterr().err
    assert "crawl done: 2 URLs fetched" in err  # the summary (no progress line: not a TTY)
    assert "2 HTML pages" in err
    assert "\r" not in err
    assert await asyncio.to_thread(main, argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--resume" in err
    assert await asyncio.to_thread(main, [*argv, "--resume"]) == 0


async def test_progress_line_on_a_terminal() -> None:
    import asyncio

    stats = CrawlStats()
    stats.outcomes["fetched"] = 10
    stats.frontier, stats.busy_hosts, stats.hosts = 7, 2, 3
    out = io.StringIO()
    progress = Progress(stats, interval=0.01, stream=out, force=True, width=200)
    progress.start()
    await asyncio.sleep(0.05)
    await progress.stop()
    text = out.getvalue()
    assert "\r" in text and "10 fetched  10 pages" in text and "frontier 7" in text
    assert "hosts 2 fetching, 0 queued, 3 seen" in text and "errors 0" in text
    quiet = Progress(stats, stream=io.StringIO(), log_interval=0)
    assert not quiet.terminal and not quiet.enabled  # not a TTY, no log lines asked
    assert "10 URLs fetched" in format_summary(stats)
    assert "10 HTML pages" in format_summary(stats)


# -- the command-line conventions of wget, curl and Scrapy ---------------------------

_FAST = ["--min-delay", "0", "--delay-factor", "0"]


def _fetched_urls(db: Path) -> dict[str, str]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT url, outcome FROM urls WHERE outcome IS NOT NULL "
                                 "AND outcome NOT IN ('out_of_scope', 'robots_excluded')"))


@pytest.mark.parametrize("from_stdin", [False, True], ids=["file", "stdin"])
async def test_seeds_from_an_input_file(mini_web: MiniWeb, tmp_path: Path, from_stdin: bool,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``-i FILE`` (wget): one seed a line, blanks and comments skipped; ``-`` is stdin."""
    import asyncio

    for host in ("a.test", "b.test", "c.test"):
        mini_web.add(host, "/", html())
    text = (f"# seeds\n{mini_web.url('a.test')}\n\n  {mini_web.url('b.test')}  \n"
            f"#{mini_web.url('c.test')}\n")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(text)
    if from_stdin:
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
    db = tmp_path / "c.db"
    argv = ["crawl", "-i", "-" if from_stdin else str(seeds), "--db", str(db),
            "--resolve", "*.test=127.0.0.1", *_FAST]
    assert await asyncio.to_thread(main, argv) == 0
    assert _fetched_urls(db) == {mini_web.url("a.test"): "fetched",
                                 mini_web.url("b.test"): "fetched"}


def test_missing_input_file_is_one_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", "-i", str(tmp_path / "none.txt"), "--db", str(tmp_path / "c.db")]) == 1
    err = capsys.readouterr().err
    assert err == f"webcrawl: error: no seed file at {tmp_path / 'none.txt'}\n"


async def test_resolve_in_curls_form(mini_web: MiniWeb, tmp_path: Path) -> None:
    """``--resolve HOST:PORT:ADDR`` (curl) sends HOST on PORT to ADDR; Host stays HOST."""
    import asyncio

    mini_web.add("docs.example.org", "/", html("/guide"))
    mini_web.add("docs.example.org", "/guide", html())
    db = tmp_path / "c.db"
    argv = ["crawl", mini_web.url("docs.example.org"), "--db", str(db), "--resolve",
            f"docs.example.org:{mini_web.port}:127.0.0.1", "--contact", "ops@example.org",
            *_FAST]
    assert await asyncio.to_thread(main, argv) == 0
    assert _fetched_urls(db) == {mini_web.url("docs.example.org"): "fetched",
                                 mini_web.url("docs.example.org", "/guide"): "fetched"}
    assert {h["Host"] for h in mini_web.headers} == {f"docs.example.org:{mini_web.port}"}


async def test_dash_s_sets_a_setting(mini_web: MiniWeb, tmp_path: Path) -> None:
    """``-s NAME=VALUE`` (Scrapy) is ``--set``: here a limit of one URL fetched."""
    import asyncio

    mini_web.add("a.test", "/", html("/b", "/c"))
    mini_web.add("a.test", "/b", html())
    mini_web.add("a.test", "/c", html())
    db = tmp_path / "c.db"
    argv = ["crawl", mini_web.url("a.test"), "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "-s", "scope_max_pages=1", *_FAST]
    assert await asyncio.to_thread(main, argv) == 0
    assert _fetched_urls(db) == {mini_web.url("a.test"): "fetched"}


async def test_max_fetches_counts_every_url_fetched(mini_web: MiniWeb, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``--max-pages``/``--max-fetches`` N: N URLs fetched, whatever each answered (an HTML
    page, a redirect, another file, an error); the summary says how many were pages."""
    import asyncio

    from miniweb import Page

    mini_web.add("a.test", "/", html("/moved", "/file.txt", "/missing", "/p1", "/p2", "/p3"))
    mini_web.add("a.test", "/moved", Page(status=301, headers={"Location": "/p1"}))
    mini_web.add("a.test", "/file.txt", Page(body=b"text", content_type="text/plain"))
    for path in ("/p1", "/p2", "/p3"):
        mini_web.add("a.test", path, html())
    for option in ("--max-pages", "--max-fetches"):
        db = tmp_path / f"{option}.db"
        argv = ["crawl", mini_web.url("a.test"), "--db", str(db), "--resolve",
                "*.test=127.0.0.1", option, "5", "--strategy", "bfs", "--concurrency", "1",
                *_FAST]
        assert await asyncio.to_thread(main, argv) == 0
        outcomes = sorted(_fetched_urls(db).values())
        # bfs in link order: the seed, the redirect, the text file, the 404, then p1.
        assert outcomes == ["fetched", "fetched", "http_error", "not_html", "redirect"]
        err = capsys.readouterr().err
        assert "crawl max_pages: 5 URLs fetched" in err
        assert "2 HTML pages, 1 redirects, 1 other files, 1 errors" in err


async def test_exit_status_when_no_seed_can_be_fetched(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """A crawl whose only seed refuses connections exits 4 (wget's network failure),
    saying so in one line after the summary."""
    import asyncio
    import socket

    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        seed = f"http://a.test:{closed.getsockname()[1]}/"
        argv = ["crawl", seed, "--db", str(tmp_path / "c.db"), "--resolve",
                "*.test=127.0.0.1", "--retries", "1", "-s", "retry_backoff=0.01",
                "-s", "robots_retry_delay=0.01", *_FAST]
        code = await asyncio.to_thread(main, argv)
    err = capsys.readouterr().err
    assert code == 4, err
    assert err.splitlines()[-1].startswith("webcrawl: error: no seed could be fetched (")
    assert "Traceback" not in err
