"""Collections in which nothing (or little) changed: upper bounds, a skipped Poisson test,
and `webcrawl analyze changes` exiting 0 with the same figures as the library."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from webcrawl.analysis.change import (
    VisitHistory,
    change_report,
    estimate_rates,
    load_visit_log,
    no_change_upper_bound,
    poisson_test,
)
from webcrawl.analysis.change.change_stats import VisitLog
from webcrawl.storage.records import FetchKind, FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

LN20 = math.log(20.0)


def test_upper_bound_is_the_rule_of_three() -> None:
    assert no_change_upper_bound([1.0])[0] == pytest.approx(LN20)
    assert no_change_upper_bound([10.0], confidence=0.99)[0] == pytest.approx(math.log(100) / 10)
    assert np.isinf(no_change_upper_bound([0.0])[0])


@pytest.mark.parametrize("lam_t", [2.5, 3.2, 4.0], ids=["below", "just-above", "above"])
def test_zero_change_bound_misses_the_true_rate_at_most_five_percent(lam_t: float) -> None:
    # Pages of one true rate, visited at irregular times over ~T days: the bound given to
    # a page without changes must exclude the true rate only when P(no change) <= 5%.
    rng = np.random.default_rng(7)
    n_pages, n_visits, lam = 20_000, 6, 0.5
    gaps = rng.exponential(1.0, (n_pages, n_visits))
    gaps *= (lam_t / lam) / gaps.sum(axis=1, keepdims=True)  # T = lam_t / lam per page
    changed = rng.random(gaps.shape) < -np.expm1(-lam * gaps)  # Poisson: P(>= 1 change)
    hist = VisitHistory.from_arrays(np.repeat(np.arange(n_pages), n_visits), gaps.ravel(),
                                    changed.ravel())
    for method in ("auto", "mle", "naive", "bias_reduced"):
        est = estimate_rates(hist, method=method)  # type: ignore[arg-type]
        none = hist.n_changed == 0
        assert np.all(est.rate[none] == 0) and np.all(est.lower[none] == 0)
        np.testing.assert_allclose(est.upper[none], LN20 / hist.total_time[none])
        missed = float(np.mean(none & (est.upper < lam)))
        expected = math.exp(-lam_t) if lam_t > LN20 else 0.0
        assert missed == pytest.approx(expected, abs=4 * math.sqrt(0.05 / n_pages) + 1e-12)
        assert missed <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n_pages)


def _log_without_changes(n_pages: int = 5, visits: int = 8) -> VisitLog:
    page = np.repeat(np.arange(n_pages), visits)
    time = np.tile(np.arange(visits, dtype=float), n_pages) * 0.5 + page * 0.1
    changed = np.zeros(page.size, np.int8)
    changed[::visits] = -1
    return VisitLog.from_arrays(page, time, np.ones(page.size, bool), changed,
                                host=np.arange(n_pages) % 2, host_names=["a.test", "b.test"])


def test_poisson_test_skips_with_a_reason() -> None:
    pt = poisson_test(_log_without_changes())
    assert pt.skipped is not None and "no change was seen" in pt.skipped
    assert math.isnan(pt.statistic) and math.isnan(pt.pvalue) and pt.n_intervals == 0
    # A few changes, but no page with min_changes of them: skipped too, and says so.
    log = _log_without_changes()
    ch = log.changed.copy()
    ch[[3, 12]] = 1
    few = VisitLog(log.page, log.time, log.present, ch, log.last_modified, log.host,
                   log.host_names)
    pt = poisson_test(few)
    assert pt.skipped is not None and "2 changes in 2 pages" in pt.skipped


def test_change_report_without_changes_gives_upper_bounds() -> None:
    log = _log_without_changes()
    report = change_report(log)
    days = 3.5  # 7 intervals of 0.5 days per page
    np.testing.assert_allclose(report.observed_days, days)
    np.testing.assert_allclose(report.rates.upper, LN20 / days)
    assert report.unchanged.all()
    assert report.pooled_upper_bound == pytest.approx(LN20 / (5 * days))
    summary = report.to_dict()
    assert summary["poisson_test"]["skipped"] and summary["poisson_test"]["p_value"] is None
    r = summary["rates"]
    assert r["pages_without_changes"] == 5 and r["pages_with_changes"] == 0
    assert r["unchanged_by_host"]["a.test"]["pages"] == 3
    json.dumps(summary, allow_nan=False)  # strict JSON: no NaN leaks out


async def _write_all_304(path: Path, *, day: float = 86400.0) -> None:
    """A crawl of 6 pages on 2 hosts, then 5 revisit rounds each answered 304."""
    store = await CrawlStore.open(path)
    names = ["docs.test", "static.test"]
    for h, name in enumerate(names):
        store.add_host(HostRow(id=h, name=name))
    t0, seq = 1_700_000_000.0, 0
    for u in range(6):
        store.add_url(UrlRow(id=u, url=f"https://{names[u % 2]}/p{u}", host_id=u % 2,
                             depth=1, discovered_seq=-1))
    for rnd in range(6):
        for u in range(6):
            at = t0 + (rnd * 0.25 + u * 0.01) * day
            crawl = rnd == 0
            store.add_fetch(FetchRecord(
                url_id=u, seq=seq, started_at=at, ended_at=at + 0.1,
                outcome=Outcome.FETCHED if crawl else Outcome.NOT_MODIFIED,
                status=200 if crawl else 304, digest="d" if crawl else None,
                kind=FetchKind.CRAWL if crawl else FetchKind.REVISIT,
                changed=None if crawl else False))
            seq += 1
    for u in range(6):
        store.set_outcome(u, Outcome.FETCHED, u)
    await store.aclose()


async def test_cli_all_304_prints_upper_bounds_and_matches_the_library(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from webcrawl.crawler.cli import main

    db = tmp_path / "crawl.db"
    await _write_all_304(db)
    assert main(["analyze", "changes", "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert "6 without" in out and "Poisson test (intervals vs exponential): skipped" in out
    days = 5 * 0.25  # five revisit intervals of a quarter day
    assert f"{LN20 / days:.4g}" in out  # each page's bound, the median and the largest
    assert f"{LN20 / (6 * days):.4g}" in out  # the pooled bound
    assert main(["analyze", "changes", "--db", str(db), "--json", "--out",
                 str(tmp_path / "plots")]) == 0
    cli = json.loads(capsys.readouterr().out)
    lib = change_report(load_visit_log(db)).to_dict()
    assert cli["rates"] == lib["rates"] and cli["poisson_test"] == lib["poisson_test"]
    assert cli["rates"]["unchanged_upper_rate_per_day"]["max"] == pytest.approx(LN20 / days)
    assert cli["rates"]["unchanged_pooled_upper_rate_per_day"] == pytest.approx(
        LN20 / (6 * days))
    assert len(cli["plots"]) == 5   # incl. change_intervals_by_domain.png


async def test_report_change_section_states_the_upper_bounds(tmp_path: Path) -> None:
    import re

    from webcrawl.crawler.cli import main

    db = tmp_path / "crawl.db"
    await _write_all_304(db)
    out = tmp_path / "report.html"
    assert main(["report", "--db", str(db), "--output", str(out), "--quiet"]) == 0
    html = out.read_text(encoding="utf-8")
    section = re.sub(r"<[^>]+>", " ", html[html.index('id="changes"'):])
    days = 5 * 0.25
    assert re.search(r"pages with no change seen\s+6", section)
    assert f"below {LN20 / days:.3g} / day for every one" in section
    assert f"below {LN20 / (6 * days):.3g} / day" in section
