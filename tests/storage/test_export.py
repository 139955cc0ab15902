"""TSV export (library and `webcrawl export`)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from webcrawl.crawler.cli import main
from webcrawl.storage.export import EDGE_COLUMNS, PAGE_COLUMNS, export_edges, export_pages

from tests.storage.conftest import SMALL_FETCHED, SMALL_URLS


def _parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text), dialect="excel-tab"))


def test_edges_every_link_in_document_order(small_db: Path) -> None:
    out = io.StringIO()
    assert export_edges(small_db, out) == 6
    rows = _parse(out.getvalue())
    assert tuple(rows[0]) == EDGE_COLUMNS
    expected = [[SMALL_URLS[src][0], SMALL_URLS[d][0], str(int(d in nofollow))]
                for src, (_, dst, nofollow) in sorted(SMALL_FETCHED.items()) for d in dst]
    assert rows[1:] == expected  # odd URLs (tab escape, quote) survive the round trip


def test_odd_fields_are_quoted(small_db: Path) -> None:
    out = io.StringIO()
    export_edges(small_db, out)
    line = out.getvalue().splitlines()[2]  # 0 -> 2: the URL with a double quote
    assert line.split("\t")[1] == '"http://b.test:8080/tab%09and""quote"'


def test_pages_one_row_per_url(small_db: Path) -> None:
    out = io.StringIO()
    assert export_pages(small_db, out) == 5
    rows = _parse(out.getvalue())
    assert tuple(rows[0]) == PAGE_COLUMNS
    by_url = {r[0]: dict(zip(PAGE_COLUMNS, r, strict=True)) for r in rows[1:]}
    assert list(by_url) == [SMALL_URLS[i][0] for i in range(5)]
    root = by_url["http://a.test/"]
    assert (root["status"], root["seq"], root["depth"], root["outcome"], root["host"]) == (
        "200", "0", "0", "fetched", "a.test")
    assert root["fetched_at"] == "2023-11-14T22:13:20.500+00:00"
    assert (root["content_type"], root["size"], root["digest"]) == ("text/html", "100", "d0")
    frontier = by_url["http://b.test:8080/frontier"]
    assert (frontier["status"], frontier["seq"], frontier["outcome"], frontier["fetched_at"],
            frontier["depth"]) == ("", "", "", "", "2")
    missing = by_url["http://a.test/missing"]
    assert (missing["status"], missing["outcome"]) == ("404", "http_error")


@pytest.mark.parametrize("what", ["edges", "pages"])
def test_cli_writes_file(small_db: Path, tmp_path: Path, what: str,
                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"{what}.tsv"
    stored = ["--graph", "stored"] if what == "edges" else []
    assert main(["export", what, "--db", str(small_db), *stored, "--output", str(out)]) == 0
    expected = io.StringIO()
    (export_edges if what == "edges" else export_pages)(small_db, expected)
    assert out.read_text(encoding="utf-8") == expected.getvalue()
    rows = expected.getvalue().count("\n") - 1  # the header line is no row
    said = {"edges": "links", "pages": "pages"}[what]
    assert f"webcrawl: exported {rows:,} {said}\n" == capsys.readouterr().err


def test_cli_stdout_default_is_the_pages_graph(small_db: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "edges", "--db", str(small_db)]) == 0
    rows = _parse(capsys.readouterr().out)
    assert rows[0] == list(EDGE_COLUMNS)
    # pages 0 and 1 (fetched) and the links between them; 0 -> 1 twice is one link
    url = {i: SMALL_URLS[i][0] for i in (0, 1)}
    assert rows[1:] == [[url[0], url[1], "0"], [url[1], url[0], "0"]]


def test_cli_missing_db_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "pages", "--db", str(tmp_path / "nope.db")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no crawl database" in err


def test_fetches_every_attempt_tsv_and_jsonl(small_db: Path) -> None:
    from webcrawl.storage.export import FETCH_COLUMNS, export_fetches

    out = io.StringIO()
    assert export_fetches(small_db, out) == 3
    rows = _parse(out.getvalue())
    assert tuple(rows[0]) == FETCH_COLUMNS
    got = [dict(zip(FETCH_COLUMNS, r, strict=True)) for r in rows[1:]]
    assert [(r["url"], r["seq"], r["kind"], r["status"], r["outcome"]) for r in got] == [
        ("http://a.test/", "0", "crawl", "200", "fetched"),
        ("http://a.test/p?q=1&r=%22x%22", "1", "crawl", "200", "fetched"),
        ("http://a.test/missing", "2", "crawl", "404", "http_error")]
    assert got[0]["started_at"] == "2023-11-14T22:13:20.000+00:00"
    js = io.StringIO()
    assert export_fetches(small_db, js, "jsonl") == 3
    first = json.loads(js.getvalue().splitlines()[0])
    assert (first["status"], first["size"], first["changed"], first["digest"]) == (
        200, 100, None, "d0")


def test_pages_jsonl_matches_tsv(small_db: Path) -> None:
    tsv, js = io.StringIO(), io.StringIO()
    export_pages(small_db, tsv)
    export_pages(small_db, js, "jsonl")
    rows = _parse(tsv.getvalue())
    objs = [json.loads(line) for line in js.getvalue().splitlines()]
    assert [list(o) for o in objs] == [list(PAGE_COLUMNS)] * len(objs)
    for row, obj in zip(rows[1:], objs, strict=True):
        assert row == ["" if v is None else str(v) for v in obj.values()]


@pytest.mark.parametrize("argv", [["pages", "--format", "edgelist"],
                                  ["edges", "--ids"], ["pages", "--ids", "--nodes", "n"]],
                         ids=["edgelist-pages", "ids-without-nodes", "ids-on-pages"])
def test_cli_bad_format_combinations(small_db: Path, argv: list[str],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", *argv, "--db", str(small_db)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("webcrawl: error:")


def test_one_list_of_export_formats() -> None:
    """Storage holds the one list: every writer's formats are in it, each export's
    formats are the list's, and ``webcrawl export --format`` offers exactly it."""
    from webcrawl.crawler.cli import build_parser
    from webcrawl.crawler.cli._help import iter_parsers
    from webcrawl.storage import export, formats

    assert export.EDGE_FORMATS is formats.EDGE_FORMATS
    assert export.TABLE_FORMATS is formats.TABLE_FORMATS
    every = {f for what in ("edges", "pages", "fetches", "rates") for f in formats.formats_of(what)}
    assert every == set(formats.EXPORT_FORMATS) and len(formats.EXPORT_FORMATS) == len(every)
    assert set(formats.formats_of("pages")) < set(formats.formats_of("edges"))
    parser = dict(iter_parsers(build_parser()))["export"]
    choices = next(a.choices for a in parser._actions if a.dest == "format")
    assert tuple(choices) == formats.EXPORT_FORMATS
