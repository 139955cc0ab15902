"""URL discovery: registering the URLs a crawl meets, and admitting them to the frontier.

A new URL gets its id in the crawl's registry
(:class:`~webcrawl.crawler.registry.CrawlRegistry`), its ``urls`` row (and its host's, if
new), the strategy's first priority, and -- if the scope admits it -- a place in the
frontier; else it is recorded ``out_of_scope`` at once.  A page's links are registered
as one batch (:meth:`Discovery.register_many`): the registry looks them up and adds the
new ones in one vectorised step, the strategy announces them together and the frontier
takes the admitted ones together, while the scope and the rows still see each new URL
in order.  The memory budget is ticked once per batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from webcrawl.storage.records import Outcome

if TYPE_CHECKING:
    from webcrawl.crawler.engine.core import Crawler

__all__ = ["Discovery"]


class Discovery:
    """Registers a crawl's URLs (see the module docstring)."""

    def __init__(self, crawl: Crawler) -> None:
        self.crawl = crawl

    def register(self, url: str, depth: int, found_by: int, *, follow: bool = True) -> int:
        """The id of ``url``; a new URL is recorded, announced to the strategy, and
        enqueued if ``follow`` and the scope admits it (else it is ``out_of_scope``)."""
        return int(self.register_many([url], depth, found_by, [follow])[0])

    def register_many(self, urls: Sequence[str], depth: int, found_by: int,
                      follow: Sequence[bool]) -> np.ndarray:
        """:meth:`register` for each of ``urls`` in order (``follow`` per URL), at once:
        the ids (``int64``), new ones in order of first occurrence."""
        crawl = self.crawl
        store, scope, registry = crawl.store, crawl.scope, crawl.registry
        assert store is not None and scope is not None
        batch = registry.add_many(urls, depth)
        if not batch.new:
            return batch.ids
        new_ids = np.arange(batch.first_id, batch.first_id + len(batch.new))
        priorities = crawl.strategy.discovered_many(new_ids, depth)
        admitted: list[int] = []
        crawl.over_budget(crawl.budget.tick(len(batch.new)))
        outcomes: list[Outcome | None] = [None] * len(batch.new)
        admit, hostports = scope.admit, batch.hostports
        for j, k in enumerate(batch.new):
            if follow[k] and admit(urls[k], hostports[j], depth):
                admitted.append(j)
            else:
                outcomes[j] = Outcome.OUT_OF_SCOPE
        registry.record_batch(store, batch, depth, found_by, outcomes)
        if len(admitted) < len(outcomes):
            crawl.stats.outcomes[Outcome.OUT_OF_SCOPE] += len(outcomes) - len(admitted)
        if admitted:
            take = np.array(admitted)
            crawl.frontier.add_many(new_ids[take], batch.host_ids[take], priorities[take])
        return batch.ids
