"""A crawl under ``memory_limit`` (crawler.budget): it spills, keeps its order, resumes.

One fixture web of 40 hosts whose pages link across hosts, all in scope, crawled with
one request at a time and no politeness delay, so the fetch order is the ordering's
alone: an unlimited crawl gives the reference order and the peak of its crawl state.
A crawl limited to half of that peak must spill (its state stays under the limit),
fetch the same pages in the same order, and, killed with SIGKILL at several points and
resumed, lose nothing committed, take no URL twice and end with the same links and
outcomes, in the unlimited crawl's order.  A limit the compact state cannot fit stops
the crawl cleanly with one line, and a resume with a larger limit finishes it.  On a web
of many hosts, the limited crawl's peak resident memory stays under its start-up size
plus the limit plus ``budget.OVERHEAD``, at least half the limit under the unlimited crawl's.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import webcrawl.crawler.budget as budget_module
import webcrawl.crawler.overflow as overflow_module
from miniweb import read_db
from test_crash_safety import check_one_take_per_url, completed_fetches, integrity_ok, kill_at
from test_stop_drain import _Site
from webcrawl.crawler.budget import MemoryBudget
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.frontier import Frontier
from webcrawl.crawler.registry import CrawlRegistry
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

pytestmark = pytest.mark.timeout(600)  # a hang guard, never a measurement (slow under load)

WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]
#: How far past the limit the state may get between two checks: one check interval of
#: new URLs, each at most a recent fingerprint (100 B), its array slots (41 B) and a
#: head entry (120 B).
BETWEEN_CHECKS = budget_module.CHECK_EVERY * (100 + 41 + 120)


def limited(unlimited: dict[str, Any]) -> int:
    """The limit of the limited crawls: half the unlimited crawl's peak state (its
    per-URL tables alone are about a third of it)."""
    return int(unlimited["peak"]) // 2


def settings(limit: int | None) -> CrawlSettings:
    return CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                    concurrency=1, memory_limit=limit)


def cli(seed: str, db: Path, limit: int) -> list[str]:
    return [*WEBCRAWL, "crawl", seed, "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "--allow-host", "*.test", "--delay-factor", "0", "--min-delay", "0",
            "--max-delay", "0", "--concurrency", "1", "--memory-limit", str(limit),
            "--quiet"]


def fetch_order(db: Path) -> list[str]:
    """The URLs in the order of their first fetch."""
    order: dict[str, None] = {}
    for url, *_ in read_db(db)["fetches"]:
        order.setdefault(url)
    return list(order)


@pytest.fixture(scope="module")
def served() -> Iterator[Any]:
    web = FixtureWeb.build(FixtureConfig(pages=3000, hosts=40, seed=5))
    with serve_in_thread(web) as server:
        yield server


@pytest.fixture(scope="module")
def unlimited(served: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("unlimited") / "c.db"
    crawler = Crawler(db, [served.seed_url], settings(None))
    asyncio.run(crawler.run())
    assert crawler.stats.stopped == "done" and crawler.memory_full is None
    data = read_db(db)
    data["order"] = fetch_order(db)
    data["peak"] = crawler.stats.state_bytes
    assert len(data["order"]) > 2000 and len(data["hosts"]) == 40
    return data


def test_a_limited_crawl_spills_and_fetches_in_the_same_order(
        served: Any, unlimited: dict[str, Any], tmp_path: Path) -> None:
    limit = limited(unlimited)
    crawler = Crawler(tmp_path / "c.db", [served.seed_url], settings(limit))
    asyncio.run(crawler.run())
    assert crawler.memory_full is None and crawler.stats.stopped == "done"
    assert crawler.stats.state_bytes <= limit + BETWEEN_CHECKS < unlimited["peak"]
    assert fetch_order(tmp_path / "c.db") == unlimited["order"]
    assert read_db(tmp_path / "c.db")["edges"] == unlimited["edges"]


def test_kill_9_of_a_spilled_crawl_resumes_exactly(
        served: Any, unlimited: dict[str, Any], tmp_path: Path) -> None:
    """Killed with SIGKILL at three points and resumed under the limit: what was
    committed stays committed unchanged, no URL is taken twice, and the finished crawl
    fetched the unlimited crawl's pages in its order, with its links and outcomes."""
    db = tmp_path / "c.db"
    cmd = cli(served.seed_url, db, limited(unlimited))
    points = sorted(random.Random(34).sample(range(100, 2000), 3))
    committed: dict[str, set[tuple[int, int]]] = {}
    for i, fetches in enumerate(points):
        kill_at(cmd if i == 0 else [*cmd, "--resume"], db, fetches=fetches)
        integrity_ok(db)
        check_one_take_per_url(db)
        now = completed_fetches(db)
        assert {u: now[u] for u in committed} == committed
        committed = now
    done = subprocess.run([*cmd, "--resume"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    data = read_db(db)
    assert fetch_order(db) == unlimited["order"]
    assert data["edges"] == unlimited["edges"]
    assert data["outcomes"] == unlimited["outcomes"]
    after = completed_fetches(db)
    assert {u: after[u] for u in committed} == committed
    check_one_take_per_url(db)


def test_a_limit_the_state_cannot_fit_stops_cleanly_then_resumes(
        served: Any, unlimited: dict[str, Any], tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    small = subprocess.run(cli(served.seed_url, db, 40_000), capture_output=True,
                           timeout=120)
    err = small.stderr.decode()
    assert small.returncode == 1, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("webcrawl: error:")]
    assert len(lines) == 1 and "memory limit 39.1K reached" in lines[0], err
    assert "--resume --memory-limit" in lines[0]
    integrity_ok(db)
    stopped_at = len(fetch_order(db))
    assert 0 < stopped_at < len(unlimited["order"])
    larger = subprocess.run([*cli(served.seed_url, db, 2**30), "--resume"],
                            capture_output=True, timeout=120)
    assert larger.returncode == 0, larger.stderr.decode()
    assert fetch_order(db) == unlimited["order"]
    assert read_db(db)["outcomes"] == unlimited["outcomes"]


def _long_queues(spill_dir: Path | None = None) -> tuple[CrawlRegistry, Frontier]:
    registry = CrawlRegistry()
    frontier = Frontier(record_rank=False, spill_dir=spill_dir)
    for i in range(4000):
        new = registry.add(f"http://h{i % 8}.test/p{i}", 1)
        frontier.add(new.url_id, new.host_id, float(i % 5))
    registry.spill()
    return registry, frontier


def test_the_budget_shrinks_heads_before_it_gives_up() -> None:
    """Hosts with long queues: over the limit, heads halve down to one URL each (their
    URLs spill to the overflows); only a state that still does not fit is refused."""
    registry, frontier = _long_queues()
    floor_registry, floor_frontier = _long_queues()
    floor_frontier.shrink_heads(1)  # the least the state can hold
    floor = MemoryBudget(1, floor_registry, floor_frontier).used()
    budget = MemoryBudget(floor, registry, frontier)
    assert frontier.head == 64 and budget.used() > floor + 120 * 8 * 32
    assert budget.check() is None
    assert frontier.head == 1 and budget.used() == floor
    assert max(frontier.host_size(h) for h in range(8)) == 1
    refused = MemoryBudget(floor - 1, registry, frontier).check()
    assert refused is not None and refused.startswith("memory limit ")
    assert floor_frontier.priorities() == frontier.priorities()


def test_over_the_limit_overflows_go_to_the_spill_file(tmp_path: Path) -> None:
    """With a spill file, the budget writes the hosts' overflows out first: each host
    then holds at most a tight tail of ids in memory, and nothing is reordered."""
    registry, frontier = _long_queues(tmp_path)
    _, plain = _long_queues()
    frontier.shrink_heads(4)
    plain.shrink_heads(4)
    before = MemoryBudget(1, registry, frontier).used()
    assert frontier._file is not None and frontier._file.live == 0  # 496 ids a host
    budget = MemoryBudget(before - 1, registry, frontier)
    assert budget.check() is None and frontier.head == 4
    assert frontier._file.live == 8 * (500 - 4)
    assert budget.used() <= before - 8 * (500 - 4) * 4 + 8 * overflow_module.SEGMENT_BYTES
    assert frontier.priorities() == plain.priorities()
    now = 0.0
    taken, expected = [], []
    for f, out in ((frontier, taken), (plain, expected)):
        while (host := f.pop_ready(now)) is not None:
            got = f.take(host)
            assert got is not None
            out.append(got.url_id)
            f.release(host, now)
    assert taken == expected and len(taken) == 4000


# -- resident memory ------------------------------------------------------------------
#: A web of many hosts whose every page links to LINKS new URLs spread over HOSTS hosts,
#: crawled for PAGES pages: PAGES * LINKS discovered URLs, fewer than a head's worth a
#: host, so an unlimited crawl keeps every one in a host's in-memory heap.
LINKS, HOSTS, PAGES = 2000, 10_000, 360
MiB = 1 << 20


class _Wide(_Site):
    """Every page links to LINKS new URLs over HOSTS hosts; robots.txt is 404."""

    def do_GET(self) -> None:
        if self.path == "/robots.txt":
            self._send(404, b"")
            return
        port = self.server.server_address[1]
        # A short name of this page, so URLs stay short however deep the crawl goes; all
        # digits, so every URL of a host has one path shape (the trap guard counts
        # URLs per shape, an entry a shape: crawler.traps).
        name = int.from_bytes(hashlib.blake2b(f"{self.headers.get('Host')}{self.path}"
                                              .encode(), digest_size=7).digest(), "big")
        links = "".join(f'<a href="http://h{(name + k) % HOSTS}.test:{port}/{name}-{k}">x</a>'
                        for k in range(LINKS))
        self._send(200, f"<html><body>{links}</body></html>".encode())


@pytest.fixture(scope="module")
def wide() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Wide)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://h0.test:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def wide_cmd(seed: str, db: Path, pages: int, limit: int | None) -> list[str]:
    """The CLI arguments of the wide web's crawl: one request at a time, no rank index
    (it cannot spill)."""
    return ["crawl", seed, "--db", str(db), "--resolve", "*.test=127.0.0.1",
            "--allow-host", "*.test", "--delay-factor", "0", "--min-delay", "0",
            "--max-delay", "0", "--concurrency", "1", "--max-pages", str(pages),
            "--max-links-per-page", str(LINKS), "--set", "frontier_record_rank=false",
            "--quiet", *([] if limit is None else ["--memory-limit", str(limit)])]


#: Runs the CLI, then writes the process's own peak resident memory (``VmHWM``, KiB) to
#: the file named by its first argument.  Not ``ru_maxrss`` from ``wait4``: Linux keeps
#: the largest of a process's memory maps across ``exec``, so a child forked from a test
#: runner that has grown to 959 MiB reports 959 MiB whatever it holds itself (seen in the
#: full suite); ``VmHWM`` is the high-water mark of the map ``exec`` created.
_PEAK = (
    "import re, sys\n"
    "from webcrawl.crawler.cli import main\n"
    "out = sys.argv.pop(1)\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    with open('/proc/self/status') as status:\n"
    "        peak = re.search(r'VmHWM:\\s+(\\d+) kB', status.read())\n"
    "    with open(out, 'w') as f:\n"
    "        f.write(peak.group(1) if peak else '')\n"
    "sys.exit(code)\n"
)


def peak_rss(cmd: list[str], tmp_path: Path) -> int:
    """Run a crawl (``cmd`` without the ``WEBCRAWL`` prefix) to its end; its peak resident
    memory, bytes."""
    out = tmp_path / "peak"
    proc = subprocess.run([sys.executable, "-c", _PEAK, str(out), *cmd],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.returncode == 0, proc.stderr.decode()
    return int(out.read_text()) * 1024


@pytest.mark.timeout(900)
def test_resident_memory_stays_under_the_limit_plus_the_stated_overhead(
        wide: str, tmp_path: Path) -> None:
    """A crawl of PAGES * LINKS discovered URLs: limited, its peak resident memory stays
    under its start-up size plus the limit plus :data:`budget.OVERHEAD`, while the same
    crawl unlimited holds at least half the limit more (so the bound is not met by a
    crawl that does not spill); both fetch the same pages in the same order."""
    limit = 72 * MiB
    start = peak_rss(wide_cmd(wide, tmp_path / "one.db", 1, None), tmp_path)  # start-up
    bound = start + limit + budget_module.OVERHEAD
    unlimited = peak_rss(wide_cmd(wide, tmp_path / "unlimited.db", PAGES, None), tmp_path)
    spilled = peak_rss(wide_cmd(wide, tmp_path / "limited.db", PAGES, limit), tmp_path)
    figures = (start / MiB, spilled / MiB, unlimited / MiB)
    assert spilled <= bound, figures
    # The limit binds: spilling kept at least half the limit's worth of memory that the
    # unlimited crawl holds (compared between the two crawls, not against ``start``: the
    # start-up crawl's peak varied by 40 MiB on a busy machine, which only loosens the
    # bound above but would decide a comparison of ``unlimited`` with it).
    assert unlimited - spilled >= limit // 2, figures
    order = fetch_order(tmp_path / "limited.db")
    assert len(order) == PAGES and order == fetch_order(tmp_path / "unlimited.db")
