"""``webcrawl compare --virtual --timed`` with a transfer-time model, on a crawl database
recorded as a loopback crawl records one: fetches of a few milliseconds, real body sizes."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from webcrawl.crawler.cli import main
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

SMALL_HOSTS, SMALL_PAGES, LARGE_PAGES = 60, 3, 80


def _web() -> tuple[list[int], dict[int, list[int]]]:
    """One large host behind many small ones: the seed (the large host's root) links
    to every small root first, then to its own pages; a small root links to its pages."""
    hosts = [0]
    out: dict[int, list[int]] = {0: []}
    node = 1
    for h in range(1, SMALL_HOSTS + 1):
        out[0].append(node)
        out[node] = list(range(node + 1, node + SMALL_PAGES))
        hosts += [h] * SMALL_PAGES
        node += SMALL_PAGES
    out[0] += list(range(node, node + LARGE_PAGES - 1))
    hosts += [0] * (LARGE_PAGES - 1)
    return hosts, out


def write_loopback_crawl(path, size_scale: float = 1.0):
    """A bfs crawl of :func:`_web`, each fetch 1-3 ms, bodies of 5-20 kB."""
    hosts, out = _web()
    n = len(hosts)
    rng = np.random.default_rng(0)
    sizes = (rng.integers(5_000, 20_000, n) * size_scale).astype(int)
    took = rng.integers(1, 4, n) / 1000.0

    async def write():
        async with await CrawlStore.open(path) as store:
            for h in range(SMALL_HOSTS + 1):
                store.add_host(HostRow(id=h, name=f"site{h}.test"))
            order, seen, queue = [], {0: -1}, [0]
            while queue:
                u = queue.pop(0)
                order.append(u)
                for v in out.get(u, []):
                    if v not in seen:
                        seen[v] = len(order) - 1
                        queue.append(v)
            for v, disc in seen.items():
                store.add_url(UrlRow(id=v, url=f"http://site{hosts[v]}.test/p{v}.html",
                                     host_id=hosts[v], depth=0, discovered_seq=disc))
            clock = 1000.0
            for seq, u in enumerate(order):
                store.add_fetch(FetchRecord(url_id=u, seq=seq, started_at=clock,
                                            ended_at=clock + took[u], outcome=Outcome.FETCHED,
                                            status=200, size=int(sizes[u]), strategy="bfs"))
                clock += took[u]
                store.add_links(u, out.get(u, []))
                store.set_outcome(u, Outcome.FETCHED, seq)

    asyncio.run(write())
    return path


@pytest.fixture(scope="module")
def loopback_db(tmp_path_factory):
    return write_loopback_crawl(tmp_path_factory.mktemp("loop") / "loop.db")


def _compare(db, capsys, *extra):
    code = main(["compare", "--db", str(db), "--virtual", "--timed", "--json",
                 "--checkpoints", "0", "--strategies", "bfs,larger-sites-first",
                 "--connections", "2", "--min-delay", "1", "--delay-factor", "0", *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


BANDWIDTH = ["--transfer", "bandwidth", "--bandwidth", "20000", "--latency", "0.1"]


def test_a_size_and_bandwidth_model_makes_the_duration_depend_on_the_ordering(
        loopback_db, capsys):
    recorded = _compare(loopback_db, capsys)
    timed = _compare(loopback_db, capsys, *BANDWIDTH)
    seconds = {k: timed["clock"][k]["seconds"] for k in ("bfs", "larger-sites-first")}
    # breadth-first spends both connections on the 60 small roots while the large
    # host waits; larger-sites-first keeps it busy from the start
    assert seconds["bfs"] > seconds["larger-sites-first"] + 10
    # no schedule beats the large host's chain: 80 fetches (>= 0.1 + 5000 / 20000 s)
    # and 79 waits of 1 s
    assert seconds["larger-sites-first"] >= 79 * 1.0 + 80 * 0.35 - 1e-6
    # the recorded milliseconds: both orderings end with the large host's waits
    rec = [recorded["clock"][k]["seconds"] for k in ("bfs", "larger-sites-first")]
    assert max(rec) < 79 * 1.0 + 80 * 0.01 < seconds["larger-sites-first"]
    # a per-time capture curve per ordering, from 0 to 1
    for k in ("bfs", "larger-sites-first"):
        curve = timed["clock"][k]["capture"]
        assert curve == sorted(curve) and curve[-1] == pytest.approx(1.0)


def test_durations_follow_the_recorded_sizes(tmp_path, capsys):
    small = _compare(write_loopback_crawl(tmp_path / "a.db"), capsys, *BANDWIDTH,
                     "--min-delay", "0")
    large = _compare(write_loopback_crawl(tmp_path / "b.db", size_scale=3.0), capsys,
                     *BANDWIDTH, "--min-delay", "0")
    assert large["clock"]["bfs"]["seconds"] > 2 * small["clock"]["bfs"]["seconds"]


def test_every_output_names_the_model(loopback_db, capsys, tmp_path):
    data = _compare(loopback_db, capsys, *BANDWIDTH, "--bandwidth-spread", "0.5",
                    "--transfer-seed", "4", "--crawler-time", "0.02")
    transfer = data["timing"]["transfer"]
    assert transfer["kind"] == "bandwidth" and transfer["bandwidth"] == 20000
    assert transfer["bandwidth_spread"] == 0.5 and transfer["seed"] == 4
    assert transfer["crawler_time"] == 0.02
    described = transfer["description"]
    assert "median 20,000 B/s, sigma 0.5" in described and "seed 4" in described
    assert described in data["method"]
    assert data["timing"]["politeness"].startswith("2 connections")
    code = main(["compare", "--db", str(loopback_db), "--virtual", "--timed",
                 "--checkpoints", "0", "--strategies", "bfs", *BANDWIDTH,
                 "--out", str(tmp_path / "out")])
    text = capsys.readouterr().out
    assert code == 0
    assert "transfer model: latency + size / bandwidth per site" in text
    assert (tmp_path / "out" / "capture_over_time.png").is_file()
    written = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert written["timing"]["transfer"]["kind"] == "bandwidth"
