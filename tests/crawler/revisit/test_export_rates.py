"""`export rates` on a revisited fixture crawl: per-page change rates against the fixture's
true rates, with the same accuracy as `analyze changes` (same estimators, same visits)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import numpy as np
import pytest
from webcrawl.analysis.change import load_visit_log, mean_change_intervals
from webcrawl.analysis.change.fetch_history import history_visit_log, read_history
from webcrawl.analysis.change.rate_table import RATE_COLUMNS, export_rates
from webcrawl.crawler.cli import main
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.revisit.loop import RevisitCrawler, RevisitSettings
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb

DAY_SECONDS = 0.2


@pytest.fixture(scope="module")
def revisited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, float]]:
    """A crawl revisited for 5 s (25 simulated days); the true rate of each page URL."""
    web = FixtureWeb.build(FixtureConfig(pages=60, hosts=3, seed=7,
                                         change_mixture=((1.0, 2.0, 10.0),)))
    db = tmp_path_factory.mktemp("rates") / "c.db"
    cs = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                  concurrency=16, polite_min_delay=0.004,
                                  polite_max_delay=0.004)

    async def run() -> int:
        async with FixtureServer(web, day_seconds=DAY_SECONDS) as server:
            await Crawler(db, [server.seed_url], cs).run()
            settings = RevisitSettings(policy="uniform", budget=60.0, duration=5.0,
                                       day_seconds=DAY_SECONDS)
            await RevisitCrawler(db, settings, cs).run()
            return server.port

    port = asyncio.run(run())
    truth: dict[str, float] = {}
    for i, page in enumerate(web.truth_pages(port)):
        truth[page.url] = truth[page.final_url] = float(web.rates[i])
    return db, truth


def test_rates_match_truth_as_analyze_changes_does(revisited: tuple[Path, dict[str, float]],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    db, truth = revisited
    assert main(["export", "rates", "--db", str(db), "--format", "jsonl",
                 "--day-seconds", str(DAY_SECONDS)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and list(rows[0]) == list(RATE_COLUMNS)
    measured = [r for r in rows if r["rate_per_day"] is not None and r["url"] in truth]
    assert len(measured) >= 40
    ours = np.array([r["rate_per_day"] for r in measured])
    lam = np.array([truth[r["url"]] for r in measured])
    err_export = float(np.median(np.abs(ours / lam - 1)))
    # analyze changes: the same visit log, its per-page mean change interval.
    loaded = history_visit_log(read_history(db), DAY_SECONDS)
    interval = mean_change_intervals(loaded.log)
    by_id = dict(zip(loaded.url_ids.tolist(), interval.tolist(), strict=True))
    rate_changes = np.array([0.0 if by_id[r["url_id"]] == np.inf else 1 / by_id[r["url_id"]]
                             for r in measured])
    err_changes = float(np.median(np.abs(rate_changes / lam - 1)))
    assert err_export == pytest.approx(err_changes, rel=1e-9)
    # And it is an estimate of the truth, not noise: a few visits per change interval
    # give a median error of some tens of percent (0.37 on this fixture and seed).
    assert err_export < 0.5
    # The intervals cover the truth about as often as they say (95%).
    covered = np.mean([r["lower_95"] <= truth[r["url"]] <= (r["upper_95"] if
                       r["upper_95"] != "inf" else np.inf) for r in measured])
    assert covered >= 0.8
    assert {r["estimator"] for r in measured} <= {"last_modified", "bias_reduced", "mle",
                                                  "no_change"}
    assert {r["day_seconds"] for r in rows} == {DAY_SECONDS}
    visits = {r["url"]: r["visits"] for r in rows}
    assert sum(visits.values()) == len(load_visit_log(db, DAY_SECONDS).page)


def test_tsv_rates_have_the_same_values(revisited: tuple[Path, dict[str, float]]) -> None:
    db, _ = revisited
    tsv, js = io.StringIO(), io.StringIO()
    n = export_rates(db, tsv, seconds_per_day=DAY_SECONDS)
    assert export_rates(db, js, "jsonl", seconds_per_day=DAY_SECONDS) == n
    lines = tsv.getvalue().splitlines()
    assert lines[0].split("\t") == list(RATE_COLUMNS)
    for line, obj in zip(lines[1:], js.getvalue().splitlines(), strict=True):
        values = json.loads(obj)
        cells = line.split("\t")
        for cell, key in zip(cells, RATE_COLUMNS, strict=True):
            v = values[key]
            if isinstance(v, float):
                assert float(cell) == pytest.approx(v, rel=1e-12)
            else:
                assert cell == ("" if v is None else str(v))
