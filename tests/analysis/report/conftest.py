"""A crawl of the fixture web, revisited on the accelerated clock, and its HTML report
(with a comparison of orderings and the fixture's true change rates): shared by the
figure-layout and browser tests."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from webcrawl.analysis.report.document import (
    ReportInputs,
    ReportSettings,
    ReportSummary,
    build_report,
)
from webcrawl.analysis.report.html import Section
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

#: Seconds of one simulated day while revisiting (the revisit lasts 1.5 s: 7.5 days).
DAY_SECONDS = 0.2
COMPARE = ("bfs", "dfs", "random", "backlink", "pagerank", "opic")


@dataclass
class RenderedReport:
    """The revisited crawl's database, its report and every figure the report drew."""

    db: Path
    html: Path
    summary: ReportSummary
    figures: list[tuple[str, str, Any]] = field(default_factory=list)  # (section, alt, fig)


@pytest.fixture(scope="package")
def rendered_report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RenderedReport]:
    tmp = tmp_path_factory.mktemp("rendered")
    web = FixtureWeb.build(FixtureConfig(pages=220, hosts=4, seed=7, day_seconds=DAY_SECONDS))
    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",))
    db = tmp / "revisited.db"
    with serve_in_thread(web) as server:
        asyncio.run(Crawler(db, [server.seed_url], settings).run())
        revisit = RevisitSettings(policy="uniform", budget=2000.0, duration=1.5,
                                  day_seconds=DAY_SECONDS)
        asyncio.run(RevisitCrawler(db, revisit, settings).run())
        truth = {p.url: p.lam for p in web.truth_pages(server.port)}
    figures: list[tuple[str, str, Any]] = []
    original = Section.image

    def keep(self: Section, fig: Any, alt: str, **kw: Any) -> None:
        figures.append((self.key, alt, fig))
        original(self, fig, alt, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Section, "image", keep)
        summary = build_report(db, tmp / "report.html",
                               settings=ReportSettings(compare=COMPARE),
                               inputs=ReportInputs(true_rates=truth))
    yield RenderedReport(db, tmp / "report.html", summary, figures)
