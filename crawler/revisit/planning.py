"""What the revisit loop tells its planner beyond the visits: hosts, limits, importance.

:func:`configure_planner` hands a :class:`~webcrawl.analysis.change.refresh.RevisitPlanner`
each collection page's host, each host's politeness limit (:mod:`webcrawl.crawler.revisit.
host_limits`, read from the hosts' Crawl-delay and the downloader's politeness rule) and each page's
importance (:mod:`webcrawl.analysis.change.importance`: ``uniform``, ``pagerank``,
``inlinks`` from the crawl's graph, or a TSV file of ``url`` and ``weight``).  Only the
``polite_optimal`` policy plans with the limits; every policy is held to them when the
loop fetches.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from webcrawl.crawler.politeness import PolitenessPolicy
from webcrawl.crawler.revisit.host_limits import host_limits
from webcrawl.crawler.revisit.settings import REVISIT_IMPORTANCE, RevisitSettings

if TYPE_CHECKING:
    from webcrawl.analysis.change.refresh import RevisitPlanner

__all__ = ["configure_planner", "page_weights"]


def page_weights(db: Path, importance: str, url_ids: Sequence[int],
                 urls: Sequence[str]) -> list[float] | None:
    """The pages' importance (mean 1), or None when uniform (the planner's default)."""
    if importance == "uniform":
        return None
    from webcrawl.analysis.change import importance as imp

    if importance in REVISIT_IMPORTANCE:
        weights = imp.importance_weights(db, url_ids, importance)
    else:
        weights = imp.given_weights(urls, imp.read_weights(Path(importance)))
    return [float(w) for w in weights]


def configure_planner(planner: RevisitPlanner, db: Path, settings: RevisitSettings,
                      pages: Mapping[int, tuple[str, int]], crawl_delays: Mapping[int, float],
                      politeness: PolitenessPolicy,
                      reserved_per_day: float = 0.0) -> dict[int, float]:
    """Tell ``planner`` the hosts of ``pages`` (url id -> (url, host id)), the hosts'
    limits (from their Crawl-delay, by host id, and the politeness rule, less
    ``reserved_per_day`` requests each host spends on other things: its sitemap reads)
    and the pages' weights; return the limits (revisits per day, by host id)."""
    ids = list(pages)
    planner.set_hosts(ids, [pages[i][1] for i in ids])
    used = {pages[i][1] for i in ids}
    limits = host_limits({h: crawl_delays.get(h, 0.0) for h in used}, politeness,
                         settings.day_seconds, reserved={h: reserved_per_day for h in used})
    by_host: dict[Hashable, float] = {h: v for h, v in limits.items()}
    planner.set_host_limits(by_host)
    weights = page_weights(db, settings.importance, ids, [pages[i][0] for i in ids])
    if weights is not None:
        planner.set_weights(ids, weights)
    return limits
