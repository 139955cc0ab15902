"""Sampler bias against walk length: how long a walk must be before its sample is fair.

References
----------
.. [1] P. Rusmevichientong, D. M. Pennock, S. Lawrence and C. L. Giles, "Methods for
   sampling pages uniformly from the World Wide Web", 2001 (the burn-in time and
   Proposition 2's bound on it for UndirectedSample).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from webcrawl.analysis.sampling.bias import BiasReport, bias_report
from webcrawl.analysis.sampling.walks import SamplerConfig, sample_pages
from webcrawl.storage.errors import ConfigError

__all__ = ["bias_by_walk_length"]


def bias_by_walk_length(
    adjacency: Any,
    size: int,
    walk_lengths: Sequence[int],
    method: str = "undirected",
    config: SamplerConfig | None = None,
    *,
    seed: int = 0,
    starts: Sequence[int] | None = None,
    largest_scc: bool = True,
) -> list[tuple[int, BiasReport]]:
    """Degree bias of a sampler's output for each walk length.

    Parameters
    ----------
    adjacency : scipy sparse array or CapturedGraph
        The link graph.
    size : int
        Pages sampled at each length.
    walk_lengths : sequence of int
        Walk lengths L: the link traversals per walker before anything is recorded
        (the paper's burn-in, ``burn_in = L``); recording then goes on in rounds of
        ``config.walk_length`` until ``size`` pages are accepted.
    method : str, default "undirected"
        Any of :data:`webcrawl.analysis.sampling.walks.METHODS`.
    config : SamplerConfig, optional
        The other settings (walkers, estimate length, ...).
    seed : int, default 0
        The same seed at every length, so lengths differ only in the walk.
    starts : sequence of int, optional
        Start pages (default: the crawl seeds, else node 0).
    largest_scc : bool, default True
        ``directed`` only: walk the largest strongly connected component (see
        :func:`webcrawl.analysis.sampling.walks.directed_sample`).

    Returns
    -------
    list of (int, BiasReport)
        One report per walk length, in the order given.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> ring = sp.csr_array((np.ones(6), (np.arange(6), (np.arange(6) + 1) % 6)))
    >>> [(L, r.size) for L, r in bias_by_walk_length(ring, 60, [1, 20])]
    [(1, 60), (20, 60)]

    Notes
    -----
    A short walk (and a sample drawn in few rounds) stays near its start pages and
    over-represents them and their neighbourhood; the bias (KS distance and
    chi-square of the sample's degrees against the population's,
    :func:`webcrawl.analysis.sampling.bias.bias_report`) falls as L grows past the mixing
    time.  Cost: the sum over lengths of one sample each.
    """
    lengths = [int(v) for v in walk_lengths]
    if not lengths or min(lengths) < 1:
        raise ConfigError("walk lengths must be positive integers")
    base = config or SamplerConfig()
    out = []
    for length in lengths:
        cfg = dataclasses.replace(base, burn_in=length)
        sample = sample_pages(adjacency, size, method, cfg, seed=seed, starts=starts,
                              largest_scc=largest_scc)
        out.append((length, bias_report(adjacency, sample)))
    return out
