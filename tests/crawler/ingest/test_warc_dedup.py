"""WARC deduplication across crawls (``--warc-dedup``) and within one
(``--warc-dedup-repeats``), and the CDXJ index beside the WARCs (``--warc-cdxj``).

Truth: the first crawl's WARC as warcio reads it (its payload digests, URLs, dates and
payload sizes), the fixture server's pages (the crawl database of a crawl archived
whole), and pywb's ``cdxj-indexer`` where it is installed (else the index is read with
warcio, record by record, at the offsets it names)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from miniweb import MiniWeb, html
from test_warc_output import warcio_check
from warcdata import crawl_settings, crawl_view
from warcio.archiveiterator import ArchiveIterator
from webcrawl.crawler.archive import IDENTICAL_PAYLOAD_PROFILE, WarcCounts
from webcrawl.crawler.cdxj import read_cdx_digests, surt_key
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler, CrawlStats
from webcrawl.crawler.ingest import import_warc
from webcrawl.crawler.progress import format_summary
from webcrawl.crawler.warc_dedup import PayloadIndex
from webcrawl.fixtures import FaultSpec, FixtureConfig, FixtureWeb, serve_in_thread
from webcrawl.storage.errors import ConfigError, InputFormatError

#: A site that does not change between two crawls a few seconds apart (a mean change
#: interval of a billion simulated days), with redirects, 503s and non-HTML pages.
UNCHANGED = FixtureConfig(
    pages=80, hosts=3, seed=5, change_mixture=((1.0, 1e9, 1e9),),
    faults=FaultSpec(fractions=(("503", 0.04), ("redirect", 0.05), ("ctype", 0.04)),
                     transient_failures=1, retry_after=0.0, redirect_chain=2))


def records(folder: Path) -> list[dict[str, Any]]:
    """Every response and revisit record of the WARCs in ``folder`` (file order)."""
    out = []
    for path in sorted(folder.glob("*.warc.gz")):
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type not in ("response", "revisit"):
                    continue
                h = rec.rec_headers
                out.append({"type": rec.rec_type, "uri": h.get_header("WARC-Target-URI"),
                            "date": h.get_header("WARC-Date"),
                            "profile": h.get_header("WARC-Profile"),
                            "digest": h.get_header("WARC-Payload-Digest"),
                            "refers_uri": h.get_header("WARC-Refers-To-Target-URI"),
                            "refers_date": h.get_header("WARC-Refers-To-Date"),
                            "refers_id": h.get_header("WARC-Refers-To"),
                            "id": h.get_header("WARC-Record-ID"),
                            "status": rec.http_headers.get_statuscode(),
                            "payload": len(rec.content_stream().read())})
    return out


def indexed(path: Path) -> dict[int, dict[str, Any]]:
    """Offset -> the response or revisit record there, read with warcio's iterator."""
    found = {}
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        for rec in it:
            if rec.rec_type in ("response", "revisit"):
                found[it.get_record_offset()] = {
                    "type": rec.rec_type, "uri": rec.rec_headers.get_header("WARC-Target-URI"),
                    "date": rec.rec_headers.get_header("WARC-Date"),
                    "digest": rec.rec_headers.get_header("WARC-Payload-Digest"),
                    "status": rec.http_headers.get_statuscode(),
                    "length": None}
                rec.content_stream().read()
                found[it.get_record_offset()]["length"] = it.get_record_length()
    return found


@pytest.fixture(scope="module")
def two_crawls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A first crawl (WARC and CDXJ) and, of the same unchanged site, a second one
    deduplicated against the first crawl's database and a third against its CDXJ."""
    tmp = tmp_path_factory.mktemp("dedup")
    with serve_in_thread(FixtureWeb.build(UNCHANGED)) as server:
        def crawl(name: str, **kw: Any) -> None:
            settings = crawl_settings(warc_dir=str(tmp / name), warc_cdxj=True, **kw)
            stats = asyncio.run(Crawler(tmp / f"{name}.db", [server.seed_url], settings).run())
            (tmp / f"{name}.json").write_text(json.dumps(stats.as_dict()))
        crawl("first")
        crawl("db", warc_dedup=str(tmp / "first.db"))
        (index,) = (tmp / "first").glob("*.cdxj")
        # The third through the command line: its options and its --json output.
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["crawl", server.seed_url, "--db", str(tmp / "cdxj.db"), "--warc",
                         str(tmp / "cdxj"), "--warc-dedup", str(index), "--warc-cdxj",
                         "--json", "--quiet", "--min-delay", "0", "--max-delay", "0",
                         "--delay-factor", "0", "--resolve", "*.test=127.0.0.1",
                         "--allow-host", "*.test", "--concurrency", "8"]) == 0
        (tmp / "cdxj.json").write_text(out.getvalue())
    return tmp


@pytest.mark.parametrize("against", ["db", "cdxj"])
def test_second_crawl_of_an_unchanged_site_stores_no_payload_again(two_crawls: Path,
                                                                    against: str) -> None:
    first = records(two_crawls / "first")
    stored = {r["digest"]: r for r in first if r["type"] == "response" and r["payload"]}
    second = records(two_crawls / against)
    for path in (two_crawls / against).glob("*.warc.gz"):
        warcio_check(path)
    robots = [r for r in second if r["uri"].endswith("/robots.txt")]
    pages = [r for r in second if not r["uri"].endswith("/robots.txt")]
    # Every page answer with a body is a revisit that names a record of the first crawl
    # holding that very payload (its URL and date); answers without one (redirects) stay.
    with_body = [r for r in pages if r["type"] == "revisit" or r["payload"]]
    assert len(with_body) > 60
    for r in with_body:
        assert r["type"] == "revisit" and r["profile"] == IDENTICAL_PAYLOAD_PROFILE
        assert r["payload"] == 0
        held = stored[r["digest"]]
        assert (r["refers_uri"], r["refers_date"][:19]) == (held["uri"], held["date"][:19])
    # robots.txt is no fetch in a crawl database: the CDXJ index the first crawl wrote
    # beside its WARC holds it (as the index given directly does).
    assert {r["type"] for r in robots} == {"revisit"}
    assert len(robots) == UNCHANGED.hosts
    # The summary's figures are the records' own.
    warc = json.loads((two_crawls / f"{against}.json").read_text())["warc"]
    revisits = [r for r in second if r["type"] == "revisit"]
    assert warc["revisits"] == len(revisits)
    assert warc["bytes_not_stored"] == sum(stored[r["digest"]]["payload"] for r in revisits)
    assert warc["records"] == 2 * len(second)  # a request record per answer


def test_first_and_second_warc_import_to_the_crawls_graph(two_crawls: Path,
                                                          tmp_path: Path) -> None:
    files = sorted((two_crawls / "first").glob("*.warc.gz")) + \
        sorted((two_crawls / "db").glob("*.warc.gz"))
    import_warc(files, tmp_path / "back.db")
    want, got = crawl_view(two_crawls / "db.db"), crawl_view(tmp_path / "back.db")
    assert len(want["links"]) > 50
    assert got["links"] == want["links"] and got["urls"] == want["urls"]
    assert got["outcomes"] == want["outcomes"]


async def test_repeats_within_a_crawl_are_revisits_and_import_back(
        mini_web: MiniWeb, tmp_path: Path) -> None:
    """A mirrored site (the same pages under two host names, and one page under two
    paths): the second copy of each body is a revisit naming the first record, and the
    WARC alone imports to the crawl's pages, links and duplicates."""
    for host in ("a.test", "b.test"):
        mini_web.add(host, "/", html("/p1", "/p2", "/copy", "http://b.test:{port}/"))
        mini_web.add(host, "/p1", html("/p2", "/"))
        mini_web.add(host, "/p2", html("/p1"))
        mini_web.add(host, "/copy", html("/p2", "/"))  # the same body as /p1
    for page in list(mini_web.pages.values()):
        page.body = str(page.body).replace("{port}", str(mini_web.port))
    folder = tmp_path / "w"
    settings = mini_web.settings(warc_dir=str(folder), warc_dedup_repeats=True,
                                 scope_hosts=("*.test",), links_from_duplicates=True)
    stats = await Crawler(tmp_path / "c.db", [mini_web.url("a.test")], settings).run()
    (path,) = folder.glob("*.warc.gz")
    warcio_check(path)
    recs = records(folder)
    by_id = {r["id"]: r for r in recs}
    revisits = [r for r in recs if r["type"] == "revisit"]
    # 8 page bodies, 3 distinct ones (/, /p1 and /copy, /p2) on a.test; both robots.txt
    # 404s have one body too.
    distinct = {r["digest"] for r in recs if r["payload"]}
    assert len([r for r in recs if r["uri"].endswith("/robots.txt")]) == 2
    assert stats.warc is not None
    assert stats.warc.revisits == len(revisits) == len(recs) - len(distinct) == 6
    for r in revisits:
        first = by_id[r["refers_id"]]
        assert first["type"] == "response" and first["digest"] == r["digest"]
        assert (first["uri"], first["date"]) == (r["refers_uri"], r["refers_date"])
    assert stats.warc.bytes_not_stored == sum(
        by_id[r["refers_id"]]["payload"] for r in revisits)
    result = await asyncio.to_thread(import_warc, [path], tmp_path / "back.db",
                                     settings=settings)
    assert result.payload_revisits == 6
    want, got = crawl_view(tmp_path / "c.db"), crawl_view(tmp_path / "back.db")
    assert got == want
    assert duplicates(tmp_path / "back.db") == duplicates(tmp_path / "c.db") != {}


def duplicates(db: Path) -> dict[str, str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return dict(conn.execute("SELECT u.url, o.url FROM urls u JOIN urls o"
                                 " ON o.id = u.duplicate_of"))


def test_cdxj_index_names_each_record_where_it_is(two_crawls: Path) -> None:
    for name in ("first", "cdxj"):
        (warc,) = (two_crawls / name).glob("*.warc.gz")
        index = warc.with_name(warc.name.removesuffix(".warc.gz") + ".cdxj")
        lines = index.read_text().splitlines()
        assert lines == sorted(lines)
        truth = indexed(warc)
        assert len(lines) == len(truth)
        for line in lines:
            key, stamp, blob = line.split(" ", 2)
            fields = json.loads(blob)
            rec = truth[int(fields["offset"])]
            assert int(fields["length"]) == rec["length"]
            assert fields["filename"] == warc.name and fields["url"] == rec["uri"]
            assert key == surt_key(rec["uri"]) and stamp == rec["date"][:19].translate(
                str.maketrans("", "", "-T:"))
            assert fields.get("digest") == rec["digest"] and fields["status"] == rec["status"]
            assert (fields.get("mime") == "warc/revisit") == (rec["type"] == "revisit")


def test_cdxj_index_matches_pywbs_cdxj_indexer(two_crawls: Path) -> None:
    indexer = shutil.which("cdxj-indexer", path=str(Path(sys.executable).parent))
    if indexer is None:
        pytest.skip("pywb's cdxj-indexer is not installed (pip install cdxj-indexer)")
    for name in ("first", "db"):
        (warc,) = (two_crawls / name).glob("*.warc.gz")
        theirs = subprocess.run([indexer, "--sort", warc.name], cwd=warc.parent,
                                capture_output=True, text=True, check=True, timeout=120).stdout
        ours = warc.with_name(warc.name.removesuffix(".warc.gz") + ".cdxj").read_text()
        assert ours.splitlines() == theirs.splitlines()


def test_summary_says_the_bytes_not_stored_again() -> None:
    stats = CrawlStats(warc=WarcCounts(10, 4, 123_456))
    assert "WARC: 10 records, 4 revisits of stored payloads (123,456 bytes not stored " \
        "again)" in format_summary(stats)
    assert "WARC" not in format_summary(CrawlStats())


def test_surt_keys_follow_the_ia_canonicalisation() -> None:
    # Cases of the surt package's tests (github.com/internetarchive/surt), default options.
    assert surt_key("http://www.archive.org/") == "org,archive)/"
    assert surt_key("http://archive.org/goo/?a=2&b&a=1") == "org,archive)/goo?a=1&a=2&b"
    assert surt_key("http://archive.org:8080/index.html") == "org,archive:8080)/index.html"
    assert surt_key("https://www2.archive.org/A//B/#x") == "org,archive)/a/b"
    assert surt_key("http://192.168.1.254/info/") == "254,1,168,192)/info"


def test_classic_cdx_and_cdxj_are_read(tmp_path: Path) -> None:
    cdx = tmp_path / "old.cdx"
    cdx.write_text(
        " CDX N b a m s k r M S V g\n"
        "org,example)/ 20240101000000 http://example.org/ text/html 200 "
        "AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH - - 512 0 a.warc.gz\n"
        "org,example)/b 20240101000001 http://example.org/b warc/revisit 200 "
        "AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH - - 300 512 a.warc.gz\n")
    (entry,) = read_cdx_digests(cdx)
    assert entry == ("sha1:AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH", "http://example.org/",
                     "2024-01-01T00:00:00Z")
    bad = tmp_path / "bad.cdxj"
    bad.write_text('org,example)/ 2024 {"url": \n')
    with pytest.raises(InputFormatError, match="line 1"):
        list(read_cdx_digests(bad))


def test_cli_dedup_needs_warc_and_an_existing_file(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="warc_dedup needs warc_dir"):
        crawl_settings(warc_dedup=str(tmp_path / "x.db"))
    argv = ["crawl", "http://a.test/", "--db", str(tmp_path / "c.db"), "--warc",
            str(tmp_path / "w"), "--warc-dedup", str(tmp_path / "missing.db"), "--quiet"]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert "missing.db" in err and "Traceback" not in err
    assert not (tmp_path / "c.db").exists()


def test_a_database_without_cdxj_index_stores_robots_txt_again(two_crawls: Path,
                                                               tmp_path: Path) -> None:
    """The first crawl's robots.txt payloads come from its CDXJ index: a copy of its
    database whose WARC folder holds none knows its pages' payloads only."""
    first = records(two_crawls / "first")
    robots = {r["digest"] for r in first if r["uri"].endswith("/robots.txt") and r["payload"]}
    pages = {r["digest"] for r in first if r["type"] == "response" and r["payload"]} - robots
    shutil.copy(two_crawls / "first.db", tmp_path / "copy.db")
    with sqlite3.connect(tmp_path / "copy.db") as conn:
        (raw,) = conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        conn.execute("UPDATE meta SET value = ? WHERE key = 'settings'",
                     (json.dumps({**json.loads(raw), "warc_dir": str(tmp_path)}),))
    with_index = PayloadIndex.load(two_crawls / "first.db")
    without = PayloadIndex.load(tmp_path / "copy.db")
    assert robots and len(with_index) - len(without) == len(robots)
    assert len(without) == len(pages)
