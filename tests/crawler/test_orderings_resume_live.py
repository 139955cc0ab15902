"""Every new ordering a live crawl can run, crawled for real: in its order, politely, and
resumed after kill -9 in that same order.

``larger-sites-first`` (the frontier orders hosts by pending URLs) and ``historical``
(the strategy is given each id's URL) need the crawl engine's part; ``batch-pagerank``
and ``partial-pagerank`` need a resume that replays their recomputations where the
crawl made them.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_crash_safety import fetch_count, integrity_ok
from webcrawl.analysis.graph.loader import load_graph
from webcrawl.analysis.ordering.strategies import strategy_spec
from webcrawl.analysis.ordering.virtual import virtual_crawl
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb, serve_in_thread

pytestmark = pytest.mark.timeout(600)  # a hang guard, never a measurement (slow under load)

WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]
CONFIG = FixtureConfig(pages=300, hosts=6, seed=21, robots_disallow_fraction=0.0)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A previous crawl of another fixture web (other pages, other PageRank)."""
    db = tmp_path_factory.mktemp("history") / "old.db"
    web = FixtureWeb.build(FixtureConfig(pages=200, hosts=6, seed=3))
    with serve_in_thread(web) as server:
        subprocess.run([*WEBCRAWL, "crawl", server.seed_url, "--db", str(db), "--resolve",
                        "*.test=127.0.0.1", "--allow-host", "*.test", "--min-delay", "0",
                        "--delay-factor", "0", "--max-delay", "0", "--quiet"],
                       check=True, timeout=60)
    yield db


def _specs(history: Path) -> list[str]:
    return ["larger-sites-first", strategy_spec("historical", {"history": str(history)}),
            "batch-pagerank?every=20", "partial-pagerank?every=15"]


def _urls_in_order(db: Path) -> list[str]:
    graph = load_graph(db, graph="all", drop_self_loops=False)
    return [graph.urls[i] for i in graph.fetch_order]


@pytest.mark.parametrize("which", range(4), ids=["lsf", "historical", "batch", "partial"])
async def test_live_order_is_the_virtual_replays(which: int, history: Path,
                                                 tmp_path: Path) -> None:
    spec = _specs(history)[which]
    web = FixtureWeb.build(CONFIG)
    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                        concurrency=1, frontier_strategy=spec)
    db = tmp_path / "c.db"
    async with FixtureServer(web) as server:
        stats = await Crawler(db, [server.seed_url], settings).run()
    assert stats.stopped == "done"
    graph = load_graph(db, graph="all", drop_self_loops=False)
    assert graph.fetch_order.size > 250
    assert np.array_equal(virtual_crawl(graph, spec).order, graph.fetch_order)


@pytest.mark.parametrize("which", range(4), ids=["lsf", "historical", "batch", "partial"])
async def test_live_orderings_keep_politeness(which: int, history: Path,
                                             tmp_path: Path) -> None:
    spec = _specs(history)[which]
    web = FixtureWeb.build(FixtureConfig(pages=120, hosts=6, seed=4))
    delay = 0.03
    settings = CrawlSettings(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                             polite_delay_factor=2.0, polite_min_delay=delay,
                             polite_max_delay=0.2, frontier_strategy=spec)
    async with FixtureServer(web) as server:
        await Crawler(tmp_path / "c.db", [server.seed_url], settings).run()
        report = server.audit(max_concurrency=1, min_gap=delay)
    assert report["violation_count"] == 0, report["violations"]
    assert len(report["hosts"]) == 6


def _kill_after(cmd: list[str], db: Path, fetches: int) -> None:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300  # a safety net: kill points took minutes under load
    while proc.poll() is None and time.monotonic() < deadline and fetch_count(db) < fetches:
        time.sleep(0.005)
    assert proc.poll() is None, "the crawl ended before the kill point"
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert b"Traceback" not in err, err.decode()


@pytest.fixture(scope="module")
def served() -> Iterator[Any]:
    with serve_in_thread(FixtureWeb.build(CONFIG)) as server:
        yield server


@pytest.mark.parametrize("which", range(4), ids=["lsf", "historical", "batch", "partial"])
def test_kill_9_then_resume_keeps_the_order(which: int, history: Path, served: Any,
                                            tmp_path: Path) -> None:
    spec = _specs(history)[which]
    name, _, query = spec.partition("?")
    opts = [x for pair in query.split("&") if pair for x in ("--strategy-opt", pair)]
    if name == "historical":
        opts = ["--history", str(history)]

    def cmd(db: Path, *extra: str) -> list[str]:
        return [*WEBCRAWL, "crawl", served.seed_url, "--db", str(db), "--resolve",
                "*.test=127.0.0.1", "--allow-host", "*.test", "--min-delay", "0",
                "--delay-factor", "0", "--max-delay", "0", "--concurrency", "1",
                "--strategy", name, *opts, "--quiet", *extra]

    whole = tmp_path / "whole.db"
    subprocess.run(cmd(whole), check=True, timeout=60)
    killed = tmp_path / "killed.db"
    for point in (40, 150):
        _kill_after(cmd(killed) if point == 40 else cmd(killed, "--resume"), killed, point)
        integrity_ok(killed)
    done = subprocess.run(cmd(killed, "--resume"), timeout=60, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    assert _urls_in_order(killed) == _urls_in_order(whole)
