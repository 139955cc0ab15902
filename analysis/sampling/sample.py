"""A sample of pages drawn by a random-walk sampler (the record both the samplers and the
bias report read)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PageSample"]


@dataclass(frozen=True)
class PageSample:
    """A sample of pages drawn by one of the samplers.

    Attributes
    ----------
    method : str
        The sampler's name (one of :data:`webcrawl.analysis.sampling.walks.METHODS`).
    nodes : ndarray of int64, shape (size,)
        Sampled node indices in the order accepted; repeats are possible.
    population : ndarray of bool, shape (n,)
        The pages the walk can reach from its start pages: the set the sample is
        meant to be uniform over (all pages for ``directed``, whose jumps reach any
        page; the weak components of the starts for the undirected walks; the pages
        reachable by links for ``pagerank``).
    candidates : int
        Recorded visits the acceptance step chose from.
    traversals : int
        Link traversals of all walkers, burn-in and estimation included: the pages
        a crawler would have fetched (or looked up) to draw the sample.
    visited : int
        Distinct pages the walks visited.
    scope : str
        The graph the walks ran on ("the whole graph", or "the largest strongly
        connected component" for ``directed`` on a graph that is not strongly
        connected).
    scope_reason : str
        Why (one sentence; empty when nothing restricts the walk).
    """

    method: str
    nodes: np.ndarray
    population: np.ndarray
    candidates: int
    traversals: int
    visited: int
    scope: str = "the whole graph"
    scope_reason: str = ""

    @property
    def distinct(self) -> int:
        """Number of distinct pages in the sample."""
        return int(np.unique(self.nodes).size)
