"""`import warc`: a WARC of a fixture crawl, written independently with warcio (and by GNU
Wget when it is installed), imports to the same pages and links as the crawl."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from warcdata import (
    crawl,
    crawl_view,
    fetched_urls,
    fixture_web,
    forward_proxy,
    write_warc,
)
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter
from webcrawl.analysis.graph import load_graph
from webcrawl.crawler.cli import main
from webcrawl.crawler.ingest import import_warc
from webcrawl.fixtures import serve_in_thread
from webcrawl.storage.errors import InputFormatError


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """(crawl db, WARC of the same fetches, server port)."""
    tmp = tmp_path_factory.mktemp("warc")
    web = fixture_web()
    db = tmp / "crawl.db"
    with serve_in_thread(web) as server:
        port = server.port
        crawl(db, server.seed_url)
    urls = fetched_urls(db)
    hosts = sorted({u.split("/")[2] for u in urls})
    # A fresh server on the same port answers the same requests the same way (the
    # transient 503s start over), so the WARC holds what the crawl saw.
    with serve_in_thread(web, port=port):
        warc = tmp / "site.warc.gz"
        write_warc(warc, port, [f"http://{h}/robots.txt" for h in hosts] + urls)
    return db, warc, port


def test_warc_imports_to_the_same_pages_and_links(crawled: tuple[Path, Path, int],
                                                  tmp_path: Path) -> None:
    db, warc, _ = crawled
    result = import_warc([warc], tmp_path / "imported.db")
    want, got = crawl_view(db), crawl_view(tmp_path / "imported.db")
    assert len(want["fetches"]) > 100
    # Same fetch attempts in the same order (retries of a 503 included), same outcomes.
    assert got["fetches"] == want["fetches"]
    assert {s for _, _, s, _ in want["fetches"]} >= {200, 301, 503}
    assert got["outcomes"] == want["outcomes"]
    # Same links, page by page in document order, same nofollow flags; same URL set.
    assert got["links"] == want["links"]
    assert got["urls"] == want["urls"]
    assert result.robots == 4 and result.bad == 0
    # The recorded order is the record order: compare sees the crawl's own order.
    a, b = load_graph(db), load_graph(tmp_path / "imported.db")
    assert [a.urls[i] for i in a.fetch_order] == [b.urls[i] for i in b.fetch_order]
    with sqlite3.connect(tmp_path / "imported.db") as conn:
        robots = conn.execute("SELECT count(*) FROM hosts WHERE robots_status = 200"
                              " AND robots_body LIKE '%Disallow%'").fetchone()[0]
    assert robots == 4


def test_uncompressed_warc_and_the_cli(crawled: tuple[Path, Path, int], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    db, warc, _ = crawled
    plain = tmp_path / "site.warc"
    # Gzip per record: decompressing the whole file gives the uncompressed WARC.
    plain.write_bytes(gzip.decompress(warc.read_bytes()))
    assert main(["import", "warc", str(plain), "--db", str(tmp_path / "p.db"), "--json"]) == 0
    assert crawl_view(tmp_path / "p.db")["links"] == crawl_view(db)["links"]


def _damage(warc: Path, out: Path, record: int) -> int:
    """Copy ``warc`` with garbage inside its ``record``-th gzip member; its offset."""
    data = bytearray(warc.read_bytes())
    starts = [i for i in range(len(data) - 2) if data[i:i + 3] == b"\x1f\x8b\x08"]
    offset = starts[record]
    data[offset + 30: offset + 60] = b"\xff" * 30
    out.write_bytes(bytes(data))
    return offset


def test_damaged_record_is_one_error_with_its_offset(crawled: tuple[Path, Path, int],
                                                     tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, warc, _ = crawled
    bad = tmp_path / "bad.warc.gz"
    offset = _damage(warc, bad, 40)
    with pytest.raises(InputFormatError) as info:
        import_warc([bad], tmp_path / "a.db")
    assert info.value.offset == offset
    # Nothing was written: no database, no temporary file.
    assert sorted(p.name for p in tmp_path.iterdir() if "a.db" in p.name) == []
    assert main(["import", "warc", str(bad), "--db", str(tmp_path / "b.db"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"offset {offset}" in err and "--skip-bad" in err
    # --skip-bad: the one record is lost, every other one imported.
    result = import_warc([bad], tmp_path / "c.db", skip_bad=True)
    assert result.bad == 1 and result.bad_offsets[0][1] == offset
    full = import_warc([warc], tmp_path / "d.db")
    assert result.fetches == full.fetches - 1


def test_revisit_records_are_unchanged_refetches(tmp_path: Path) -> None:
    warc = tmp_path / "r.warc.gz"
    body = b'<html><a href="/b">b</a></html>'
    with open(warc, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for kind in ("response", "revisit"):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                       protocol="HTTP/1.1")
            if kind == "response":
                rec = writer.create_warc_record("http://a.test/", "response",
                                                payload=io.BytesIO(body), length=len(body),
                                                http_headers=headers)
            else:
                rec = writer.create_revisit_record(
                    "http://a.test/", digest="sha1:AAAA", refers_to_uri="http://a.test/",
                    refers_to_date="2024-01-01T00:00:00Z", http_headers=headers)
            writer.write_record(rec)
    import_warc([warc], tmp_path / "r.db")
    with sqlite3.connect(tmp_path / "r.db") as conn:
        rows = conn.execute("SELECT kind, status, changed, outcome FROM fetches"
                            " ORDER BY id").fetchall()
    assert rows == [("crawl", 200, None, "fetched"), ("revisit", 200, 0, "fetched")]


def test_codings_over_two_header_lines_are_undone_like_the_fetcher(tmp_path: Path) -> None:
    """A stored body gzipped twice, each coding on its own ``Content-Encoding`` line
    (as curl reads such answers): both are undone, so the page's link is found."""
    warc = tmp_path / "c.warc.gz"
    html = b'<html><a href="/b">b</a></html>'
    body = gzip.compress(gzip.compress(html))
    with open(warc, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html"),
                                              ("Content-Encoding", "gzip"),
                                              ("Content-Encoding", "gzip")],
                                   protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            "http://a.test/", "response", payload=io.BytesIO(body), length=len(body),
            http_headers=headers))
    import_warc([warc], tmp_path / "c.db")
    with sqlite3.connect(tmp_path / "c.db") as conn:
        urls = {u for (u,) in conn.execute("SELECT url FROM urls")}
    assert urls == {"http://a.test/", "http://a.test/b"}


@pytest.mark.skipif(shutil.which("wget") is None, reason="GNU Wget is not installed")
def test_wget_warc_of_the_site_imports_like_a_crawl(tmp_path: Path) -> None:
    web = fixture_web(pages=80, hosts=3, seed=4)
    # Each client gets a fresh server (the transient 503s start over for both); URLs
    # are compared with the wget server's port written as the crawl server's.
    with serve_in_thread(web) as server, forward_proxy(server.port) as proxy_port:
        wget_port = server.port
        # wget reaches the *.test hosts (no DNS) through a loopback forward proxy.
        run = subprocess.run(
            ["wget", "-r", "-l", "inf", "-H", "--domains=test", "-e", "robots=on",
             "-e", f"http_proxy=http://127.0.0.1:{proxy_port}/", "-e", "use_proxy=on",
             "--tries=1", "--warc-file", str(tmp_path / "wget"), "--no-warc-keep-log",
             "-P", str(tmp_path / "mirror"), "-nv", server.seed_url],
            capture_output=True, timeout=120, check=False)
    assert run.returncode in (0, 8), run.stderr[-2000:]  # 8: server errors (the faults)
    with serve_in_thread(web) as server:
        crawl_port = server.port
        crawl(tmp_path / "crawl.db", server.seed_url, retry_attempts=1)
    import_warc([tmp_path / "wget.warc.gz"], tmp_path / "wget.db")
    want = crawl_view(tmp_path / "crawl.db")
    got = crawl_view(tmp_path / "wget.db", port_map=(f":{wget_port}/", f":{crawl_port}/"))
    ok_want = {u for u, o in want["outcomes"].items() if o in ("fetched", "redirect")}
    ok_got = {u for u, o in got["outcomes"].items() if o in ("fetched", "redirect")}
    assert len(ok_want) > 50
    assert ok_got == ok_want
    assert {u: got["links"][u] for u in ok_want} == {u: want["links"][u] for u in ok_want}


@pytest.mark.parametrize("read", [False, True], ids=["default", "links-from-duplicates"])
def test_cli_links_from_duplicates_reads_a_copys_links(tmp_path: Path, read: bool,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A mirror's copy of a page (same bytes on another host) is recorded as a
    duplicate either way; its links, relative so they name the mirror's own pages, are
    read only with ``--links-from-duplicates``, as a crawl with the option reads them."""
    body = b'<html><a href="/a">a</a> <a href="b.html">b</a> <a href="/a">again</a></html>'
    warc = tmp_path / "m.warc.gz"
    with open(warc, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for url in ("http://site.test/", "http://mirror.test/"):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                       protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body),
                http_headers=headers))
    db = tmp_path / "m.db"
    argv = ["import", "warc", str(warc), "--db", str(db), "--json"]
    assert main([*argv, *(["--links-from-duplicates"] if read else [])]) == 0
    assert json.loads(capsys.readouterr().out)["links"] == (4 if read else 2)
    with sqlite3.connect(db) as conn:
        dup = conn.execute("SELECT u.url, o.url FROM urls u JOIN urls o"
                           " ON o.id = u.duplicate_of").fetchall()
        from webcrawl.storage._sqlite import decode_ids

        url = dict(conn.execute("SELECT id, url FROM urls"))
        links = {url[s]: [url[d] for d in decode_ids(b)]
                 for s, b in conn.execute("SELECT src, dst FROM links")}
    assert dup == [("http://mirror.test/", "http://site.test/")]
    site = ["http://site.test/a", "http://site.test/b.html"]  # a page's distinct targets
    mirror = [u.replace("site.test", "mirror.test") for u in site]
    assert links == ({"http://site.test/": site, "http://mirror.test/": mirror} if read
                     else {"http://site.test/": site})
