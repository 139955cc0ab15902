"""The frontier: best-first among ready hosts, politeness times, lazy updates, exact ranks."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import webcrawl.crawler.frontier as frontier_module
import webcrawl.crawler.overflow as overflow_module
from miniweb import MiniWeb, html, read_db
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.frontier import Frontier


def brute_rank(prio: dict[int, float], url_id: int) -> int:
    key = (-prio[url_id], url_id)
    return sum(1 for u, p in prio.items() if (-p, u) < key)


def test_takes_best_url_among_ready_hosts() -> None:
    f = Frontier()
    f.add(0, host_id=0, priority=1.0)
    f.add(1, host_id=0, priority=5.0)
    f.add(2, host_id=1, priority=3.0)
    f.add(3, host_id=2, priority=5.0)   # ties with url 1: lower id first
    order = []
    while (host := f.pop_ready(now=0.0)) is not None:
        taken = f.take(host)
        assert taken is not None
        order.append((taken.url_id, taken.rank))
        f.release(host, ready_at=0.0)
    assert order == [(1, 0), (3, 0), (2, 0), (0, 0)]
    assert len(f) == 0


def test_busy_and_waiting_hosts_are_skipped() -> None:
    f = Frontier()
    f.add(0, 0, 9.0)
    f.add(1, 0, 8.0)
    f.add(2, 1, 1.0)
    h = f.pop_ready(0.0)
    assert h == 0 and f.take(0).url_id == 0  # type: ignore[union-attr]
    # host 0 is busy: its url 1 (rank 0 overall) must wait; host 1 is served
    h = f.pop_ready(0.0)
    assert h == 1
    taken = f.take(1)
    assert taken is not None and taken.url_id == 2 and taken.rank == 1
    f.release(0, ready_at=10.0)
    f.release(1, ready_at=0.0)
    assert f.pop_ready(5.0) is None
    assert f.next_wakeup() == 10.0
    assert f.pop_ready(10.0) == 0


def test_priority_updates_reorder_lazily() -> None:
    f = Frontier()
    for i in range(5):
        f.add(i, i % 2, 0.0)
    f.update(4, 10.0)
    f.update(1, 5.0)
    f.update(1, -1.0)   # superseded twice: only the last priority counts
    f.update(99, 3.0)   # unknown (or already taken): ignored
    order = []
    while (host := f.pop_ready(0.0)) is not None:
        taken = f.take(host)
        assert taken is not None
        order.append(taken.url_id)
        f.release(host, 0.0)
    assert order == [4, 0, 2, 3, 1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranks_are_exact(seed: int) -> None:
    rng = random.Random(seed)
    f = Frontier()
    prio: dict[int, float] = {}
    next_id = 0
    hosts = 7
    for _step in range(3000):
        op = rng.random()
        if op < 0.45 or not prio:
            p = float(rng.randint(0, 20))
            f.add(next_id, rng.randrange(hosts), p)
            prio[next_id] = p
            next_id += 1
        elif op < 0.7:
            u = rng.choice(list(prio))
            p = float(rng.randint(0, 20))
            f.update(u, p)
            prio[u] = p
        else:
            host = f.pop_ready(0.0)
            if host is None:
                continue
            expected_best = {u for u in prio if f._host_of[u] == host}
            taken = f.take(host)
            assert taken is not None and taken.url_id in expected_best
            assert taken.rank == brute_rank(prio, taken.url_id)
            assert taken.priority == prio.pop(taken.url_id)
            # ... and it is the best URL of its host
            assert all((-prio[u], u) > (-taken.priority, taken.url_id)
                       for u in expected_best - {taken.url_id})
            f.release(host, 0.0)
    assert len(f) == len(prio)


def bfs_order(graph: dict[str, list[str]], root: str) -> list[str]:
    order, seen = [root], {root}
    for page in order:
        for dst in graph[page]:
            if dst not in seen:
                seen.add(dst)
                order.append(dst)
    return order


async def test_single_host_zero_delay_order_is_bfs(mini_web: MiniWeb, tmp_path: Path) -> None:
    rng = random.Random(7)
    pages = [f"/p{i}" for i in range(60)]
    graph = {p: rng.sample(pages, 4) for p in pages}
    for p, links in graph.items():
        mini_web.add("a.test", p, html(*links))
    db = tmp_path / "c.db"
    await Crawler(db, [mini_web.url("a.test", "/p0")], mini_web.settings(concurrency=8)).run()
    rows = read_db(db)["fetches"]
    taken = [url.split(str(mini_web.port))[1] for url, *_ in rows]
    assert taken == bfs_order(graph, "/p0")
    assert [seq for _, seq, *_ in rows] == list(range(len(rows)))
    assert {(priority, rank) for *_, priority, rank, _ in rows} == {(0.0, 0)}


async def test_a_url_robots_txt_excludes_ends_the_take(mini_web: MiniWeb,
                                                      tmp_path: Path) -> None:
    """After a host's best URL is excluded by robots.txt, the next take is the best URL
    among the ready hosts, not that host's next one: the order depends on the frontier
    alone, so a crawl killed right after the exclusion resumes in the same order."""
    mini_web.add("a.test", "/robots.txt", "User-agent: *\nDisallow: /private/\n")
    mini_web.add("a.test", "/", html("/private/x", mini_web.url("b.test", "/p"), "/q"))
    mini_web.add("b.test", "/p", html())
    mini_web.add("a.test", "/q", html())
    db = tmp_path / "c.db"
    settings = mini_web.settings(concurrency=1, scope_hosts=("*.test",))
    await Crawler(db, [mini_web.url("a.test", "/")], settings).run()
    data = read_db(db)
    assert [url.split(str(mini_web.port))[1] for url, *_ in data["fetches"]] == ["/", "/p", "/q"]
    assert data["outcomes"][mini_web.url("a.test", "/private/x")] == "robots_excluded"


def test_heaps_stay_bounded_under_many_updates() -> None:
    """A million priority updates on a small frontier: heaps are compacted, order exact."""
    rng = random.Random(3)
    frontier = Frontier(record_rank=False)
    prio: dict[int, float] = {}
    hosts = 4
    for url_id in range(400):
        prio[url_id] = rng.random()
        frontier.add(url_id, url_id % hosts, prio[url_id])
    for host in range(hosts):  # every host ready, so updates also feed the ready heap
        frontier.release(host, 0.0)
    frontier.pop_ready(0.0)
    frontier.release(frontier.pop_ready(0.0) or 0, 0.0)
    for _ in range(20):
        for url_id in range(400):
            prio[url_id] = rng.random()
            frontier.update(url_id, prio[url_id])
        for host in range(hosts):
            assert frontier.host_size(host) <= 2 * 100 + 64
        assert len(frontier._ready) <= 2 * hosts + 64
    # Draining host by host returns each host's URLs best first, by the latest priority.
    for host in range(hosts):
        frontier.release(host, 0.0)
    taken: list[int] = []
    while (host := frontier.pop_ready(0.0)) is not None:
        url = frontier.take(host)
        assert url is not None
        taken.append(url.url_id)
        frontier.release(host, 0.0)
    assert sorted(taken) == list(range(400))
    assert [prio[u] for u in taken] == sorted(prio.values(), reverse=True)


# -- bulk updates ---------------------------------------------------------------------
def _setup(seed: int, head: int = 64, host_order: str = "best-url",
           spill_dir: Path | None = None,
           spill_at: int = 1) -> tuple[Frontier, list[int], float]:
    """A frontier with hosts in every state: busy, waiting (future), ready, empty."""
    rng = random.Random(seed)
    f = Frontier(head=head, host_order=host_order, spill_dir=spill_dir, spill_at=spill_at)
    hosts = 12
    for url_id in range(3000):
        # few distinct priorities: many ties, broken by url id
        f.add(url_id, rng.randrange(hosts), float(rng.randint(0, 30)))
    now = 10.0
    busy: list[int] = []
    for _ in range(4):                          # busy hosts (one holds nothing any more)
        host = f.pop_ready(now)
        assert host is not None
        busy.append(host)
        assert f.take(host) is not None
    while f.take(busy[0]) is not None:
        pass
    for host in busy[1:3]:
        f.release(host, now + 5.0 + host)       # waiting, ready_at in the future
    busy = [busy[0], busy[3]]
    host = f.pop_ready(now)                     # wakes every other host: ready
    assert host is not None
    f.take(host)
    busy.append(host)
    empty = [u for u in range(3000, 3005)]      # a host emptied by takes: host 99
    for url_id in empty:
        f.add(url_id, 99, 100.0)
    while (h := f.pop_ready(now)) != 99:
        assert h is not None
        busy.append(h)
    while f.take(99) is not None:
        pass
    f.release(99, now)
    assert f._state[99] == 0                     # _EMPTY
    f.release(busy.pop(), now - 1.0)            # waiting, ready_at already past
    return f, busy, now


def _batch(seed: int, f: Frontier, size: int) -> list[tuple[int, float]]:
    rng = random.Random(seed + 1000)
    ids = sorted(f.priorities())
    batch: list[tuple[int, float]] = []
    for _ in range(size):
        r = rng.random()
        # a few taken or unknown ids (ignored); repeats (the later pair wins)
        url_id = rng.randrange(3000, 3100) if r < 0.05 else rng.choice(ids)
        unchanged = r > 0.9 and url_id in f
        priority = f.priority(url_id) if unchanged else float(rng.randint(0, 30))
        batch.append((url_id, priority))
    return batch


def _drive(seed: int, f: Frontier, busy: list[int], now: float) -> list[object]:
    """Crawl the frontier to exhaustion (adds and updates on the way); the trace."""
    rng = random.Random(seed + 2000)
    busy = list(busy)
    trace: list[object] = []
    next_id = 5000
    while len(f) or busy:
        r = rng.random()
        if r < 0.03:
            f.add(next_id, rng.choice([99, 100, rng.randrange(12)]), float(rng.randint(0, 30)))
            next_id += 1
        elif r < 0.08 and len(f):
            f.update(rng.choice(list(f.priorities())), float(rng.randint(0, 30)))
        elif r < 0.6 and (host := f.pop_ready(now)) is not None:
            busy.append(host)
            trace.append(("take", f.take(host)))
        elif busy:
            host = busy.pop(rng.randrange(len(busy)))
            f.release(host, now + rng.choice([0.0, 0.5, 3.0]))
        else:
            wake = f.next_wakeup()   # None: some host is ready, pop it next time
            trace.append(("wake", wake))
            if wake is not None:
                now = max(now, wake)
    return trace


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("size", [4000, 300])
def test_update_many_equals_per_item_updates(seed: int, size: int) -> None:
    bulk, busy, now = _setup(seed)
    single, _, _ = _setup(seed)
    batch = _batch(seed, bulk, size)
    assert bulk.rebuilds(len(batch)) == (size == 4000)
    bulk.update_many(batch)
    for url_id, priority in batch:
        single.update(url_id, priority)
    assert bulk.priorities() == single.priorities()
    trace = _drive(seed, bulk, busy, now)
    assert trace == _drive(seed, single, busy, now)
    takes = [t for kind, t in trace if kind == "take" and t is not None]
    assert len(takes) > 2900


@pytest.mark.parametrize("host_order", ["best-url", "most-pending"])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("head", [1, 3, 17])
def test_spilled_heads_take_the_same_urls_as_unbounded_heaps(seed: int, head: int,
                                                            host_order: str) -> None:
    """Hosts holding only ``head`` URLs in memory (the rest in their overflow) take
    exactly the URLs, priorities and ranks a frontier without overflow takes, through
    adds, updates, a bulk rebuild and every host state."""
    unbounded, busy, now = _setup(seed, head=10**9, host_order=host_order)
    spilled, _, _ = _setup(seed, head=head, host_order=host_order)
    assert spilled.spilled > 0 and unbounded.spilled == 0
    assert spilled.host_size(0) <= 2 * head + 64
    batch = _batch(seed, unbounded, 4000)
    unbounded.update_many(batch)
    spilled.update_many(batch)
    assert spilled.priorities() == unbounded.priorities()
    trace = _drive(seed, unbounded, busy, now)
    assert _drive(seed, spilled, busy, now) == trace
    assert len([t for kind, t in trace if kind == "take" and t is not None]) > 2900


@pytest.mark.parametrize("host_order", ["best-url", "most-pending"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("head", "spill_at"), [(1, 1), (3, 2), (17, 5), (17, 64)])
def test_overflows_on_disk_take_the_same_urls_as_unbounded_heaps(
        seed: int, head: int, spill_at: int, host_order: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Overflows written to a spill file (tails of ``spill_at`` ids, read back in
    batches, the file compacted as it goes) take exactly what unbounded heaps take."""
    monkeypatch.setattr(overflow_module, "COMPACT_MIN", 50)
    unbounded, busy, now = _setup(seed, head=10**9, host_order=host_order)
    spilled, _, _ = _setup(seed, head=head, host_order=host_order, spill_dir=tmp_path,
                           spill_at=spill_at)
    file = spilled._file
    assert file is not None and file.live > 0 and spilled.spilled > file.live // 2
    in_memory = sum(len(o.fifo.tail) for o in spilled._over.values())
    assert in_memory < len(spilled._over) * spill_at
    batch = _batch(seed, unbounded, 4000)
    unbounded.update_many(batch)
    spilled.update_many(batch)
    assert spilled.priorities() == unbounded.priorities()
    trace = _drive(seed, unbounded, busy, now)
    compactions = 0
    original = file.compact

    def counted(overflows: Any) -> None:
        nonlocal compactions
        compactions += 1
        original(overflows)

    monkeypatch.setattr(file, "compact", counted)
    assert _drive(seed, spilled, busy, now) == trace
    assert compactions > 0 and file.live == 0
    assert list(tmp_path.iterdir()) == []  # unlinked from the start: nothing to clean


@pytest.mark.parametrize("seed", [0, 1])
def test_ranks_after_bulk_rebuild_are_exact(seed: int) -> None:
    rng = random.Random(seed)
    f = Frontier()
    for url_id in range(3000):
        f.add(url_id, rng.randrange(5), float(rng.randint(0, 50)))
    batch = [(u, float(rng.randint(0, 50))) for u in range(0, 3000, 2)]
    assert f.rebuilds(len(batch))
    f.update_many(batch)
    prio = f.priorities()
    assert prio == {u: dict(batch).get(u, p) for u, p in prio.items()}
    ranks = f._ranks
    assert ranks is not None
    next_id = 10_000
    for url_id in rng.sample(sorted(prio), 300):  # the index itself, before any take
        assert ranks.rank((-prio[url_id], url_id)) == brute_rank(prio, url_id)
    while (host := f.pop_ready(0.0)) is not None:
        taken = f.take(host)
        assert taken is not None
        assert taken.rank == brute_rank(prio, taken.url_id)
        del prio[taken.url_id]
        if rng.random() < 0.2:                  # later adds land in the rebuilt index
            next_id += 1
            prio[next_id] = float(rng.randint(0, 50))
            f.add(next_id, rng.randrange(5), prio[next_id])
        f.release(host, 0.0)
    assert not prio


def test_large_frontiers_take_chunked_updates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above BULK_MAX_FRONTIER a whole-frontier batch is not applied by one rebuild."""
    import webcrawl.crawler.frontier as frontier_module
    frontier = Frontier(record_rank=False)
    for url_id in range(3000):
        frontier.add(url_id, url_id % 7, 0.0)
    assert frontier.rebuilds(3000)
    monkeypatch.setattr(frontier_module, "BULK_MAX_FRONTIER", 2999)
    assert not frontier.rebuilds(3000)


def test_on_wait_names_each_host_that_starts_waiting() -> None:
    """The hook fires when a host starts waiting (an idle host gets a URL, a host is
    released with URLs left) with the time it may be contacted, and never for a
    host released empty: an event-driven caller arms one timer per call."""
    f = Frontier()
    calls: list[tuple[int, float]] = []
    f.on_wait = lambda host, when: calls.append((host, when))
    f.add(0, host_id=0, priority=1.0)
    f.add(1, host_id=0, priority=2.0)       # host 0 already waits: no new call
    f.add(2, host_id=1, priority=1.0)
    assert calls == [(0, 0.0), (1, 0.0)]
    host = f.pop_ready(now=0.0)
    assert host == 0 and f.take(0) is not None
    f.release(0, ready_at=5.0)              # URL 0 left: waits until 5
    assert calls[-1] == (0, 5.0)
    assert f.pop_ready(now=4.9) == 1 and f.take(1) is not None
    f.release(1, ready_at=7.0)              # released empty: nothing to wake for
    assert calls[-1] == (0, 5.0)
    f.add(3, host_id=1, priority=1.0)       # the idle host gets a URL: waits until 7
    assert calls[-1] == (1, 7.0)
    assert f.pop_ready(now=4.99) is None and f.next_wakeup() == 5.0
    assert f.pop_ready(now=5.0) == 0


#: How add_many runs: the size from which it runs its compiled loop (the default:
#: these small frontiers stay on numpy; 0: compiled throughout, when numba is
#: installed), and the largest batch that runs that loop in Python (0: none; 10**9:
#: every batch).
PATHS = pytest.mark.parametrize(("compiled_from", "small_batch"),
                                [(frontier_module.COMPILED_MIN, 0), (0, 0),
                                 (frontier_module.COMPILED_MIN, 10**9)],
                                ids=["numpy", "compiled", "python"])


@PATHS
@pytest.mark.parametrize("host_order", ["best-url", "most-pending"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("head", "spill_at"), [(1, 0), (3, 2), (17, 5), (64, 0)])
def test_add_many_takes_what_one_add_at_a_time_takes(
        seed: int, head: int, spill_at: int, host_order: str, compiled_from: int,
        small_batch: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of adds (hosts repeated within a batch, ties, URLs before and after
    their host's cut, every host state) against single adds to unbounded heaps, step
    by step: the same hosts, takes, ranks, wake-ups and waiting hosts; the overflows'
    memory and the head entries counted as they change."""
    if compiled_from == 0:
        pytest.importorskip("numba")
    monkeypatch.setattr(frontier_module, "SMALL_BATCH", small_batch)
    # Buffered URLs handed to overflows and heads often, or after many batches.
    monkeypatch.setattr(frontier_module, "PENDING_MAX", [7, 7, 500][seed])
    # Heads over their limit compacted at once, or left waiting for others (seed 2).
    monkeypatch.setattr(frontier_module, "COMPACT_HOSTS", [1, 3, 16][seed])
    monkeypatch.setattr(overflow_module, "COMPACT_MIN", 50)
    rng = random.Random(seed)
    single = Frontier(head=10**9, host_order=host_order)
    batch = Frontier(head=head, host_order=host_order,
                     spill_dir=tmp_path if spill_at else None, spill_at=spill_at or 1,
                     compiled_from=compiled_from)
    waits: dict[str, list[tuple[int, float]]] = {"single": [], "batch": []}
    single.on_wait = lambda host, at: waits["single"].append((host, at))
    batch.on_wait = lambda host, at: waits["batch"].append((host, at))
    now, next_id, busy, bulk = 10.0, 0, [], 0
    for step in range(2500):
        r = rng.random()
        if r < 0.3:
            k = rng.choice([1, 2, 5, 30, 60])
            ids = np.arange(next_id, next_id + k)
            next_id += k
            hosts = np.array([rng.randrange(7) if rng.random() < 0.9 else 7 + step % 5
                              for _ in range(k)])
            if rng.random() < 0.5:  # breadth-first: later URLs after the earlier ones
                prios = np.full(k, -float(step // 100))
            else:
                prios = np.array([float(rng.randint(-30, 0)) for _ in range(k)])
            for url_id, host, prio in zip(ids.tolist(), hosts.tolist(), prios.tolist(),
                                          strict=True):
                single.add(url_id, host, prio)
            before = len(batch._pending)
            batch.add_many(ids, hosts, prios)
            bulk += len(batch._pending) > before
        elif r < 0.38 and len(single):
            url_id = rng.choice(sorted(single.priorities()))
            priority = float(rng.randint(-30, 0))
            single.update(url_id, priority)
            batch.update(url_id, priority)
        elif r < 0.75:
            host = single.pop_ready(now)
            assert batch.pop_ready(now) == host
            if host is not None:
                busy.append(host)
                assert batch.take(host) == single.take(host)
        elif busy:
            host = busy.pop(rng.randrange(len(busy)))
            at = now + rng.choice([0.0, 0.5, 3.0])
            single.release(host, at)
            batch.release(host, at)
        else:
            wake = single.next_wakeup()
            assert batch.next_wakeup() == wake
            if wake is not None:
                now = max(now, wake)
        assert len(batch) == len(single) and batch.queued_hosts == single.queued_hosts
        if step % 50 == 0:
            assert batch.priorities() == single.priorities()
            assert batch._meter.nbytes == sum(o.fifo.nbytes for o in batch._over.values())
            assert batch._head_entries == sum(len(q) for q in batch._queues.values())
            assert max(map(len, batch._queues.values()), default=0) <= 2 * head + 2 * 64
    assert waits["batch"] == waits["single"]
    assert bulk > 20 and next_id > 2000
    if spill_at:
        assert batch._file is not None and batch._file.live + batch._file.garbage > 0


@pytest.mark.parametrize("groups", [3, 70_000], ids=["radix", "wide"])
def test_compaction_order_is_lexsort_by_host_then_key(groups: int) -> None:
    """The compaction's sort (hosts' live entries by host, then ``(-priority, id)``)
    against numpy's lexsort: ties in priority, signed zeros, ids up to 2**32 - 1."""
    rng = np.random.default_rng(groups)
    n = 5000
    group = np.sort(rng.integers(0, groups, n))
    negs = rng.integers(-4, 4, n) / 2.0
    negs[rng.random(n) < 0.2] = -0.0
    ids = rng.integers(0, 2**32, n)
    ids[::7] = ids[1::7][: len(ids[::7])]  # repeated ids, as an updated URL's entries
    order = frontier_module._group_key_order(group, negs, ids)
    expected = np.lexsort((ids, negs, group))
    assert sorted(order.tolist()) == list(range(n))
    for column in (group, negs, ids):
        assert column[order].tolist() == column[expected].tolist()
