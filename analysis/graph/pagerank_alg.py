"""PageRank by power iteration on a sparse link matrix (Page and Brin; Najork and Wiener)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from webcrawl.analysis._compiled import compiled, run_parallel, worker_count
from webcrawl.analysis._sparse import as_adjacency, as_distribution
from webcrawl.storage.errors import ConfigError, PowerIterationFailedConvergence

__all__ = ["PageRankResult", "pagerank", "transition_transpose"]

NORMALIZATIONS = ("sum", "mean")
#: Links a thread of the compiled step is given at the least (smaller graphs: one
#: thread; a thread's start and its vector cost more than the links it would save).
_LINKS_PER_THREAD = 1 << 20


@dataclass(frozen=True)
class PageRankResult:
    """The outcome of :func:`pagerank`.

    Attributes
    ----------
    scores : ndarray of float64, shape (n,)
        PageRank of each node, normalised as requested (sum 1 or sum n).
    iterations : int
        Number of power iterations (sparse matrix-vector products) performed.
    residual : float
        L1 change of the probability vector in the last iteration (below ``tol``).
    converged : bool
        Always True: a run that does not converge raises instead.
    """

    scores: np.ndarray
    iterations: int
    residual: float
    converged: bool = True


def transition_transpose(adjacency: Any) -> tuple[sp.csr_array, np.ndarray]:
    """Return ``(P^T, dangling)`` for the random walk on ``adjacency``.

    ``P`` is the adjacency with each row divided by its total weight (out-degree when
    the weights are link counts); ``P^T`` is returned in CSR form so that one step of the
    walk, ``x @ P``, is the fast product ``P^T @ x``.  ``dangling`` is a boolean mask
    of the rows with no out-links; ``x.sum(where=dangling)`` is their mass.
    """
    adj = as_adjacency(adjacency)
    out_weight = np.asarray(adj.sum(axis=1)).ravel()
    dangling = out_weight == 0
    inv = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=out_weight > 0)
    scaled = sp.csr_array(
        (adj.data * np.repeat(inv, np.diff(adj.indptr)), adj.indices, adj.indptr),
        shape=adj.shape,
    )
    # The CSC arrays of P are exactly the CSR arrays of P^T.
    csc = scaled.tocsc()
    p_t = sp.csr_array((csc.data, csc.indices, csc.indptr), shape=adj.shape)
    return p_t, dangling


def pagerank(
    adjacency: Any,
    alpha: float = 0.85,
    *,
    personalization: Any = None,
    dangling: Any = None,
    tol: float = 1e-10,
    max_iter: int = 1000,
    normalize: Literal["sum", "mean"] = "sum",
    x0: Any = None,
) -> PageRankResult:
    """PageRank of every node of a directed graph, by power iteration.

    Iterates ``x <- alpha * (x P + (sum of x over dangling nodes) * d) + (1 - alpha) * p``
    until the L1 change of ``x`` falls below ``tol``.

    Parameters
    ----------
    adjacency : scipy sparse array or matrix, shape (n, n)
        ``adjacency[i, j]`` is the weight (number of links) from node i to node j.
        Duplicate entries are summed; self-loops are ordinary links.  A
        :class:`webcrawl.analysis.graph.captured.CapturedGraph` is accepted too.
    alpha : float, default 0.85
        Damping factor: probability of following a link rather than jumping.
    personalization : array_like of shape (n,), optional
        Jump distribution ``p`` (normalised to sum 1).  Default: uniform.
    dangling : array_like of shape (n,), optional
        Where the mass of nodes without out-links goes (normalised to sum 1).
        Default: the personalization vector.
    tol : float, default 1e-10
        Stop when the L1 norm of the change of the probability vector is below ``tol``.
    max_iter : int, default 1000
        Give up after this many iterations.
    normalize : {"sum", "mean"}, default "sum"
        ``"sum"``: scores sum to 1 (a probability distribution).  ``"mean"``: scores
        sum to n, so the average page scores 1 (Najork and Wiener's convention).
    x0 : array_like of shape (n,), optional
        Starting vector (normalised to sum 1).  Default: uniform.

    Returns
    -------
    PageRankResult
        ``scores``, ``iterations``, ``residual`` (last L1 change) and ``converged``.

    Raises
    ------
    PowerIterationFailedConvergence
        If the L1 change is still ``>= tol`` after ``max_iter`` iterations.
    EmptyGraphError
        If the graph has no nodes.
    ConfigError
        On a non-square or negative adjacency, a bad vector, or bad parameters.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_array(np.array([[0, 1, 1], [0, 0, 1], [1, 0, 0]]))
    >>> res = pagerank(A)
    >>> np.round(res.scores, 4)
    array([0.3878, 0.2148, 0.3974])
    >>> res.converged, bool(res.residual < 1e-10)
    (True, True)
    >>> float(np.round(pagerank(A, normalize="mean").scores.sum(), 6))
    3.0

    Notes
    -----
    *Variant.*  The one implemented by networkx: weighted out-links (the weight of a
    link is its multiplicity), dangling mass redistributed by ``dangling`` (default
    ``p``), the jump by ``p``.  With the same parameters the scores agree with
    ``networkx.pagerank`` run to a tight tolerance.

    *Stopping rule.*  We stop when ``||x_new - x||_1 < tol``.  networkx stops when
    ``||x_new - x||_1 < n * tol``: the threshold grows with the graph, while the
    vector's total mass stays 1.  On a 1M-node graph with networkx's default
    ``tol=1e-6`` the threshold is 1, which the first step (at most 2 in L1) nearly
    always meets: it stops after ONE iteration, and its answer was measured 0.51 (L1)
    away from the converged vector.  The error after stopping is at most
    ``residual * alpha / (1 - alpha)`` in L1 (geometric convergence with ratio
    ``alpha``), so ``tol=1e-10`` gives scores correct to about 6e-10 in L1, in about
    ``log(tol) / log(alpha)`` (about 140) iterations at most.

    *Complexity.*  Each iteration is one sparse matrix-vector product, O(m), plus a
    few O(n) vector operations, all in float64: ``x P`` is computed as
    ``A^T (x / w)`` (``w`` the out-weights) over the adjacency's own arrays, so no
    copy of the graph is made: with numba (the optional extra ``webcrawl[fast]``) by
    a compiled push over the rows, cut into one run of about equal links per CPU,
    each run on its own thread into its own vector (summed after: results equal to
    the one-thread sums up to rounding); without it through the transpose *view* of
    the adjacency (a CSC array over the same arrays).  Memory: the adjacency as
    given (12 bytes per link in CSR with int32 indices; 4 for the loader's graph,
    whose values are one shared float) plus six vectors of n floats and one more
    per thread past the first; on a 288M-link graph, 3.5 GB less than building
    ``P^T`` (``docs/results/scale.md``).

    References
    ----------
    .. [1] L. Page, S. Brin, R. Motwani and T. Winograd, "The PageRank citation
       ranking: bringing order to the Web", Stanford InfoLab, 1999.
    .. [2] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality
       pages", WWW 2001.
    .. [3] A. Langville and C. Meyer, "Deeper inside PageRank", Internet Mathematics
       1(3), 2004.
    """
    _check_parameters(alpha, tol, max_iter, normalize)
    adj = as_adjacency(adjacency)
    n = adj.shape[0]
    out_weight = np.asarray(adj.sum(axis=1)).ravel()
    dangling_mask = out_weight == 0
    # One step of the walk, x P, is A^T (x / w): the transpose of a CSR array is a CSC
    # view of the same arrays (no copy), so the graph is held once, 12 bytes a link.
    scale = np.divide(alpha, out_weight, out=np.zeros_like(out_weight),
                      where=~dangling_mask)
    del out_weight
    walk = _walk_step(adj)
    uniform = np.full(n, 1.0 / n)
    p = uniform if personalization is None else as_distribution(personalization, n,
                                                                "personalization")
    d = p if dangling is None else as_distribution(dangling, n, "dangling")
    x = uniform.copy() if x0 is None else as_distribution(x0, n, "x0")
    dangling_mass = _mass_function(dangling_mask)
    change = np.empty(n)
    scaled = np.empty(n)
    residual = float("inf")
    for iteration in range(1, max_iter + 1):
        lost = alpha * dangling_mass(x)
        x_new = walk(np.multiply(x, scale, out=scaled))
        if personalization is None and dangling is None:
            x_new += (lost + 1.0 - alpha) / n  # uniform jump: a scalar
        elif d is p:
            x_new += (lost + 1.0 - alpha) * p
        else:
            x_new += (1.0 - alpha) * p
            x_new += lost * d
        np.subtract(x_new, x, out=change)
        residual = float(np.abs(change, out=change).sum())
        x = x_new
        if residual < tol:
            scores = x / x.sum()
            if normalize == "mean":
                scores *= n
            return PageRankResult(scores, iteration, residual, True)
    raise PowerIterationFailedConvergence(max_iter, residual)


def _walk_step(adj: sp.csr_array) -> Callable[[np.ndarray], np.ndarray]:
    """``v -> A^T v`` without copying the graph.

    With numba: a compiled push over the CSR arrays, the rows cut into one run per CPU
    of about as many links each, every run on its own thread adding into its own
    vector (the first run into the result), the vectors summed at the end.  A graph
    whose values are one stored float (the loader's collapsed graph: a zero-stride
    view) is pushed over its indices alone.  Without numba: through the transpose view
    (a CSC array over the same arrays); a zero-stride graph's values are written out
    once (8 bytes a link, as scipy's product would copy them at every step).
    """
    n = adj.shape[0]
    shared = bool(adj.nnz) and adj.data.strides == (0,)
    push = compiled(_push)
    if push is not None:
        indptr, indices = adj.indptr, adj.indices
        value = float(adj.data[0]) if shared else 1.0
        weights = adj.data[:0] if shared else adj.data
        bounds = _row_runs(indptr, worker_count())
        spare = [np.empty(n) for _ in bounds[2:]]

        def step(v: np.ndarray) -> np.ndarray:
            out = np.zeros(n)
            for extra in spare:
                extra.fill(0.0)
            targets = [out, *spare]
            run_parallel([(push, (indptr, indices, weights, v, targets[k], bounds[k],
                                  bounds[k + 1])) for k in range(len(targets))])
            for extra in spare:
                out += extra
            if value != 1.0:
                out *= value
            return out
        return step
    if shared:
        adj = sp.csr_array((np.full(adj.nnz, float(adj.data[0])), adj.indices, adj.indptr),
                           shape=adj.shape)
    a_t = adj.T
    return lambda v: np.asarray(a_t @ v)


def _row_runs(indptr: np.ndarray, parts: int) -> list[int]:
    """Row boundaries ``[0, ..., n]`` cutting the rows into at most ``parts`` runs of
    about equal link counts (fewer runs on graphs too small to be worth a thread)."""
    n, m = indptr.size - 1, int(indptr[-1])
    parts = max(1, min(parts, m // _LINKS_PER_THREAD))
    cuts = np.searchsorted(indptr, np.arange(1, parts) * (m / parts), side="left")
    return sorted({0, n, *(int(c) for c in np.clip(cuts, 0, n))})


def _push(indptr: Any, indices: Any, weights: Any, v: Any, out: Any, lo: int,
          hi: int) -> None:  # pragma: no cover - compiled by numba
    """``out += A[lo:hi]^T v[lo:hi]``: each row's weight (or 1: ``weights`` empty) times
    ``v`` of the row added to its targets."""
    weighted = weights.size > 0
    for u in range(lo, hi):
        x = v[u]
        if x != 0.0:
            if weighted:
                for k in range(indptr[u], indptr[u + 1]):
                    out[indices[k]] += x * weights[k]
            else:
                for k in range(indptr[u], indptr[u + 1]):
                    out[indices[k]] += x


def _mass_function(mask: np.ndarray) -> Callable[[np.ndarray], float]:
    """``x -> sum of x over mask``, by the cheaper of a gather and a masked sum.

    Not ``mask @ x``: a BLAS dot may start threads, which is erratic on shared cores.
    """
    index = np.flatnonzero(mask)
    if index.size * 8 < mask.size:
        return lambda x: float(x[index].sum())
    return lambda x: float(x.sum(where=mask))


def _check_parameters(alpha: float, tol: float, max_iter: int, normalize: str) -> None:
    if not 0.0 <= alpha <= 1.0:
        raise ConfigError(f"alpha must be in [0, 1], got {alpha}")
    if not tol > 0:
        raise ConfigError(f"tol must be positive, got {tol}")
    if max_iter < 1:
        raise ConfigError(f"max_iter must be at least 1, got {max_iter}")
    if normalize not in NORMALIZATIONS:
        raise ConfigError(f"normalize must be one of {NORMALIZATIONS}, got {normalize!r}")
