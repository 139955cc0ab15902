"""Degree bias of a page sample: how far a sample's degrees are from the population's.

:func:`bias_report` compares the in- and out-degree distributions of a sample (e.g. from
:func:`webcrawl.analysis.sampling.walks.sample_pages`) with the true ones (chi-square and two-sample
KS tests, mean ratios), and the sample's share of each site with the site's share of
the population (a uniform sample draws each site in proportion to its pages; sites as
``graph.sites``: hosts, with mirrored hosts one site).

References
----------
.. [1] P. Rusmevichientong, D. M. Pennock, S. Lawrence and C. L. Giles, "Methods
   for sampling pages uniformly from the World Wide Web", AAAI Fall Symposium on
   Using Uncertainty within Computation, 2001.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from webcrawl.analysis._sparse import as_adjacency
from webcrawl.analysis.sampling.sample import PageSample
from webcrawl.storage.errors import ConfigError

__all__ = ["BiasReport", "DegreeBias", "SiteBias", "bias_report"]

#: Sites listed one by one in a :class:`SiteBias` (the largest); the rest are one row.
SITES_LISTED = 20


@dataclass(frozen=True)
class DegreeBias:
    """The sample's distribution of one degree against the population's.

    Attributes
    ----------
    bucket_edges : ndarray of int64
        Bucket ``b`` holds degrees in ``[edges[b], edges[b + 1])``: 0, 1, 2-3, 4-7, ...
    true_fraction, sample_fraction : ndarray of float64
        Share of the population (of the sample) in each bucket.
    ratio : ndarray of float64
        ``sample_fraction / true_fraction`` (nan where the bucket is empty in truth);
        1 everywhere for an unbiased sample.
    true_mean, sample_mean : float
        Mean degree of the population and of the sample.
    ks_statistic, ks_pvalue : float
        Two-sample Kolmogorov-Smirnov test of sample degrees against population
        degrees (the population is large next to the sample, so this is close to a
        one-sample test against the true distribution).
    chi2_statistic, chi2_pvalue : float
        Pearson chi-square of the bucket counts against ``size * true_fraction``
        (buckets with expected count below 5 are merged into their neighbour).
    """

    bucket_edges: np.ndarray
    true_fraction: np.ndarray
    sample_fraction: np.ndarray
    ratio: np.ndarray
    true_mean: float
    sample_mean: float
    ks_statistic: float
    ks_pvalue: float
    chi2_statistic: float
    chi2_pvalue: float


@dataclass(frozen=True)
class SiteBias:
    """The sample's share of each site against the population's.

    Attributes
    ----------
    names : list of str
        The :data:`SITES_LISTED` largest sites of the population (most pages first),
        then ``"(other sites)"`` when there are more.
    true_fraction, sample_fraction, ratio : ndarray of float64
        Share of the population (of the sample) on each, and their ratio.
    chi2_statistic, chi2_pvalue : float
        Pearson chi-square of the sample's counts against ``size * true_fraction``
        (rows expecting fewer than 5 merged, as for the degrees).
    """

    names: list[str]
    true_fraction: np.ndarray
    sample_fraction: np.ndarray
    ratio: np.ndarray
    chi2_statistic: float
    chi2_pvalue: float


@dataclass(frozen=True)
class BiasReport:
    """In- and out-degree bias of a sample (see :func:`bias_report`), and its site shares
    (None when the population is on one site or the sites are unknown)."""

    size: int
    distinct: int
    population: int
    in_degree: DegreeBias
    out_degree: DegreeBias
    sites: SiteBias | None = None


def bias_report(adjacency: Any, nodes: Any, population: Any = None, *,
                sites: Any = None) -> BiasReport:
    """Compare a sample's in- and out-degree distributions with the true ones.

    Parameters
    ----------
    adjacency : scipy sparse array or CapturedGraph, shape (n, n)
        The link graph the degrees are counted on (distinct links).
    nodes : array_like of int, or PageSample
        The sampled nodes (repeats count).  A PageSample brings its population.
    population : array_like of bool, shape (n,), optional
        The pages the sample should be uniform over.  Default: every page.
    sites : array_like of int, shape (n,), optional
        The site of each page, for :attr:`BiasReport.sites`.  Default: ``sites`` of a
        CapturedGraph (with ``site_names``); none for a bare sparse array.

    Returns
    -------
    BiasReport
        Per degree: bucket shares (log-spaced buckets), their ratio, the means, and
        KS and chi-square statistics with p-values (scipy.stats).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_array((np.ones(3), ([1, 2, 3], [0, 0, 0])), shape=(4, 4))
    >>> r = bias_report(A, [0, 0, 1, 2, 3])
    >>> r.in_degree.true_mean, r.in_degree.sample_mean
    (0.75, 1.2)

    References
    ----------
    .. [1] P. Rusmevichientong et al., "Methods for sampling pages uniformly from the
       World Wide Web", 2001 (figures comparing sampled and true link distributions).
    """
    if isinstance(nodes, PageSample):
        population = nodes.population if population is None else population
        nodes = nodes.nodes
    adj = as_adjacency(adjacency)
    n = adj.shape[0]
    sample = np.asarray(nodes, dtype=np.int64).ravel()
    if sample.size == 0:
        raise ConfigError("the sample is empty")
    if sample.min() < 0 or sample.max() >= n:
        raise ConfigError(f"sampled nodes must be in [0, {n})")
    mask = np.ones(n, bool) if population is None else np.asarray(population, bool)
    out_deg = np.diff(adj.indptr)
    in_deg = np.bincount(adj.indices, minlength=n)
    names = getattr(adjacency, "site_names", None)
    sites = getattr(adjacency, "sites", None) if sites is None else sites
    return BiasReport(
        size=int(sample.size),
        distinct=int(np.unique(sample).size),
        population=int(mask.sum()),
        in_degree=_degree_bias(in_deg[mask], in_deg[sample]),
        out_degree=_degree_bias(out_deg[mask], out_deg[sample]),
        sites=None if sites is None else _site_bias(np.asarray(sites), mask, sample, names),
    )


def _site_bias(sites: np.ndarray, mask: np.ndarray, sample: np.ndarray,
               names: Any) -> SiteBias | None:
    """Site shares of the sample against the population (None: one site)."""
    n_sites = int(sites.max(initial=-1)) + 1
    truth = np.bincount(sites[mask], minlength=n_sites)
    if np.count_nonzero(truth) < 2:
        return None
    drawn = np.bincount(sites[sample], minlength=n_sites)
    order = np.lexsort((np.arange(n_sites), -truth))
    order = order[truth[order] > 0]
    listed, rest = order[:SITES_LISTED], order[SITES_LISTED:]
    label = list(names) if names is not None and len(names) >= n_sites else \
        [f"site {s}" for s in range(n_sites)]
    true_counts = np.r_[truth[listed], truth[rest].sum()] if rest.size else truth[listed]
    counts = np.r_[drawn[listed], drawn[rest].sum()] if rest.size else drawn[listed]
    true_frac = true_counts / truth.sum()
    sample_frac = counts / max(int(sample.size), 1)
    chi2, chi2_p = _chi_square(counts, true_frac * sample.size)
    return SiteBias([label[s] for s in listed.tolist()] + (["(other sites)"] if rest.size
                                                           else []),
                    true_frac, sample_frac, sample_frac / true_frac, chi2, chi2_p)


def _degree_bias(truth: np.ndarray, sample: np.ndarray) -> DegreeBias:
    top = int(max(truth.max(initial=0), sample.max(initial=0)))
    edges = np.concatenate([[0], 2 ** np.arange(int(np.log2(max(top, 1))) + 2)])
    true_counts = np.histogram(truth, bins=edges)[0]
    sample_counts = np.histogram(sample, bins=edges)[0]
    true_frac = true_counts / max(truth.size, 1)
    sample_frac = sample_counts / sample.size
    ratio = np.divide(sample_frac, true_frac, out=np.full(true_frac.size, np.nan),
                      where=true_frac > 0)
    ks = stats.ks_2samp(sample, truth)
    chi2, chi2_p = _chi_square(sample_counts, true_frac * sample.size)
    return DegreeBias(edges.astype(np.int64), true_frac, sample_frac, ratio,
                      float(truth.mean()), float(sample.mean()), float(ks.statistic),
                      float(ks.pvalue), chi2, chi2_p)


def _chi_square(observed: np.ndarray, expected: np.ndarray) -> tuple[float, float]:
    """Pearson chi-square after merging buckets left to right until each expects >= 5."""
    obs_m: list[float] = []
    exp_m: list[float] = []
    o_acc = e_acc = 0.0
    for o, e in zip(observed, expected, strict=True):  # at most ~40 buckets
        o_acc, e_acc = o_acc + o, e_acc + e
        if e_acc >= 5:
            obs_m.append(o_acc)
            exp_m.append(e_acc)
            o_acc = e_acc = 0.0
    if obs_m:
        obs_m[-1] += o_acc
        exp_m[-1] += e_acc
    if len(obs_m) < 2:
        return 0.0, 1.0
    res = stats.chisquare(np.asarray(obs_m), np.asarray(exp_m))
    return float(res.statistic), float(res.pvalue)
