"""`import warc`'s progress line and its one-line refusals (no server needed)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter
from webcrawl.crawler.cli import main
from webcrawl.crawler.ingest import import_warc


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


def test_progress_line_reaches_the_end(tmp_path: Path) -> None:
    warc = small_warc(tmp_path / "a.warc.gz")
    stream = io.StringIO()
    result = import_warc([warc], tmp_path / "a.db", progress=stream)
    text = stream.getvalue()
    assert result.fetches == 600 and result.links == 600 and result.urls == 601
    # Refreshed in place with carriage returns; the last state is the whole file.
    last = text.rstrip("\n").split("\r")[-1]
    assert last.startswith("100.0%") and "600 records" in last and "600 fetches" in last


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
