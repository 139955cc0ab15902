"""The revisit loop against the fixture web: conditional GETs, change detection vs truth,
budget, politeness, rate estimates at the statistical floor, gone pages, robots from the
store, kill -9 and resume, CLI errors."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from webcrawl.crawler.cli import main as cli_main
from webcrawl.crawler.cli.revisit import parse_budget
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.revisit.loop import (
    RevisitCrawler,
    RevisitSettings,
    RevisitStats,
    TokenBucket,
    body_digest,
)
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb, serve_in_thread
from webcrawl.storage.errors import ConfigError

WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]
MIN_DELAY = 0.004
DAY_SECONDS = 0.2
BUDGET = 80.0
# The uniform run stops after a count of revisits, not after a time: a busy machine
# makes it slower, never smaller (a 6 s run once gave 283 revisits of the 300 asserted).
MAX_VISITS = 400
_ETAG = re.compile(r'"(\d+)-(\d+)"')


def crawl_settings(**kw: Any) -> CrawlSettings:
    base: dict[str, Any] = {"resolve": ("*.test=127.0.0.1",), "scope_hosts": ("*.test",),
                            "concurrency": 16, "polite_min_delay": MIN_DELAY,
                            "polite_max_delay": MIN_DELAY}
    base.update(kw)
    return CrawlSettings.polite_off(**base)


def rows(db: Path, where: str = "1") -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute(
            "SELECT u.url, f.kind, f.outcome, f.status, f.changed, f.etag, f.started_at,"
            " f.ended_at, f.seq, f.digest FROM fetches f JOIN urls u ON u.id = f.url_id"
            f" WHERE {where} ORDER BY f.id").fetchall()


@dataclass
class Run:
    web: FixtureWeb
    port: int
    db: Path
    stats: RevisitStats
    rates: dict[str, float]          # the planner's final estimates, per URL
    audit: dict[str, Any]
    clock: tuple[float, float]       # (wall, sim day) read together


def crawl_and_revisit(tmp: Path, web: FixtureWeb, settings: RevisitSettings,
                      prepare: Any = None) -> Run:
    """Crawl ``web`` then revisit it; the server runs on the same event loop (as in the
    crawl tests) so its request log times are not skewed by thread switches."""
    db = tmp / "c.db"
    cs = crawl_settings()

    async def main() -> tuple[RevisitCrawler, RevisitStats, dict[str, Any], int,
                              tuple[float, float]]:
        async with FixtureServer(web, day_seconds=DAY_SECONDS) as server:
            clock = (time.time(), server.sim_days())
            await Crawler(db, [server.seed_url], cs).run()
            if prepare is not None:
                prepare(db, server)
            reviser = RevisitCrawler(db, settings, cs)
            revisit_stats = await reviser.run()
            audit = server.audit(max_concurrency=1, min_gap=MIN_DELAY)
            return reviser, revisit_stats, audit, server.port, clock

    reviser, revisit_stats, audit, port, clock = asyncio.run(main())
    assert reviser.planner is not None
    urls = {p.url_id: p.url for p in reviser._pages.values()}
    rates = dict(zip((urls[k] for k in reviser.planner.pages),  # type: ignore[index]
                     reviser.planner.rates().tolist(), strict=True))
    return Run(web, port, db, revisit_stats, rates, audit, clock)


@pytest.fixture(scope="module")
def uniform_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    # Mean change intervals 4-16 days; one revisit every ~0.7 s = 3.5 days: lambda*I ~ 0.2-0.9.
    web = FixtureWeb.build(FixtureConfig(pages=80, hosts=4, seed=7,
                                         change_mixture=((1.0, 4.0, 16.0),)))
    # No prior (pure likelihood), so the estimates can be held to the statistical floor.
    settings = RevisitSettings(policy="uniform", budget=BUDGET, max_visits=MAX_VISITS,
                               day_seconds=DAY_SECONDS, prior_changes=0.0, prior_days=1e-9)
    return crawl_and_revisit(tmp_path_factory.mktemp("uniform"), web, settings)


def page_of(web: FixtureWeb, port: int) -> dict[str, int]:
    out = {}
    for i, p in enumerate(web.truth_pages(port)):
        out[p.url] = i
        out[p.final_url] = i
    return out


def test_revisits_use_conditional_get_and_record_changes(uniform_run: Run) -> None:
    revisits = rows(uniform_run.db, "f.kind = 'revisit'")
    # Every revisit started is recorded: the count stop lets the last ones finish.
    assert len(revisits) == MAX_VISITS == uniform_run.stats.fetches
    assert uniform_run.stats.stopped == "max_visits"
    outcomes = {r[2] for r in revisits}
    assert outcomes == {"fetched", "not_modified"}
    for _, _, outcome, status, changed, etag, *_ in revisits:
        assert etag is not None
        if outcome == "not_modified":
            assert (status, changed) == (304, 0)
        else:
            assert status == 200 and changed in (0, 1)
    # A 200 that was not a change can only come from a failed conditional GET: none here.
    assert not [r for r in revisits if r[2] == "fetched" and r[4] == 0]
    assert uniform_run.stats.not_modified > 50 and uniform_run.stats.changed > 50


def test_changed_flags_match_the_fixture_truth(uniform_run: Run) -> None:
    web, port = uniform_run.web, uniform_run.port
    pages = page_of(web, port)
    wall0, sim0 = uniform_run.clock
    visits: dict[str, list[tuple[int, int]]] = {}
    checked = 0
    for url, kind, outcome, _, changed, etag, start, end, *_ in rows(uniform_run.db):
        if outcome not in ("fetched", "not_modified"):
            continue
        page, version = (int(g) for g in _ETAG.fullmatch(etag).groups())  # type: ignore[union-attr]
        assert page == pages[url]
        # The version served is the truth's version at some instant of the request.
        times = web.change_times(page, sim0 + (end - wall0) / DAY_SECONDS + 0.05)
        lo = np.searchsorted(times, sim0 + (start - wall0) / DAY_SECONDS - 0.05, side="right")
        hi = np.searchsorted(times, sim0 + (end - wall0) / DAY_SECONDS + 0.05, side="right")
        assert lo <= version <= hi
        history = visits.setdefault(url, [])
        if history:
            assert changed == int(version != history[-1][0]), (url, history, version)
            checked += 1
        else:
            assert kind == "crawl"
        history.append((version, changed))
    assert checked > 300


def test_budget_is_respected(uniform_run: Run) -> None:
    starts = np.sort(np.array([r[6] for r in rows(uniform_run.db, "f.kind = 'revisit'")]))
    # Fetch starts in any one-second window: at most R plus the token bucket's one token
    # and a little scheduling jitter.
    in_window = np.searchsorted(starts, starts + 1.0, side="left") - np.arange(starts.size)
    assert in_window.max() <= BUDGET + 2
    # How much of the budget the loop spends depends on the machine's speed, so it is
    # measured by benchmarks/bench_revisit.py, not asserted here.


def test_politeness_audit_is_clean(uniform_run: Run) -> None:
    report = uniform_run.audit
    assert report["violation_count"] == 0, report["violations"]
    assert all(h["max_concurrent"] <= 1 for h in report["hosts"].values())


def test_estimates_reach_the_statistical_floor(uniform_run: Run) -> None:
    web, port = uniform_run.web, uniform_run.port
    pages = page_of(web, port)
    wall0, sim0 = uniform_run.clock
    by_url: dict[str, list[float]] = {}
    for url, _, outcome, *_rest in rows(uniform_run.db):
        if outcome in ("fetched", "not_modified"):
            start, end = _rest[3], _rest[4]
            by_url.setdefault(url, []).append(sim0 + ((start + end) / 2 - wall0) / DAY_SECONDS)
    ratios = []
    for url, times in by_url.items():
        if len(times) < 5:
            continue
        lam = float(web.rates[pages[url]])
        t = np.diff(times)
        # Last-Modified turns each visit into a censored exponential observation: Fisher
        # information sum (1 - e^{-lam t}) / lam^2 (analysis.change.estimators.last_modified_rate).
        info = np.sum(-np.expm1(-lam * t)) / lam**2
        ratios.append(abs(uniform_run.rates[url] - lam) * np.sqrt(info))
    assert len(ratios) > 40
    # |error| / Cramer-Rao sd is |N(0,1)|-like for an efficient estimator: median 0.6745.
    assert np.median(ratios) <= 1.25 * stats.norm.ppf(0.75)


def test_gone_pages_robots_and_crawl_delay_from_the_store(tmp_path: Path) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=60, hosts=3, seed=2, death_fraction=0.3,
                                         lifetime_days=6.0, change_mixture=((1.0, 1.0, 5.0),)))
    delay = 0.03

    def prepare(db: Path, server: Any) -> None:
        # The stored robots.txt (not the server's) rules the revisits.
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE hosts SET robots_body = ?, crawl_delay = ?",
                         (f"User-agent: *\nDisallow: /a1/\nCrawl-delay: {delay}\n", delay))
        server.reset_audit()

    settings = RevisitSettings(policy="optimal", budget=200.0, duration=3.0,
                               day_seconds=0.1)
    run = crawl_and_revisit(tmp_path, web, settings, prepare)
    revisits = rows(run.db, "f.kind = 'revisit'")
    assert revisits
    assert not [r for r in revisits if "/a1/" in r[0]]
    assert run.stats.excluded > 0
    # Crawl-delay from the store spaces the requests of each host.
    audit = run.audit
    gaps = [h["min_gap"] for h in audit["hosts"].values() if h["min_gap"] is not None]
    assert gaps and min(gaps) >= 0.9 * delay
    # A page answering 410 is recorded once and never revisited after.
    gone = {r[0] for r in revisits if r[3] == 410}
    assert gone, "some pages die during the run"
    for url in gone:
        mine = [r for r in revisits if r[0] == url]
        assert mine[-1][3] == 410 and sum(r[3] == 410 for r in mine) == 1
        assert mine[-1][2] == "http_error" and mine[-1][4] is None
    assert run.stats.gone == len(gone)


def test_token_bucket_and_digest_rule() -> None:
    bucket = TokenBucket(10.0, 1.0, now=0.0)
    assert bucket.wait(0.0) == 0.0
    bucket.take(0.0)
    assert bucket.wait(0.0) == pytest.approx(0.1)
    assert bucket.wait(0.05) == pytest.approx(0.05)
    assert bucket.wait(10.0) == 0.0  # capacity 1: no burst saved up
    bucket.take(10.0)
    assert bucket.wait(10.0) > 0
    pattern = re.compile(rb"<time>[^<]*</time>")
    a, b = b"<p>x<time>1</time></p>", b"<p>x<time>2</time></p>"
    assert body_digest(a) != body_digest(b)
    assert body_digest(a, pattern) == body_digest(b, pattern) == body_digest(b"<p>x</p>")
    assert parse_budget("10/s") == parse_budget("600/min") == 10.0
    with pytest.raises(ConfigError):
        RevisitSettings(volatile="(")
    with pytest.raises(ConfigError):
        RevisitSettings(policy="optimal-age")
    with pytest.raises(ConfigError, match="max_visits"):
        RevisitSettings(max_visits=0)


@pytest.mark.parametrize(("argv", "message"), [
    (["--db", "{missing}", "--budget", "5"], "no crawl database"),
    (["--db", "{db}", "--budget", "0"], "--budget must be a positive"),
    (["--db", "{db}", "--budget=-3/s"], "--budget must be a positive"),
    (["--db", "{db}", "--budget", "5", "--policy", "fastest"], "unknown policy"),
], ids=["missing-db", "zero-budget", "negative-budget", "unknown-policy"])
def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 argv: list[str], message: str) -> None:
    db = tmp_path / "c.db"
    db.write_bytes(b"")
    args = [a.format(db=db, missing=tmp_path / "nope.db") for a in argv]
    assert cli_main(["revisit", *args]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_cli_refuses_a_zero_visit_count(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "c.db"
    db.write_bytes(b"")
    with pytest.raises(SystemExit) as exc:  # an argparse usage error: exit 2, one line
        cli_main(["revisit", "--db", str(db), "--budget", "5", "--max-visits", "0"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--max-visits" in err and "Traceback" not in err


def revisit_cmd(db: Path, *extra: str) -> list[str]:
    return [*WEBCRAWL, "revisit", "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "--delay-factor", "0", "--min-delay", "0", "--max-delay", "0", "--quiet", *extra]


def revisit_count(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute(
                "SELECT count(*) FROM fetches WHERE kind = 'revisit'").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.timeout(300)  # four process start-ups: over 20 s each at a load average of 25
def test_kill_and_resume_repeats_no_completed_fetch(tmp_path: Path) -> None:
    web = FixtureWeb.build(FixtureConfig(pages=60, hosts=4, seed=4))
    db = tmp_path / "c.db"
    budget = 40.0
    with serve_in_thread(web, day_seconds=DAY_SECONDS) as server:
        asyncio.run(Crawler(db, [server.seed_url], crawl_settings(polite_min_delay=0.0,
                                                                   polite_max_delay=0.0)).run())
        n_pages = len(rows(db, "f.kind = 'crawl' AND f.outcome = 'fetched'"))
        cmd = revisit_cmd(db, "--budget", f"{budget}/s", "--policy", "uniform",
                          "--day-seconds", str(DAY_SECONDS))
        # No --duration: the run goes on until the kill, however slow its start-up (imports
        # took over 20 s at a load average of 25); the deadline is a hang guard only.
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while (revisit_count(db) < n_pages + 10 and proc.poll() is None
               and time.monotonic() < deadline):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)
        before = revisit_count(db)
        assert before >= n_pages + 10
        done = subprocess.run([*cmd, "--duration", "2.5"], stderr=subprocess.PIPE, timeout=120)
        assert done.returncode == 0, done.stderr.decode()
        assert revisit_count(db) > before
        # Ctrl-C: a clean stop, exit 130 and one line, --quiet or not
        before = revisit_count(db)
        stopped = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while revisit_count(db) == before and time.monotonic() < deadline:
            time.sleep(0.02)
        stopped.send_signal(signal.SIGINT)
        _, err = stopped.communicate(timeout=120)
        assert stopped.returncode == 130, err
        assert err.splitlines() == [f"webcrawl: revisit stopped; run it again to continue ({db})"]
    assert revisit_count(db) > before
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # Uniform: every page is due 1/f = N / R seconds after its last visit's midpoint, in
    # this run and the resumed one alike, so consecutive visits of a page (including the
    # pair across the kill) start at least N / R seconds after the earlier one's midpoint.
    interval = n_pages / budget
    last: dict[str, float] = {}
    pairs = 0
    for url, _, outcome, _, _, _, start, end, *_ in rows(db):
        if outcome not in ("fetched", "not_modified"):
            continue
        if url in last:
            assert start - last[url] >= interval - 0.01, (url, start - last[url], interval)
            pairs += 1
        last[url] = (start + end) / 2
    assert pairs > n_pages
    seqs = [r[8] for r in rows(db, "f.kind = 'revisit'")]
    assert len(seqs) == len(set(seqs))
