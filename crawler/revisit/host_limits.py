"""Each host's politeness limit as a revisit rate: what the politeness-aware policy plans with.

The downloader keeps each host's one politeness clock
(:class:`~webcrawl.crawler.politeness.HostSlots`) under the crawl's
:class:`~webcrawl.crawler.politeness.PolitenessPolicy`: a host may be asked again
``policy.delay(elapsed, crawl_delay)`` seconds after a request ends, and one request at
a time.  :func:`host_limits` reads that rule (no clock of its own) and turns it into the
most requests per planner day a host allows::

    limit = day_seconds / (elapsed + policy.delay(elapsed, crawl_delay))

with ``elapsed`` the expected request time (0 under the simulated clock, where a fetch
takes no time; the default).  A host with no wait at all has no limit (``inf``); the
budget's token bucket is then its only bound.  ``Retry-After`` is a passing answer,
not a standing rate, so it is not planned with: the slot's ``ready_at`` holds it when
the loop fetches.  Requests that are not revisits (a sitemap read) come out of the
limit first (``reserved``).

References
----------
.. [1] A. Kolobov, Y. Peres, E. Lubetzky and E. Horvitz, "Optimal freshness crawl under
   politeness constraints", SIGIR 2019 (a per-host bound on the crawl rate).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from webcrawl.crawler.politeness import PolitenessPolicy

__all__ = ["host_limits"]


def host_limits(crawl_delays: Mapping[int, float], policy: PolitenessPolicy,
                day_seconds: float, elapsed: float = 0.0,
                reserved: Mapping[int, float] | None = None) -> dict[int, float]:
    """Revisits per planner day each host allows, by host id (``inf``: no limit).

    ``crawl_delays``: each host's Crawl-delay in seconds, already clamped (0: none).
    ``reserved``: requests per day a host spends on other things (its sitemap reads);
    they come out of its limit, which stays positive (0.01 per day at least: a host is
    never planned at zero).
    """
    out: dict[int, float] = {}
    for host, crawl_delay in crawl_delays.items():
        gap = elapsed + policy.delay(elapsed, crawl_delay)
        if gap <= 0:
            out[host] = math.inf
            continue
        per_day = day_seconds / gap - (reserved or {}).get(host, 0.0)
        out[host] = max(per_day, 0.01)
    return out
