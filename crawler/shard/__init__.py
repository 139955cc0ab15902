"""Sharded crawl: ``webcrawl crawl --workers N``, or ``crawl(..., CrawlSettings(workers=N))``.

Roles (Mercator, BUbiNG: hosts are assigned to agents, each host to one):

* the **coordinator** is the crawl engine (:class:`webcrawl.crawler.engine.Crawler`) given a
  :class:`ShardDownloader` (:mod:`webcrawl.crawler.shard.coordinator`): the only SQLite
  writer; owner of the URL registry (dedup, ids, depth), scope, robots.txt rules,
  frontier and strategy, so global rankings (backlink, pagerank, opic) stay global;
* **workers** (:mod:`webcrawl.crawler.shard.worker`, processes over pipes forked by a fork
  server, :mod:`webcrawl.crawler.shard.forks`, or Ray actors)
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

from typing import TYPE_CHECKING

from webcrawl.storage._facade import lazy_attributes

if TYPE_CHECKING:  # `X as X`: explicit re-exports for type checkers
    from webcrawl.crawler.shard.coordinator import ShardDownloader as ShardDownloader
    from webcrawl.crawler.shard.ray_transport import open_ray_crawler as open_ray_crawler

#: The public API: name -> the module that defines it (imported on first use, so a worker
#: process, which imports only :mod:`webcrawl.crawler.shard.worker`, stays light).  The
#: protocol, the transports and the worker are importable from their own modules.
_LAZY = {
    "ShardDownloader": "webcrawl.crawler.shard.coordinator",  # what Crawler uses, workers > 1
    "open_ray_crawler": "webcrawl.crawler.shard.ray_transport",  # crawl --ray, as a library call
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
