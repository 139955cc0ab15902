"""The recorded crawl's reach: which URLs a virtual crawl may fetch, and why not the rest.

A virtual crawl over a crawl database stays inside what the recorded crawl could
fetch (:attr:`webcrawl.analysis.graph.captured.CapturedGraph.fetchable`): a URL is fetchable
exactly when the recorded crawl got an HTTP answer for it.  :func:`reach_summary`
counts that set and the excluded URLs by reason, which ``webcrawl compare`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from webcrawl.analysis.graph.captured import CapturedGraph

__all__ = ["EXCLUSION_REASONS", "Reach", "reach_summary"]

#: Why a discovered URL is not fetchable, by its recorded outcome (``frontier``: none).
EXCLUSION_REASONS: dict[str, str] = {
    "out_of_scope": "out of scope (host, depth, per-host cap, URL length)",
    "robots_excluded": "excluded by robots.txt",
    "robots_unreachable": "never requested (the host's robots.txt was unreachable)",
    "network_error": "no HTTP answer (network error)",
    "timeout": "no HTTP answer (timeout)",
    "abandoned": "never reached (the crawl stopped first)",
    "frontier": "never reached (still in the frontier)",
}


@dataclass(frozen=True)
class Reach:
    """The fetchable set of a graph and the excluded URLs by reason.

    Attributes
    ----------
    urls : int
        Nodes of the graph.
    fetchable : int
        Nodes a virtual crawl may fetch.
    pages : int
        Fetched pages among them (outcome ``fetched``).
    fetchable_by_outcome : dict
        Fetchable nodes per recorded outcome (``fetched``, ``redirect``, ...).
    excluded : dict
        Reason (:data:`EXCLUSION_REASONS`) -> number of URLs excluded for it.
    """

    urls: int
    fetchable: int
    pages: int
    fetchable_by_outcome: dict[str, int] = field(default_factory=dict)
    excluded: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """Plain-text lines: the fetchable set, then each exclusion with its reason."""
        kinds = ", ".join(f"{v:,} {k}" for k, v in self.fetchable_by_outcome.items())
        out = [f"fetchable set: {self.fetchable:,} of {self.urls:,} discovered URLs "
               f"({kinds}); a virtual crawl fetches nothing else"]
        out += [f"  excluded: {count:,} {reason}" for reason, count in self.excluded.items()]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"urls": self.urls, "fetchable": self.fetchable, "pages": self.pages,
                "fetchable_by_outcome": dict(self.fetchable_by_outcome),
                "excluded": dict(self.excluded)}


def reach_summary(graph: CapturedGraph) -> Reach:
    """Count the fetchable set of ``graph`` and its excluded URLs by reason.

    Parameters
    ----------
    graph : CapturedGraph
        Usually the ``all`` graph of a crawl database (the ``pages`` graph excludes
        nothing).

    Returns
    -------
    Reach

    Examples
    --------
    >>> g = CapturedGraph.from_edges([0, 0], [1, 2], n=3, crawled=[True, True, False])
    >>> r = reach_summary(g)
    >>> r.fetchable, r.excluded
    (2, {'never reached (still in the frontier)': 1})
    """
    fetchable = np.asarray(graph.fetchable, dtype=bool)
    excluded: dict[str, int] = {}
    for outcome, count in graph.outcome_counts(~fetchable).items():
        reason = EXCLUSION_REASONS.get(outcome, f"outcome {outcome} without out-links")
        excluded[reason] = excluded.get(reason, 0) + count
    return Reach(urls=graph.n, fetchable=int(np.count_nonzero(fetchable)),
                 pages=graph.pages, fetchable_by_outcome=graph.outcome_counts(fetchable),
                 excluded=excluded)
