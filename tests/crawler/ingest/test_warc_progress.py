"""`import warc`'s progress line and its one-line refusals (no server needed)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from terminal import ERASE_LINE, Terminal, redraws, visible
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter
from webcrawl.crawler.cli import main
from webcrawl.crawler.ingest import import_warc
from webcrawl.crawler.settings import CrawlSettings


def small_warc(path: Path, pages: int = 600) -> Path:
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for i in range(pages):
            body = f'<html><a href="/p{i + 1}">next</a></html>'.encode()
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                       protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                f"http://a.test/p{i}", "response", payload=io.BytesIO(body), length=len(body),
                http_headers=headers))
    return path


def test_progress_into_a_pipe_is_plain_lines_to_the_end(tmp_path: Path) -> None:
    warc = small_warc(tmp_path / "a.warc.gz")
    stream = io.StringIO()
    result = import_warc([warc], tmp_path / "a.db", progress=stream,
                         settings=CrawlSettings(progress_log_interval=0.001))
    text = stream.getvalue()
    assert result.fetches == 600 and result.links == 600 and result.urls == 601
    # Not a terminal: time-stamped lines, no control characters; the last is the end.
    assert "\r" not in text and "\x1b" not in text
    last = text.splitlines()[-1]
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d 100.0%, 600 records, ", last), last
    assert "600 fetches" in last


def test_progress_redraws_in_place_on_a_100_column_terminal(tmp_path: Path) -> None:
    """The import's status shares the crawl's display: on a 100-column terminal every
    redraw fits in 99 columns and nothing scrolls; the end erases the row."""
    warc = small_warc(tmp_path / "a.warc.gz", pages=3000)
    settings = CrawlSettings(progress_interval=0.001)
    with Terminal(columns=100) as term:
        import_warc([warc], tmp_path / "a.db", progress=term.stream, settings=settings)
    drawn = redraws(term.output)
    assert len(drawn) >= 3, term.output
    assert all(len(visible(text)) <= 99 and text.endswith("bad 0") for text in drawn)
    assert "\n" not in term.output and term.output.endswith("\r" + ERASE_LINE)


def test_cli_refusals_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warc = small_warc(tmp_path / "a.warc.gz", pages=3)
    db = tmp_path / "a.db"
    assert main(["import", "warc", str(warc), "--db", str(db), "--quiet"]) == 0
    capsys.readouterr()
    for argv in (["import", "warc", str(warc), "--db", str(db)],
                 ["import", "warc", str(tmp_path / "none.warc"), "--db", str(tmp_path / "b.db")]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("webcrawl: error:"), err
