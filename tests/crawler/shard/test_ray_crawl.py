"""``--ray``: the shard protocol on Ray actors, on a local Ray head bound to loopback.

Skipped when Ray (the ``webcrawl[cluster]`` extra) is not installed.  One head per
module (starting one takes 5-15 s on a loaded 2-core machine), two actors per crawl,
each its own process; the fixture web's truth is the oracle.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from miniweb import read_db
from test_fixture_crawl import expected_edges, page_edges
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.crawler.shard import ShardDownloader
from webcrawl.crawler.shard.ray_transport import RayTransport, spawn_actor
from webcrawl.crawler.shard.transport import Transport
from webcrawl.fixtures import FixtureConfig, FixtureServer, FixtureWeb

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def ray_head() -> Iterator[str]:
    """A Ray head on 127.0.0.1 started by this process (and stopped with it): its address."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # The actors' processes import this source tree.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False, _node_ip_address="127.0.0.1")
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()


def settings(**kw: object) -> CrawlSettings:
    return CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                    concurrency=32, workers=2, **kw)


def web() -> FixtureWeb:
    return FixtureWeb.build(FixtureConfig(pages=1500, hosts=12, seed=3))


def truth(w: FixtureWeb, port: int) -> tuple[set[str], set[tuple[str, str]]]:
    want = expected_edges(w, port)
    assert len(want) > 2000
    return {p.url for p in w.truth_pages(port)}, want


class Spawned:
    """``spawn_actor``, remembering every actor's process id."""

    def __init__(self) -> None:
        self.pids: dict[tuple[int, int], int] = {}

    async def __call__(self, worker: int, generation: int) -> Transport:
        transport = await spawn_actor(worker, generation)
        assert isinstance(transport, RayTransport)
        self.pids[worker, generation] = await transport.actor.pid.remote()
        return transport


async def test_two_ray_actors_give_the_truth(ray_head: str, tmp_path: Path) -> None:
    w = web()
    db = tmp_path / "c.db"
    spawn = Spawned()
    async with FixtureServer(w) as server:
        shards = ShardDownloader(settings(), [server.seed_url], spawn=spawn)
        crawler = Crawler(db, [server.seed_url], settings(),
                          downloader=lambda *_: shards)
        stats = await crawler.run()
        report = server.audit(max_concurrency=1)
    page_urls, want = truth(w, server.port)
    assert page_edges(db, page_urls) == want
    assert report["violation_count"] == 0, report["violations"]
    assert stats.stopped == "done"
    assert shards.pool.restarts == 0
    # Two actors, each a process of its own (neither is this one), both with hosts.
    assert set(spawn.pids) == {(0, 0), (1, 0)}
    assert len(set(spawn.pids.values()) | {os.getpid()}) == 3
    assert set(shards.assignment.values()) == {0, 1}


async def test_ray_actors_sketch_and_the_coordinator_finds_the_planted_pairs(
        ray_head: str, tmp_path: Path) -> None:
    """The near-duplicate test on Ray: the actors sketch each page's text, the sketch
    travels in the page's answer, the coordinator's one state groups the pages; the
    groups are the fixture's planted pairs, nothing else."""
    w = FixtureWeb.build(FixtureConfig(pages=400, hosts=4, seed=3, near_duplicate_pairs=36,
                                       similar_pages=40, robots_disallow_fraction=0.0))
    db = tmp_path / "c.db"
    near = settings(near_duplicates=True, robots_obey=False)
    async with FixtureServer(w) as server:
        shards = ShardDownloader(near, [server.seed_url], spawn=Spawned())
        stats = await Crawler(db, [server.seed_url], near, downloader=lambda *_: shards).run()
        port = server.port
    assert stats.stopped == "done"
    with sqlite3.connect(db) as conn:
        found = {frozenset(pair) for pair in conn.execute(
            "SELECT u.url, l.url FROM urls u JOIN urls l ON l.id = u.near_of")}
        (sketched,) = conn.execute("SELECT count(*) FROM fetches WHERE sketch IS NOT NULL"
                                   ).fetchone()
    planted = {frozenset((t.url, t.source_url)) for t in w.truth_near(port)
               if t.source_url and t.url != t.source_url}
    assert len(planted) == 36 and found == planted
    assert sketched > 300


class KillingSpawn(Spawned):
    """Kills worker 0's first actor (SIGKILL) once it has answered ``after`` batches."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after
        self.killed = False

    async def __call__(self, worker: int, generation: int) -> Transport:
        transport = await super().__call__(worker, generation)
        if worker != 0 or generation != 0:
            return transport
        assert isinstance(transport, RayTransport)
        receive = transport.receive
        seen = 0

        async def counting() -> list[object] | None:
            nonlocal seen
            batch = await receive()
            seen += batch is not None
            if seen == self.after and not self.killed:
                self.killed = True
                os.kill(self.pids[0, 0], signal.SIGKILL)
            return batch  # type: ignore[return-value]

        transport.receive = counting  # type: ignore[method-assign]
        return transport


@pytest.mark.parametrize("after", [1, 25])
async def test_lost_actor_hosts_resume_on_a_new_one(ray_head: str, tmp_path: Path,
                                                    after: int) -> None:
    w = web()
    db = tmp_path / "c.db"
    spawn = KillingSpawn(after)
    async with FixtureServer(w) as server:
        shards = ShardDownloader(settings(), [server.seed_url], spawn=spawn)
        crawler = Crawler(db, [server.seed_url], settings(),
                          downloader=lambda *_: shards)
        stats = await crawler.run()
    page_urls, want = truth(w, server.port)
    assert spawn.killed
    assert shards.pool.restarts == 1
    # Worker 0's hosts went to a new actor process, which finished them.
    assert (0, 1) in spawn.pids and spawn.pids[0, 1] != spawn.pids[0, 0]
    assert stats.stopped == "done"
    assert page_edges(db, page_urls) == want


async def run_cli(*argv: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "webcrawl.crawler.cli", *argv, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, err.decode()


async def test_cli_ray_crawl_and_resume(ray_head: str, tmp_path: Path) -> None:
    """``crawl --ray`` from another process joins the head; a page-limited crawl resumed
    with ``--ray`` (the coordinator's state is the database) ends on the truth."""
    w = web()
    db = tmp_path / "c.db"
    async with FixtureServer(w) as server:
        common = ["--ray", ray_head, "--workers", "2", "--quiet"]
        code, err = await run_cli(
            "crawl", server.seed_url, "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "--allow-host", "*.test", "--min-delay", "0", "--delay-factor", "0",
            "--max-delay", "0", "--max-pages", "300", *common)
        assert code == 0, err
        fetched = {row[0] for row in read_db(db)["fetches"]}
        assert 0 < len(fetched) < 1000
        code, err = await run_cli("crawl", "--db", str(db), "--resume", "--max-pages", "100000",
                                  *common)
        assert code == 0, err
    page_urls, want = truth(w, server.port)
    assert page_edges(db, page_urls) == want


async def test_cli_unreachable_head_is_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, err = await run_cli("crawl", "http://a.test/", "--db", str(tmp_path / "c.db"),
                              "--ray", f"127.0.0.1:{port}", "--quiet")
    assert code == 1
    assert err.strip().splitlines() == [
        f"webcrawl: error: cannot reach the Ray head at 127.0.0.1:{port}: Connection refused"]
