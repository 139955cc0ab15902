"""Damaged WARC files: one error naming the file and the damaged record's offset, or, with
``skip_bad``, exactly the damaged records counted and every other record imported.

The WARCs are written here with warcio (1,100 response records, a few of them 100 KB so
that their gzip members span several reads); the truth is what was written: each
record's URL and the file offset it starts at.  Each case damages a copy the way files
get damaged (bytes flipped on disk, a copy cut short, a writer's wrong Content-Length,
junk between records) and states which records that destroys.
"""

from __future__ import annotations

import gzip
import io
import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from warcdata import BIG_EVERY, N, Warc, fetched_urls, write_synthetic_warc
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter
from webcrawl.crawler.cli import main
from webcrawl.crawler.ingest import import_warc
from webcrawl.storage.errors import InputFormatError


@pytest.fixture(scope="module")
def warcs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Warc]:
    tmp = tmp_path_factory.mktemp("warcs")
    return {"gz": write_synthetic_warc(tmp / "site.warc.gz", gz=True),
            "plain": write_synthetic_warc(tmp / "site.warc", gz=False)}


@dataclass(frozen=True)
class Damage:
    """A damaged copy's bytes, the offsets of its damaged records (in the copy) and the
    indices of the written records it no longer holds."""

    data: bytes
    bad: list[int]
    lost: list[int]


def _flip(data: bytes, start: int, count: int) -> bytes:
    out = bytearray(data)
    for i in range(start, start + count):
        out[i] ^= 0xFF
    return bytes(out)


def flipped_in_big_member(w: Warc, data: bytes) -> Damage:
    k = 5 * BIG_EVERY
    middle = (w.offsets[k] + w.offsets[k + 1]) // 2
    return Damage(_flip(data, middle, 200), [w.offsets[k]], [k])


def flipped_in_small_member(w: Warc, data: bytes) -> Damage:
    k = 501
    middle = (w.offsets[k] + w.offsets[k + 1]) // 2
    return Damage(_flip(data, middle, 20), [w.offsets[k]], [k])


def gzip_header_destroyed(w: Warc, data: bytes) -> Damage:
    k = 700
    return Damage(_flip(data, w.offsets[k], 3), [w.offsets[k]], [k])


def two_damaged_members(w: Warc, data: bytes) -> Damage:
    out = data
    for k in (200, 901):
        out = _flip(out, (w.offsets[k] + w.offsets[k + 1]) // 2, 50)
    return Damage(out, [w.offsets[200], w.offsets[901]], [200, 901])


def junk_between_members(w: Warc, data: bytes) -> Damage:
    # Nothing written is lost: the junk itself is the one damaged stretch.
    k = 301
    return Damage(data[:w.offsets[k]] + b"junk" * 25 + data[w.offsets[k]:], [w.offsets[k]], [])


def cut_to_a_third(w: Warc, data: bytes) -> Damage:
    cut = w.size // 3
    k = max(i for i, o in enumerate(w.offsets) if o < cut)
    assert w.offsets[k] < cut < (w.offsets[k + 1] if k + 1 < N else w.size)
    return Damage(data[:cut], [w.offsets[k]], list(range(k, N)))


def _split(w: Warc, data: bytes, k: int) -> tuple[bytes, bytes, bytes]:
    """The bytes before record ``k``, the record (its gzip member) and the rest."""
    return data[:w.offsets[k]], data[w.offsets[k]:w.offsets[k + 1]], data[w.offsets[k + 1]:]


def _content_length(record: bytes) -> int:
    return int(record.split(b"Content-Length: ", 1)[1].split(b"\r\n", 1)[0])


def _set_content_length(record: bytes, value: bytes) -> bytes:
    """``record`` with its WARC header's Content-Length (the first one) set to ``value``."""
    head, rest = record.split(b"Content-Length: ", 1)
    return head + b"Content-Length: " + value + b"\r\n" + rest.split(b"\r\n", 1)[1]


def gzip_member_with_long_content_length(w: Warc, data: bytes) -> Damage:
    """A writer's wrong Content-Length inside an intact gzip member."""
    k = 402
    before, member, after = _split(w, data, k)
    record = gzip.decompress(member)
    record = _set_content_length(record, b"%d" % (_content_length(record) + 1000))
    return Damage(before + gzip.compress(record) + after, [w.offsets[k]], [k])


def false_gzip_magic_in_damaged_member(w: Warc, data: bytes) -> Damage:
    """The resynchronisation skips gzip magic bytes that start no member: the damaged
    member is stored uncompressed (level 0) with the magic bytes in its payload."""
    k = 603
    before, member, after = _split(w, data, k)
    record = gzip.decompress(member)
    record = _set_content_length(record, b"%d" % (_content_length(record) + 5))
    stored = gzip.compress(record.replace(b"<p>603 ", b"<p>603 \x1f\x8b\x08\x00 ", 1),
                           compresslevel=0)
    magic = stored.index(b"\x1f\x8b\x08", 3)
    damaged = _flip(stored, magic - 20, 10)  # before the false magic: resync meets it
    return Damage(before + damaged + after, [w.offsets[k]], [k])


def content_length_overflow(w: Warc, data: bytes) -> Damage:
    k = 500
    before, record, after = _split(w, data, k)
    record = _set_content_length(record, b"99999999999999999999")
    return Damage(before + record + after, [w.offsets[k]], [k])


def content_length_too_short(w: Warc, data: bytes) -> Damage:
    k = 650
    before, record, after = _split(w, data, k)
    return Damage(before + _set_content_length(record, b"10") + after, [w.offsets[k]], [k])


def header_garbled(w: Warc, data: bytes) -> Damage:
    k = 800
    before, record, after = _split(w, data, k)
    return Damage(before + record.replace(b"WARC/1.", b"WXRC/1.", 1) + after,
                  [w.offsets[k]], [k])


CASES: list[tuple[str, Callable[[Warc, bytes], Damage]]] = [
    ("gz", flipped_in_big_member),
    ("gz", flipped_in_small_member),
    ("gz", gzip_header_destroyed),
    ("gz", two_damaged_members),
    ("gz", junk_between_members),
    ("gz", cut_to_a_third),
    ("gz", gzip_member_with_long_content_length),
    ("gz", false_gzip_magic_in_damaged_member),
    ("plain", content_length_overflow),
    ("plain", content_length_too_short),
    ("plain", header_garbled),
    ("plain", cut_to_a_third),
]


def test_undamaged_warcs_import_every_record(warcs: dict[str, Warc], tmp_path: Path) -> None:
    for kind, w in warcs.items():
        result = import_warc([w.path], tmp_path / f"{kind}.db")
        assert (result.records, result.fetches, result.bad) == (N, N, 0)
        assert fetched_urls(tmp_path / f"{kind}.db") == w.urls


@pytest.mark.parametrize(("kind", "damage"), CASES,
                         ids=[f"{k}-{d.__name__}" for k, d in CASES])
def test_damage_is_found_where_it_is_and_nothing_else_is_lost(
        kind: str, damage: Callable[[Warc, bytes], Damage], warcs: dict[str, Warc],
        tmp_path: Path) -> None:
    w = warcs[kind]
    case = damage(w, w.path.read_bytes())
    bad = tmp_path / w.path.name
    bad.write_bytes(case.data)
    db = tmp_path / "a.db"
    with pytest.raises(InputFormatError) as info:
        import_warc([bad], db)
    assert info.value.offset == case.bad[0]
    assert f"{bad}: damaged WARC record at offset {case.bad[0]} (" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir() if "a.db" in p.name) == []
    result = import_warc([bad], db, skip_bad=True)
    assert result.bad == len(case.bad)
    assert [(f, o) for f, o, _ in result.bad_offsets] == [(str(bad), o) for o in case.bad]
    kept = [u for i, u in enumerate(w.urls) if i not in set(case.lost)]
    assert result.records == result.fetches == len(kept)
    assert fetched_urls(db) == kept


def test_cli_names_the_offset_in_one_line_and_skip_bad_counts(
        warcs: dict[str, Warc], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = warcs["gz"]
    case = flipped_in_big_member(w, w.path.read_bytes())
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(case.data)
    db = tmp_path / "a.db"
    for quiet in (["--quiet"], []):
        assert main(["import", "warc", str(bad), "--db", str(db), *quiet]) == 1
        err = capsys.readouterr().err
        lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
        assert lines[-1].startswith(f"webcrawl: error: {bad}: damaged WARC record at offset "
                                    f"{case.bad[0]} (damaged gzip data: "), err
        assert [line for line in lines if "error" in line] == lines[-1:]
        assert "Traceback" not in err and not db.exists()
    assert main(["import", "warc", str(bad), "--db", str(db), "--skip-bad", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"imported {N - 1:,} records") and "1 damaged records skipped" in out


def _one_response(path: Path, body: bytes, coding: str) -> None:
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html"),
                                              ("Content-Encoding", coding)],
                                   protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            "http://a.test/", "response", payload=io.BytesIO(body), length=len(body),
            http_headers=headers))


def test_a_payload_damaged_inside_its_content_coding_is_no_damaged_record(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The record is whole (its gzip member checks out); the server's gzip body in it is
    corrupt: imported with what decodes before the damage, nothing on stderr (warcio
    printed 'Error -3 while decompressing data')."""
    rnd = random.Random(3)
    html = ('<html><a href="/first">x</a>'
            + " ".join(str(rnd.random()) for _ in range(20000)) + "</html>").encode()
    packed = gzip.compress(html)
    middle = len(packed) // 2
    _one_response(tmp_path / "a.warc.gz",
                  packed[:middle] + bytes(b ^ 0xFF for b in packed[middle:middle + 100])
                  + packed[middle + 100:], "gzip")
    result = import_warc([tmp_path / "a.warc.gz"], tmp_path / "a.db")
    assert (result.records, result.fetches, result.bad, result.links) == (1, 1, 0, 1)
    with sqlite3.connect(f"file:{tmp_path / 'a.db'}?mode=ro", uri=True) as conn:
        size = conn.execute("SELECT size FROM fetches").fetchone()[0]
    assert 0 < size < len(html) and html.startswith(b"<html>")
    assert capfd.readouterr().err == ""


def test_a_body_coded_twice_is_decoded_as_the_fetcher_decodes_it(tmp_path: Path) -> None:
    html = b'<html><a href="/next">next</a></html>'
    _one_response(tmp_path / "a.warc.gz", gzip.compress(gzip.compress(html)), "gzip, gzip")
    result = import_warc([tmp_path / "a.warc.gz"], tmp_path / "a.db")
    assert (result.fetches, result.links, result.outcomes) == (1, 1, {"fetched": 1})


@dataclass(frozen=True)
class SmallWarc:
    data: bytes = field(repr=False)
    offsets: list[int] = field(repr=False)   # record i's gzip member
    urls: list[str] = field(repr=False)


@pytest.fixture(scope="module")
def small_gz() -> SmallWarc:
    """40 records (every 7th 15 KB, the others 300 bytes) gzip per record."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    offsets, urls = [], []
    for i in range(40):
        body = (f"<html><p>{i}</p>" + f"w{i} " * (3000 if i % 7 == 0 else 50)
                + f'<a href="/p{i + 1}">n</a></html>').encode()
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                   protocol="HTTP/1.1")
        offsets.append(out.tell())
        urls.append(f"http://a.test/p{i}")
        writer.write_record(writer.create_warc_record(
            urls[-1], "response", payload=io.BytesIO(body), length=len(body),
            http_headers=headers))
    return SmallWarc(out.getvalue(), offsets, urls)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(0, 1, exclude_max=True), count=st.sampled_from([1, 4, 30, 300]),
       xor=st.integers(1, 255))
@example(where=0.0, count=1, xor=1)  # the file's first byte: gzip is told by its members
def test_any_flipped_bytes_cost_at_most_the_members_they_touch(
        where: float, count: int, xor: int, small_gz: SmallWarc,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    data, offsets, urls = small_gz.data, small_gz.offsets, small_gz.urls
    start = int(where * len(data))
    damaged = bytearray(data)
    for i in range(start, min(len(data), start + count)):
        damaged[i] ^= xor
    ends = [*offsets[1:], len(data)]
    touched = [i for i, (a, b) in enumerate(zip(offsets, ends, strict=True))
               if a < start + count and start < b]
    tmp = tmp_path_factory.mktemp("flip")
    (tmp / "a.warc.gz").write_bytes(bytes(damaged))
    try:
        import_warc([tmp / "a.warc.gz"], tmp / "strict.db")
    except InputFormatError as exc:
        assert exc.offset in [offsets[i] for i in touched]
    result = import_warc([tmp / "a.warc.gz"], tmp / "a.db", skip_bad=True)
    got = fetched_urls(tmp / "a.db")
    untouched = [u for i, u in enumerate(urls) if i not in touched]
    assert [u for u in got if u in untouched] == untouched  # all of them, in order
    assert set(got) <= set(urls) and result.bad <= len(touched)
    # A loss is always counted; one damaged stretch may hold several records when the
    # flipped bytes also destroyed the next member's header (where its record started
    # cannot be known then).
    assert (len(got) < len(urls)) <= (result.bad > 0)
