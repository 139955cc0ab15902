"""The live frontier drives every part of the Strategy interface, and on one host with
zero delay its order equals the strategy's own order
(webcrawl.analysis.ordering.virtual.replay as oracle)."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from miniweb import MiniWeb, html, read_db
from webcrawl.analysis.ordering.strategies import PriorityUpdates, Strategy, get_strategy
from webcrawl.analysis.ordering.virtual import replay
from webcrawl.crawler.engine import Crawler


def build_site(web: MiniWeb, n: int = 50, seed: int = 3) -> dict[int, list[int]]:
    rng = random.Random(seed)
    graph = {i: rng.sample([j for j in range(n) if j != i], rng.randint(1, 5)) for i in range(n)}
    for i, links in graph.items():
        web.add("a.test", f"/p{i}", html(*[f"/p{j}" for j in links]))
    return graph


@pytest.mark.parametrize("name", ["bfs", "dfs", "backlink", "opic"])
async def test_single_host_order_equals_strategy_order(mini_web: MiniWeb, tmp_path: Path,
                                                       name: str) -> None:
    graph = build_site(mini_web)
    db = tmp_path / "c.db"
    await Crawler(db, [mini_web.url("a.test", "/p0")],
                  mini_web.settings(frontier_strategy=name)).run()
    rows = read_db(db)["fetches"]
    live = [int(url.rsplit("/p", 1)[1]) for url, *_ in rows]
    oracle = replay(get_strategy(name)(seed=0), len(graph), [0],
                    lambda page: np.asarray(graph[page], dtype=np.int64))
    assert live == oracle.order.tolist()
    assert [p for *_, p, _r, _e in rows] == pytest.approx(oracle.priorities.tolist())
    assert {r for *_, r, _e in rows} == {0}  # one host, zero delay: always the best URL


class ThreadProbe(Strategy):
    """Reverses the order every few fetches, from a worker thread."""

    name = "thread-probe"
    threads: ClassVar[list[int]] = []

    def __init__(self, *, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.known: list[int] = []

    def discovered(self, url_id: int, depth: int) -> float:
        self.known.append(url_id)
        return 0.0

    def fetched(self, url_id: int, out_links: Sequence[int]) -> PriorityUpdates:
        return [(u, 1.0) for u in out_links]

    def wants_recompute(self, fetches_since: int, seconds_since: float) -> bool:
        return fetches_since >= 5

    def snapshot(self) -> Any:
        return tuple(self.known)

    @staticmethod
    def recompute(snapshot: Any) -> PriorityUpdates:
        ThreadProbe.threads.append(threading.get_ident())
        return [(u, float(u)) for u in snapshot]


async def test_recompute_runs_in_a_worker_thread(mini_web: MiniWeb, tmp_path: Path) -> None:
    build_site(mini_web, n=60)
    db = tmp_path / "c.db"
    ThreadProbe.threads.clear()
    crawler = Crawler(db, [mini_web.url("a.test", "/p0")], mini_web.settings(),
                      strategy=ThreadProbe())
    stats = await crawler.run()
    assert ThreadProbe.threads
    assert threading.get_ident() not in ThreadProbe.threads
    data = read_db(db)
    assert None not in data["outcomes"].values() and stats.stopped == "done"
    priorities = [p for *_, p, _r, _e in data["fetches"]]
    # Recomputed priorities (the URL id) were applied to URLs still in the frontier.
    assert any(p not in (0.0, 1.0) for p in priorities)
