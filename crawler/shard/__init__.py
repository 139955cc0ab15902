"""Sharded crawl: ``webcrawl crawl --workers N``, or ``crawl(..., CrawlSettings(workers=N))``.

Roles (Mercator, BUbiNG: hosts are assigned to agents, each host to one):

* the **coordinator** is the crawl engine (:class:`webcrawl.crawler.engine.Crawler`) given a
  :class:`ShardDownloader` (:mod:`webcrawl.crawler.shard.coordinator`): the only SQLite
  writer; owner of the URL registry (dedup, ids, depth), scope, robots.txt rules,
  frontier and strategy, so global rankings (backlink, pagerank, opic) stay global;
* **workers** (:mod:`webcrawl.crawler.shard.worker`, child processes over pipes, or Ray actors)
  each own the hosts assigned to them (each new host to the worker owning fewest,
  stored with the crawl): a :class:`~webcrawl.crawler.downloader.LocalDownloader` with their
  politeness clocks, kept-alive connections, the retry loop, decoding, link extraction
  and normalisation (the CPU half of a crawl).  No database, no registry.

Why one writer fed by the workers rather than per-worker shards behind one reader:
every analysis reads one crawl database as today, URL ids stay dense and global (a
shard per worker would need a merge of ids and links, and a global strategy would need
the links of every shard anyway), and exactness after a kill stays the engine's
(:mod:`webcrawl.crawler.resume`): the database is the only truth.  The writer's cost is a dict
lookup per link and batched ``executemany`` writes (:mod:`webcrawl.storage.store`); the
coordinator is profiled in the docs' results.

Protocol (:mod:`webcrawl.crawler.shard.protocol`): picklable
dataclasses in batches over a three-method :class:`Transport`.  A host's turn sends
its worker a window of up to ``shard_window`` of the host's best URLs (refilled as
results return), each with ``wait``, the coordinator's view of the host's remaining
politeness delay; the worker answers a host's orders one at a time in arrival order
(its per-host back queue), each after at least that wait and its own clock, so one
request per host is in flight and the next one needs no round trip to the coordinator.
A kill -9 of the coordinator kills the workers (EOF on their input, and
``PR_SET_PDEATHSIG`` on Linux) and a resume continues from the database; a lost worker
is restarted and its unanswered orders re-sent, re-timed as if the host had been
contacted at the moment of the loss; nothing was written for them, so the graph stays
exact.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from webcrawl.crawler.shard.coordinator import ShardDownloader, spawn_process
    from webcrawl.crawler.shard.ray_transport import (
        cluster_cpus,
        connect_ray,
        open_ray_crawler,
        ray_downloader,
    )

#: Public name -> the module that defines it, imported on first use.
_LAZY: dict[str, str] = {
    "ShardDownloader": "webcrawl.crawler.shard.coordinator",
    "cluster_cpus": "webcrawl.crawler.shard.ray_transport",
    "connect_ray": "webcrawl.crawler.shard.ray_transport",
    "open_ray_crawler": "webcrawl.crawler.shard.ray_transport",
    "ray_downloader": "webcrawl.crawler.shard.ray_transport",
    "spawn_process": "webcrawl.crawler.shard.coordinator",
}

__all__ = [
    "ShardDownloader",
    "cluster_cpus",
    "connect_ray",
    "open_ray_crawler",
    "ray_downloader",
    "spawn_process",
]


def __getattr__(name: str) -> Any:
    # PEP 562: heavy modules load on first use, so a worker process stays light.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
