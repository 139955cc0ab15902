"""Larger-sites-first: the site with the most pending pages goes first.

References
----------
.. [1] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country:
   better strategies than breadth-first for web page ordering", WWW 2005.
"""

from __future__ import annotations

from typing import ClassVar

from webcrawl.analysis.ordering.strategies.base import HostOrder
from webcrawl.analysis.ordering.strategies.bfs import BreadthFirst
from webcrawl.analysis.ordering.strategies.registry import register_strategy

__all__ = ["LargerSitesFirst"]


@register_strategy
class LargerSitesFirst(BreadthFirst):
    """Among the hosts that may be contacted, the one with the most frontier URLs first.

    Baeza-Yates et al.'s larger-sites-first [1]_: a site's pending pages are its
    discovered, not yet fetched URLs (the frontier's, so URLs out of scope or excluded
    by robots.txt never count).  The choice is the frontier's (``host_order =
    "most-pending"``: an exact count per host, O(log hosts) per change); ties between
    hosts with equal counts go to the host holding the URL discovered first.  Within a
    host, pages are taken breadth-first (first discovered first), as in the paper's
    combination of breadth-first ordering with the largest sites first.  Under
    politeness a large site keeps a connection busy from the start instead of being
    left alone at the end, where its waits would set the crawl's duration.

    In virtual and timed crawls a "host" is a site (``graph.sites``): hosts serving
    the same documents are one site, so a mirrored site's pending pages are counted
    once, not split between its host names by the order the recorded crawl fetched
    the copies in.  The live crawler counts per host name: it cannot know that two
    names serve one site before it has fetched both.
    """

    name = "larger-sites-first"
    host_order: ClassVar[HostOrder] = "most-pending"
