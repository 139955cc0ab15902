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
    ["crawl", "http://a.test/", "--db", "{db}", "--strategy", "nope"],
    ["crawl", "--db", "{db}"],
    ["crawl", "--db", "{db}", "--resume"],
    ["crawl", "http://a.test/", "--db", "{db}", "--ca-file", "/no/such.pem"],
], ids=["ftp", "garbage", "resolve-syntax", "resolve-name", "resolve-port", "neg-pages",
        "neg-delay", "zero-conc", "nan", "min-gt-max", "strategy", "no-seed", "no-db",
        "ca-file"])
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
    assert "crawl done: 2 pages" in err  # the summary (no progress line: not a TTY)
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
    progress = Progress(stats, interval=0.01, stream=out, force=True)
    progress.start()
    await asyncio.sleep(0.05)
    await progress.stop()
    text = out.getvalue()
    assert "\r" in text and "pages/s" in text and "frontier 7" in text
    assert "hosts 2 fetching, 0 queued, 3 seen" in text and "errors 0" in text
    quiet = Progress(stats, stream=io.StringIO(), log_interval=0)
    assert not quiet.terminal and not quiet.enabled  # not a TTY, no log lines asked
    assert "10 pages" in format_summary(stats)
