"""`import warc` of an input with nothing to import (an empty file, only damaged
records, no response record) refuses it in one line, exits non-zero and writes
nothing; ``--skip-bad`` still imports the readable rest of a partly damaged input."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter
from webcrawl.crawler.cli import main
from webcrawl.crawler.ingest import import_warc
from webcrawl.storage.errors import InputFormatError


def _records(path: Path, kinds: list[str]) -> Path:
    """A WARC of the given record types: ``response`` an HTML page, ``warcinfo`` and
    ``request`` as any crawler writes them."""
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for k, kind in enumerate(kinds):
            url = f"http://a.test/p{k}"
            if kind == "warcinfo":
                rec = writer.create_warcinfo_record(path.name, {"software": "test"})
            elif kind == "request":
                head = f"GET /p{k} HTTP/1.1\r\nHost: a.test\r\n\r\n".encode()
                rec = writer.create_warc_record(url, "request", payload=io.BytesIO(head),
                                                length=len(head))
            else:
                body = b'<html><a href="/p0">home</a></html>'
                headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                           protocol="HTTP/1.1")
                rec = writer.create_warc_record(url, kind, payload=io.BytesIO(body),
                                                length=len(body), http_headers=headers)
            writer.write_record(rec)
    return path


def _garbage(path: Path) -> Path:
    path.write_bytes(bytes(range(256)) * 64)
    return path


def _damaged_gzip(path: Path) -> Path:
    """Two gzip members whose data is damaged: each a damaged record."""
    members = [bytearray(gzip.compress(b"WARC/1.0\r\nWARC-Type: response\r\n" + bytes(300)))
               for _ in range(2)]
    for m in members:
        m[20:40] = bytes(20)
    path.write_bytes(b"".join(members))
    return path


CASES = {
    "empty-file": (lambda p: (p.write_bytes(b""), p)[1], "no WARC record"),
    "empty-gzip": (lambda p: (p.write_bytes(gzip.compress(b"")), p)[1], "nothing to import"),
    "garbage": (_garbage, "every record is damaged"),
    "damaged-gzip-members": (_damaged_gzip, "every record is damaged"),
    "no-response": (lambda p: _records(p, ["warcinfo", "request", "request"]),
                    "no response or revisit record among its 3 readable records"),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("skip_bad", [False, True], ids=["strict", "skip-bad"])
def test_nothing_to_import_is_one_line_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, skip_bad: bool) -> None:
    make, needle = CASES[case]
    warc = make(tmp_path / "in.warc")
    damaged = case in ("garbage", "damaged-gzip-members")
    if not skip_bad and damaged:
        needle = "damaged WARC record at offset 0"  # the first damaged record stops it
    with pytest.raises(InputFormatError, match=needle):
        import_warc([warc], tmp_path / "out.db", skip_bad=skip_bad)
    capsys.readouterr()
    argv = ["import", "warc", str(warc), "--db", str(tmp_path / "out.db")]
    assert main([*argv, *(["--skip-bad"] if skip_bad else [])]) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("webcrawl: skipped")]
    assert len(lines) == 1 and lines[0].startswith("webcrawl: error:"), err
    assert str(warc) in lines[0] and needle in lines[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.warc"]  # nothing left


def test_skip_bad_still_imports_a_partly_damaged_input(tmp_path: Path) -> None:
    """One good response beside damaged bytes: ``--skip-bad`` imports the good one."""
    good = _records(tmp_path / "good.warc.gz", ["warcinfo", "response"])
    bad = tmp_path / "mixed.warc.gz"
    bad.write_bytes(_garbage(tmp_path / "g").read_bytes() + good.read_bytes())
    with pytest.raises(InputFormatError, match="damaged WARC record at offset 0"):
        import_warc([bad], tmp_path / "strict.db")
    result = import_warc([bad], tmp_path / "mixed.db", skip_bad=True)
    assert (result.bad, result.fetches, result.records) == (1, 1, 2)


def test_one_empty_file_among_good_ones_is_no_refusal(tmp_path: Path) -> None:
    """The refusal is about the whole input: an empty file beside a good one imports."""
    good = _records(tmp_path / "good.warc.gz", ["response", "response"])
    empty = tmp_path / "empty.warc"
    empty.write_bytes(b"")
    result = import_warc([empty, good], tmp_path / "out.db")
    assert (result.fetches, result.urls) == (2, 2)
