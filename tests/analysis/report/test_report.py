"""The HTML report, rendered from real crawls of the fixture web (with and without revisits).

The report is parsed back (html.parser): every section must be there, every image a
decodable PNG data URI, missing data said in words; its numbers are checked against
networkx on the crawled graph and against the fixture's ground truth.
"""

from __future__ import annotations

import asyncio
import base64
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from webcrawl.analysis.graph.bowtie_alg import bowtie
from webcrawl.analysis.report.document import (
    SECTIONS,
    ReportInputs,
    ReportSettings,
    build_report,
    table,
)
from webcrawl.analysis.report.figures import bowtie_figure
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread
from webcrawl.storage.errors import ConfigError, StoreError
from webcrawl.storage.reader import CrawlReader

PNG = b"\x89PNG\r\n\x1a\n"
DAY_SECONDS = 0.2


def polite_off(**kw: object) -> CrawlSettings:
    return CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                    **kw)


@dataclass
class Crawled:
    web: FixtureWeb
    port: int
    plain: Path          # a crawl, never revisited
    revisited: Path      # the same crawl, then revisited on the accelerated clock

    def true_rates(self) -> dict[str, float]:
        return {p.url: p.lam for p in self.web.truth_pages(self.port)}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawled]:
    tmp = tmp_path_factory.mktemp("report")
    web = FixtureWeb.build(FixtureConfig(pages=220, hosts=4, seed=7, day_seconds=DAY_SECONDS))
    with serve_in_thread(web) as server:
        for name in ("plain.db", "revisited.db"):
            asyncio.run(Crawler(tmp / name, [server.seed_url], polite_off()).run())
        revisit = RevisitSettings(policy="uniform", budget=2000.0, duration=1.5,
                                  day_seconds=DAY_SECONDS)
        asyncio.run(RevisitCrawler(tmp / "revisited.db", revisit, polite_off()).run())
        yield Crawled(web, server.port, tmp / "plain.db", tmp / "revisited.db")


class _Parsed(HTMLParser):
    """Sections (id -> images, missing notes, text) and every tag seen."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, _SectionSeen] = {}
        self.tags: list[str] = []
        self._current: _SectionSeen | None = None
        self._in_missing = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        a = dict(attrs)
        if tag == "section":
            self._current = self.sections.setdefault(str(a["id"]), _SectionSeen())
        elif tag == "img" and self._current is not None:
            self._current.images.append(str(a["src"]))
        elif tag == "p" and a.get("class") == "missing":
            self._in_missing = True
        elif self._current is not None and tag == "table":
            self._current.tables.append([])
        elif self._current is not None and tag == "tr":
            self._current.tables[-1].append([])
        elif self._current is not None and tag in ("td", "th"):
            self._current.tables[-1][-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self._current = None
        if tag == "p":
            self._in_missing = False

    def handle_data(self, data: str) -> None:
        if self._current is not None:
            self._current.text += data
            rows = self._current.tables[-1] if self._current.tables else None
            if rows and rows[-1] and self.tags[-1] not in ("table", "tr"):
                rows[-1][-1] += data
            if self._in_missing:
                self._current.missing += data


@dataclass
class _SectionSeen:
    images: list[str] = field(default_factory=list)
    tables: list[list[list[str]]] = field(default_factory=list)
    text: str = ""
    missing: str = ""


def parse(path: Path) -> _Parsed:
    parser = _Parsed()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def png_of(src: str) -> bytes:
    prefix = "data:image/png;base64,"
    assert src.startswith(prefix), src[:40]
    return base64.b64decode(src[len(prefix):], validate=True)


def assert_images_are_png(doc: _Parsed) -> int:
    n = 0
    for section in doc.sections.values():
        for src in section.images:
            data = png_of(src)
            assert data.startswith(PNG) and len(data) > 1000
            n += 1
    return n


def crawled_digraph(db: Path) -> tuple[nx.DiGraph, list[str]]:
    """The graph of fetched pages and the links between them, from the database."""
    with CrawlReader(db) as reader:
        urls = reader.urls()
        links = reader.links_csr()
    fetched = set(urls.ids[urls.has_outcome("fetched")].tolist())
    url_of = dict(zip(urls.ids.tolist(), urls.urls, strict=True))
    g = nx.DiGraph()
    g.add_nodes_from(url_of[i] for i in fetched)
    for s, d in zip(links.edge_src.tolist(), links.dst.tolist(), strict=True):
        if s in fetched and d in fetched and s != d:
            g.add_edge(url_of[s], url_of[d])
    return g, sorted(url_of[i] for i in fetched)


def test_report_without_revisits(crawled: Crawled, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    summary = build_report(crawled.plain, out)
    doc = parse(out)
    assert list(doc.sections) == list(SECTIONS)
    assert summary.missing == ["comparison", "changes"]
    assert "No revisit data" in doc.sections["changes"].missing
    assert "No comparison was requested" in doc.sections["comparison"].missing
    for key in ("summary", "ranking", "bowtie", "degrees", "quality"):
        assert doc.sections[key].missing == "", key
    per_section = {k: len(v.images) for k, v in doc.sections.items()}
    assert per_section == {"overview": 0, "summary": 1, "ranking": 0, "bowtie": 1,
                           "degrees": 1, "quality": 6, "comparison": 0, "changes": 0}
    assert assert_images_are_png(doc) == summary.images == 9
    # No external asset and no script: readable offline, page content never executes.
    html_text = out.read_text()
    assert "http-equiv" not in html_text and "<script" not in html_text
    assert not any(t in ("script", "link", "iframe") for t in doc.tags)


def test_report_numbers_match_networkx_and_truth(crawled: Crawled, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    summary = build_report(crawled.plain, out, settings=ReportSettings(top_k=5))
    doc = parse(out)
    g, pages = crawled_digraph(crawled.plain)
    # Every reachable, robots-allowed page of the fixture web was crawled.
    reach = crawled.web.reachable()
    truth = crawled.web.truth_pages(crawled.port)
    expected = sorted(p.url for i, p in enumerate(truth) if reach[i] and p.robots_allowed)
    assert pages == expected
    assert summary.pages == len(pages) == g.number_of_nodes()
    assert f"{len(pages):,}" in doc.sections["summary"].text
    # Top page by PageRank: networkx's argmax heads the table.
    pr = nx.pagerank(g, alpha=0.85, tol=1e-12)
    best = max(pr, key=pr.__getitem__)
    by_pagerank, by_authority = doc.sections["ranking"].tables
    assert by_pagerank[0] == ["#", "URL", "PageRank", "x mean", "in-links"]
    assert len(by_pagerank) == 1 + 5
    assert by_pagerank[1][:2] == ["1", best]
    assert int(by_pagerank[1][4]) == g.in_degree(best)
    _, authorities = nx.hits(g, max_iter=10_000, tol=1e-12)
    assert by_authority[1][1] == max(authorities, key=authorities.__getitem__)
    # Bow-tie: the SCC size is networkx's largest strongly connected component.
    scc = max(len(c) for c in nx.strongly_connected_components(g))
    regions = {row[0]: row[1] for row in doc.sections["bowtie"].tables[0][1:]}
    assert regions["SCC"] == f"{scc:,}"
    assert regions["weakly connected components"] == str(
        nx.number_weakly_connected_components(g))


def test_report_with_revisits(crawled: Crawled, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    summary = build_report(crawled.revisited, out,
                           inputs=ReportInputs(true_rates=crawled.true_rates()))
    doc = parse(out)
    assert list(doc.sections) == list(SECTIONS)
    assert summary.missing == ["comparison"]
    changes = doc.sections["changes"]
    assert changes.missing == ""
    assert len(changes.images) == 2  # rate histogram (with truth), freshness
    assert assert_images_are_png(doc) == summary.images == 11
    # The revisit run's clock was read from the database, not assumed to be 86400 s.
    assert f"{DAY_SECONDS:g} s" in changes.text
    assert "median relative error vs truth" in changes.text
    assert summary.rate_error is not None and np.isfinite(summary.rate_error)
    assert summary.rate_pages > 0


def test_report_compares_orderings(crawled: Crawled, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    summary = build_report(crawled.plain, out,
                           settings=ReportSettings(compare=("bfs", "dfs", "random")))
    doc = parse(out)
    comparison = doc.sections["comparison"]
    assert summary.sections["comparison"] is None
    for name in ("recorded", "bfs", "dfs", "random"):
        assert name in comparison.text
    # The ceiling is a labelled, defined reference line, not a contestant.
    assert "ideal (ceiling)" in comparison.text
    assert "Ceilings are reference lines, not orderings a crawler can run" in comparison.text
    assert "a ceiling, not an ordering: the fetchable pages in decreasing" in comparison.text
    assert "The best ordering a crawler can run here is " in comparison.text
    assert len(comparison.images) == 4
    assert_images_are_png(doc)


def test_report_of_an_empty_crawl_says_so(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    db = tmp_path / "empty.db"
    asyncio.run(Crawler(db, [f"http://127.0.0.1:{port}/"],
                        polite_off(retry_attempts=1, robots_max_attempts=1)).run())
    out = tmp_path / "r.html"
    summary = build_report(db, out)
    doc = parse(out)
    assert list(doc.sections) == list(SECTIONS)
    assert summary.pages == 0
    for key in ("ranking", "bowtie", "degrees", "quality", "changes"):
        assert doc.sections[key].missing, key
    assert assert_images_are_png(doc) == summary.images


def test_text_from_the_database_is_escaped(crawled: Crawled, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    build_report(crawled.plain, out, inputs=ReportInputs(facts={"note": hostile}))
    doc = parse(out)
    assert hostile in doc.sections["summary"].text  # shown as text ...
    assert "script" not in doc.tags                  # ... never as markup
    assert all(src.startswith("data:image/png") for s in doc.sections.values()
               for src in s.images)
    cell = table(["a"], [["<b>&"]])
    assert "&lt;b&gt;&amp;" in cell and "<b>" not in cell


def test_bowtie_figure_labels_the_region_sizes() -> None:
    import scipy.sparse as sp

    # 0 -> 1 -> 2 -> 0 is the SCC, 3 feeds it, it feeds 4, 5 hangs off 3, 6 -> 7 apart.
    src, dst = [0, 1, 2, 3, 2, 3, 6], [1, 2, 0, 0, 4, 5, 7]
    bt = bowtie(sp.csr_array(([1.0] * 7, (src, dst)), shape=(8, 8)))
    texts = [t.get_text() for t in bowtie_figure(bt).axes[0].texts]
    for label in ("SCC\n3 (37.5%)", "IN\n1 (12.5%)", "OUT\n1 (12.5%)",
                  "TENDRILS\n1 (12.5%)", "TUBES\n0 (0.0%)", "DISCONNECTED\n2 (25.0%)"):
        assert label in texts


def test_settings_validate_themselves() -> None:
    with pytest.raises(ConfigError):
        ReportSettings(top_k=0)
    with pytest.raises(ConfigError):
        ReportSettings(seconds_per_day=0.0)


def test_missing_database_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        build_report(tmp_path / "nope.db", tmp_path / "r.html")


def test_cli_report(crawled: Crawled, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli.html"
    assert main(["report", "--db", str(crawled.plain), "--output", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert list(parse(out).sections) == list(SECTIONS)
    assert main(["report", "--db", str(tmp_path / "none.db"), "--output", str(out)]) == 1
    assert main(["report", "--db", str(crawled.plain), "--compare", "bfs,nope",
                 "--output", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("webcrawl: error:") for line in err)



def test_report_says_how_it_was_made(crawled: Crawled, tmp_path: Path) -> None:
    """Version, command, times and the stored settings; every outcome share explained."""
    import re

    from webcrawl.analysis.report.document import OUTCOME_MEANING, webcrawl_version
    from webcrawl.storage.reader import CrawlReader

    out = tmp_path / "made.html"
    assert main(["report", "--db", str(crawled.plain), "-o", str(out), "--quiet"]) == 0
    import html

    text = html.unescape(re.sub(r"<[^>]+>", " ", out.read_text()))
    assert "How this report was made" in text
    assert f"webcrawl version {webcrawl_version()}" in " ".join(text.split())
    assert re.search(r"crawl ran\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC to ", text)
    # The settings: a table of those that differ from the defaults, nothing else.
    import json

    from webcrawl.crawler.config import settings_dict

    with CrawlReader(crawled.plain) as reader:
        stored = json.loads(reader.meta()["settings"])
    defaults = settings_dict(CrawlSettings())
    differing = sorted(k for k, v in stored.items() if defaults[k] != v)
    assert 0 < len(differing) < len(stored) / 4
    rows = parse(out).sections["summary"].tables[-1]
    assert rows[0] == ["setting", "value", "default"]
    assert [row[0] for row in rows[1:]] == differing
    assert f"{len(stored)} stored with the crawl; {len(differing)} differ from the defaults" \
        in " ".join(text.split())
    # Each outcome row carries its meaning; out_of_scope names the binary links.
    assert "link to a binary file" in OUTCOME_MEANING["out_of_scope"]
    for outcome, meaning in OUTCOME_MEANING.items():
        if f" {outcome} " in text:
            assert meaning.split(";")[0][:40] in " ".join(text.split()), outcome


def _report_text(section: _SectionSeen) -> str:
    return " ".join(section.text.split())


def test_the_report_speaks_first(crawled: Crawled, tmp_path: Path) -> None:
    """The first section is a written summary whose every number is the data's: URLs
    fetched and HTML pages, hosts, the SCC's share, duplicates, the top page, the
    fastest ordering, the revisits; and nothing there speaks of a fixture."""
    import sqlite3

    out = tmp_path / "r.html"
    summary = build_report(crawled.revisited, out,
                           settings=ReportSettings(compare=("bfs", "dfs", "random")))
    doc = parse(out)
    assert next(iter(doc.sections)) == "overview"
    text = _report_text(doc.sections["overview"])
    with sqlite3.connect(crawled.revisited) as conn:
        ended = conn.execute("SELECT COUNT(*) FROM urls WHERE outcome IS NOT NULL AND "
                             "outcome NOT IN ('out_of_scope', 'robots_excluded')").fetchone()[0]
        pages = conn.execute("SELECT COUNT(*) FROM urls WHERE outcome = 'fetched'").fetchone()[0]
        hosts = conn.execute("SELECT COUNT(DISTINCT host_id) FROM urls WHERE outcome IS NOT "
                             "NULL AND outcome NOT IN ('out_of_scope', 'robots_excluded')"
                             ).fetchone()[0]
        revisits = conn.execute("SELECT COUNT(*) FROM fetches WHERE kind = 'revisit'"
                                ).fetchone()[0]
        digests = [d for (d,) in conn.execute(
            "SELECT digest FROM fetches WHERE kind = 'crawl' AND outcome = 'fetched'")]
    assert f"The crawl fetched {ended:,} URLs on {hosts:,} hosts: {pages:,} HTML pages" in text
    bt = summary.figures["bowtie"]
    assert f"({bt['SCC']:,} pages, {100 * bt['SCC'] / sum(bt.values()):.1f}%)" in text
    duplicates = len(digests) - len(set(digests))
    if duplicates:
        assert "share their exact content with another page" in text
    else:
        assert f"No two of the {len(digests):,} HTML pages have the same content" in text
    assert f"The page of highest PageRank is {summary.figures['pagerank_top'][0][0]}" in text
    capture = {k: v["captured_at_10pct"] for k, v in summary.figures["comparison"].items()}
    # The headline names the best ordering a crawler can run; the ideal ceiling (which
    # no ordering beats) is given apart as a reference and defined in the glossary.
    runnable = {k: v for k, v in capture.items() if k != "ideal"}
    best = max(runnable, key=runnable.__getitem__)
    assert capture["ideal"] >= runnable[best]
    assert (f"Of the {len(runnable)} orderings compared, "
            + ("the crawl's own order (recorded)" if best == "recorded" else best)
            + f" captured PageRank fastest: its first 10% of pages held {capture[best]:.2f}"
            ) in text
    assert f"For reference, the ceiling ideal held {capture['ideal']:.2f}" in text
    assert "a ceiling, not an ordering: the fetchable pages in decreasing" in text
    assert f"Revisits ({revisits:,})" in text
    everything = " ".join(s.text for s in doc.sections.values())
    assert "fixture" not in everything.lower()


def test_a_glossary_beside_every_metric(crawled: Crawled, tmp_path: Path) -> None:
    """Each metric a section's tables name is defined under that section."""
    import re

    out = tmp_path / "r.html"
    build_report(crawled.plain, out, settings=ReportSettings(compare=("bfs", "random")))
    html_text = out.read_text()
    metric = re.compile(r"^(PR@\d+%|top\d+@\d+%|meanPR first \d+%|SCC|IN|OUT|TENDRILS|TUBES|"
                        r"OTHER|DISCONNECTED|alpha|x_min|KS|x mean)$")
    checked = 0
    for key in SECTIONS:
        block = html_text.split(f'<section id="{key}">', 1)[1].split("</section>", 1)[0]
        terms = re.findall(r"<dt>(.*?)</dt>", block)
        cells = {c for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", block)}
        for name in filter(metric.match, cells):
            family = ("PR@1%" if name.startswith("PR@") else "top100@10%"
                      if name.startswith("top") else "meanPR first 10%"
                      if name.startswith("meanPR") else name)
            assert family in terms, (key, name, terms)
            checked += 1
    assert checked >= 12


def test_the_summary_follows_the_graph_not_a_template(tmp_path: Path) -> None:
    """On a crawl whose seed lies in IN (0 -> 1 <-> 2 -> 3), the overview states the
    shares it measured and says that the seed lies outside the SCC."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "crawldb", Path(__file__).parents[2] / "crawler" / "crawldb.py")
    assert spec is not None and spec.loader is not None
    crawldb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(crawldb)
    urls = [f"http://a.test/{name}" for name in ("", "b", "c", "d")]
    db = crawldb.write_crawl(tmp_path / "in.db", urls, {0: [1], 1: [2], 2: [1, 3], 3: []})
    out = tmp_path / "r.html"
    build_report(db, out)
    text = _report_text(parse(out).sections["overview"])
    assert "holds half of its pages (2 pages, 50.0%)" in text
    assert "1 page (25.0%) reach the SCC without being reachable from it (IN)" in text
    assert "1 page (25.0%) are reached from it without linking back (OUT)." in text
    assert "The seed lies outside the SCC" in text
