"""A page's links registered as one batch (``Discovery.register_many``) against the
one-URL-at-a-time registration the engine did before, kept here as the reference.

Both crawlers see the same pages (known URLs, repeats, nofollow links and pages,
hosts and depths out of scope, per-host caps) and the same strategy feedback; they must
give the same ids, write the same rows in the same order, count the same outcomes,
hold the same priorities and hand out the URLs in the same order.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import webcrawl.crawler.seen as seen_module
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.links import PageLinks, link_ids
from webcrawl.crawler.scope import Scope
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.records import Outcome
from webcrawl.storage.store import HostRow, UrlRow

SEED = "http://a.test/"


@dataclass
class RecordingStore:
    """The rows a crawl store is given, by table (the store writes each table's rows
    in the order given, and a batch's tables together)."""

    rows: list[Any] = field(default_factory=list)
    hosts: list[HostRow] = field(default_factory=list)

    def add_host(self, row: HostRow) -> None:
        self.hosts.append(row)

    def add_url(self, row: UrlRow) -> None:
        self.rows.append(row)

    def add_new_urls(self, first_id: int, urls: list[str], host_ids: list[int], depth: int,
                     discovered_seq: int, outcomes: list[Outcome | None]) -> None:
        self.rows.extend(UrlRow(first_id + k, url, host_id, depth, discovered_seq, outcome)
                         for k, (url, host_id, outcome)
                         in enumerate(zip(urls, host_ids, outcomes, strict=True)))

    def add_link_cut(self, src_id: int, kept: int, dropped: int) -> None:
        self.rows.append(("cut", src_id, kept, dropped))


def _crawler(tmp_path: Path, name: str, strategy: str,
             fingerprint: Callable[[str], int] | None) -> Crawler:
    settings = CrawlSettings(frontier_strategy=strategy, scope_max_depth=3,
                             scope_max_per_host=60,
                             scope_hosts=("a.test", "b.test", "c.test", "d.test"))
    crawler = Crawler(tmp_path / f"{name}.db", [SEED], settings)
    crawler.store = RecordingStore()  # type: ignore[assignment]
    crawler.scope = Scope(settings, [SEED])
    if fingerprint is not None:
        crawler.registry._url_id._fingerprint = fingerprint
    return crawler


def _register_one(c: Crawler, url: str, follow: bool, *, depth: int, found_by: int) -> int:
    """The engine's registration of one URL as it was before batches."""
    assert c.store is not None and c.scope is not None
    known = c.registry.id_of(url)
    if known is not None:
        return known
    new = c.registry.add(url, depth)
    c.over_budget(c.budget.tick())
    priority = c.strategy.discovered(new.url_id, depth)
    if follow and c.scope.admit(url, new.hostport, depth):
        c.registry.record(c.store, new, found_by)
        c.frontier.add(new.url_id, new.host_id, priority)
    else:
        c.registry.record(c.store, new, found_by, Outcome.OUT_OF_SCOPE)
        c.stats.outcomes[Outcome.OUT_OF_SCOPE] += 1
    return new.url_id


def _pages(seed: int, n: int) -> list[tuple[int, PageLinks]]:
    """Pages as ``(index of the linking URL among those known, links)``."""
    rng = random.Random(seed)
    pool = [f"http://{rng.choice('abcde')}.test/{rng.randrange(60)}"
            f"{rng.choice(['', '.html', '.jpg', '/'])}" for _ in range(600)]
    pages = []
    for _ in range(n):
        urls = list(dict.fromkeys(rng.choice(pool) for _ in range(rng.randrange(0, 40))))
        page = PageLinks(urls=urls, nofollow={u for u in urls if rng.random() < 0.15},
                         meta_nofollow=rng.random() < 0.1)
        pages.append((rng.randrange(1 << 30), page))
    return pages


def _take_all(c: Crawler) -> list[int]:
    order = []
    while True:
        host = c.frontier.pop_ready(float("inf"))
        if host is None:
            return order
        taken = c.frontier.take(host)
        assert taken is not None
        order.append(taken.url_id)
        c.frontier.release(host, 0.0)


@pytest.mark.parametrize("fingerprint", [None, lambda url: len(url) % 5],
                         ids=["siphash", "colliding"])
@pytest.mark.parametrize("strategy", ["bfs", "dfs", "random", "backlink", "opic",
                                      "pagerank", "larger-sites-first"])
def test_batch_registration_is_one_url_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strategy: str,
        fingerprint: Callable[[str], int] | None) -> None:
    monkeypatch.setattr(seen_module, "RECENT_MAX", 30)  # merges of every kind
    monkeypatch.setattr(seen_module, "MERGE_MIN", 60)
    monkeypatch.setattr(seen_module, "MERGE_WINDOW", 16)
    batch = _crawler(tmp_path, "batch", strategy, fingerprint)
    single = _crawler(tmp_path, "single", strategy, fingerprint)
    batch.discovery.register(SEED, 0, -1)
    _register_one(single, SEED, True, depth=0, found_by=-1)
    s = batch.settings
    for seq, (pick, page) in enumerate(_pages(7, 120)):
        page_id = pick % len(batch.registry)
        got = batch.recorder._page_links(page_id, seq, page)
        depth = single.registry.depth(page_id) + 1
        want = link_ids(page, partial(_register_one, single, depth=depth, found_by=seq),
                        obey_meta_nofollow=s.links_obey_meta_nofollow,
                        follow_nofollow=s.links_follow_nofollow)
        assert got == want
        # The same feedback to both strategies, so priorities move as in a crawl.
        for c in (batch, single):
            for target, priority in c.strategy.fetched(page_id, got[0]):
                c.frontier.update(target, priority)
    assert batch.store.rows == single.store.rows  # type: ignore[union-attr]
    assert batch.store.hosts == single.store.hosts  # type: ignore[union-attr]
    assert batch.stats.outcomes == single.stats.outcomes
    assert batch.stats.outcomes[Outcome.OUT_OF_SCOPE] > 0
    assert len(batch.registry) == len(single.registry) > 100
    assert batch.frontier.priorities() == single.frontier.priorities()
    assert _take_all(batch) == _take_all(single)
    if fingerprint is not None:
        assert batch.registry._url_id.collisions > 0
