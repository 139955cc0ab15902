"""Shard messages survive pickling field for field (their ``__reduce__`` is hand-written)."""

from __future__ import annotations

import pickle
from dataclasses import MISSING, fields, replace
from typing import Any

import numpy as np
from webcrawl.crawler.links import PageLinks
from webcrawl.crawler.orders import Attempt, FetchPage, PageDone, RobotsDone
from webcrawl.storage.records import Outcome


def _non_default(cls: type, **known: Any) -> Any:
    """An instance of ``cls`` whose every field differs from its default."""
    values: dict[str, Any] = {}
    for i, f in enumerate(fields(cls)):
        if f.name in known:
            values[f.name] = known[f.name]
            continue
        default = f.default if f.default is not MISSING else (
            f.default_factory() if f.default_factory is not MISSING else None)
        if isinstance(default, bool):
            values[f.name] = not default
        elif isinstance(default, int | float) and default is not None:
            values[f.name] = default + i + 1
        elif isinstance(default, str):
            values[f.name] = f"{f.name}-{i}"
        else:
            raise AssertionError(f"no non-default value for {cls.__name__}.{f.name}")
    return cls(**values)


def _attempt() -> Attempt:
    return _non_default(Attempt, started_at=1.5, ended_at=2.25, outcome=Outcome.HTTP_ERROR,
                        status=503, error="HTTPStatusError", digest="ab" * 20, etag='"e"',
                        last_modified="Tue, 24 Nov 2026 01:00:00 GMT",
                        location="http://a.test/x", retry_after=3.0)


def test_every_field_of_an_attempt_round_trips() -> None:
    a = _attempt()
    assert pickle.loads(pickle.dumps(a)) == a
    assert all(getattr(a, f.name) != f.default for f in fields(Attempt))


def test_a_page_answer_round_trips_with_its_links() -> None:
    sketch = np.arange(16, dtype=np.uint32)  # a near-duplicate sketch travels too
    links = _non_default(PageLinks, urls=["http://a.test/1", "http://b.test/2"],
                         nofollow={"http://b.test/2"}, sketch=sketch,
                         text="a page text to sketch later",
                         html="<p>a page to find the text of later</p>")
    done = PageDone(7, (_attempt(),), _attempt(), links, 0.125)
    back = pickle.loads(pickle.dumps([done]))[0]
    assert back.links is not None and back.links is not links
    assert np.array_equal(back.links.sketch, sketch)
    # arrays have no truth value: the rest is compared with the sketch set aside
    assert replace(back, links=replace(back.links, sketch=None)) == \
        replace(done, links=replace(links, sketch=None))
    assert pickle.loads(pickle.dumps(PageDone(3, (), None, None, -0.5))) == \
        PageDone(3, (), None, None, -0.5)


def test_orders_and_robots_answers_round_trip() -> None:
    order = FetchPage(11, "http://a.test/p?q=1", "a.test:8080", 0.04, 2.0)
    assert pickle.loads(pickle.dumps(order)) == order
    robots = RobotsDone(-3, 200, "User-agent: *\nDisallow: /x\n", 0.01, 0.5, 2)
    assert pickle.loads(pickle.dumps(robots)) == robots


def test_new_hosts_go_to_the_worker_owning_fewest() -> None:
    from webcrawl.crawler.settings import CrawlSettings
    from webcrawl.crawler.shard import ShardDownloader

    shards = ShardDownloader(CrawlSettings(workers=3))
    owners = [shards.worker_of(f"h{i}.test:80") for i in range(7)]
    assert owners == [0, 1, 2, 0, 1, 2, 0]
    assert shards.worker_of("h4.test:80") == 1  # a host keeps its worker
