"""The walkers every sampler of :mod:`webcrawl.analysis.sampling.walks` runs: vectorised
random walks on CSR arrays, their step rules, the walks' expected visits, and the graph
arrays and populations they walk.

Every walk runs ``walkers`` independent walks as one vector: each step is a handful of
numpy operations over the walkers on precomputed CSR arrays (``indptr``, ``indices``),
so the per-step work per walker is O(1) and there is no Python loop over nodes or edges.
Random numbers are drawn ``_RNG_CHUNK`` steps at a time (three per walker and step).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from webcrawl.storage.errors import ConfigError

# Steps per batch of pre-drawn random numbers (bounds memory: chunk * walkers floats).
_RNG_CHUNK = 256


# --------------------------------------------------------------------------- walks


@dataclass
class _Walk:
    """Vectorised walkers on CSR arrays: ``pos[w]`` is walker w's page."""

    indptr: np.ndarray
    indices: np.ndarray
    degree: np.ndarray
    pos: np.ndarray
    rng: np.random.Generator
    traversals: int = 0
    seen: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    def neighbour(self, u: np.ndarray) -> np.ndarray:
        """A uniformly random link target of each walker's page (``u`` in [0, 1))."""
        deg = self.degree[self.pos]
        if self.indices.size == 0:
            return self.pos.copy()
        idx = self.indptr[self.pos] + (u * deg).astype(np.int64)
        # Pages without links have no slot of their own: stay put (callers jump).
        nxt = self.indices[np.minimum(idx, self.indices.size - 1)]
        return np.where(deg > 0, nxt, self.pos)

    def mark(self) -> None:
        self.seen[self.pos] = True


StepFn = Callable[[_Walk, np.ndarray], None]


def _run(walk: _Walk, step: StepFn, steps: int, *, record: bool) -> np.ndarray:
    """Advance every walker ``steps`` times; return the visited pages (step-major)."""
    w = walk.pos.size
    trace = np.empty((steps if record else 0, w), dtype=np.int64)
    done = 0
    while done < steps:
        chunk = min(_RNG_CHUNK, steps - done)
        draws = walk.rng.random((chunk, 3, w))
        for k in range(chunk):
            step(walk, draws[k])
            if record:
                trace[done + k] = walk.pos
        done += chunk
    walk.traversals += steps * w
    return trace.ravel()


def _self_loop_step(walk: _Walk, u: np.ndarray) -> None:
    """The paper's step: one of the page's out-links or its self-loop, uniformly."""
    k = (u[0] * (walk.degree[walk.pos] + 1)).astype(np.int64)
    stay = k >= walk.degree[walk.pos]
    idx = np.minimum(walk.indptr[walk.pos] + k, max(walk.indices.size - 1, 0))
    nxt = walk.indices[idx] if walk.indices.size else walk.pos
    walk.pos = np.where(stay, walk.pos, nxt)
    walk.mark()


def _jump_step(n: int, jump: float) -> StepFn:
    def step(walk: _Walk, u: np.ndarray) -> None:
        nxt = walk.neighbour(u[0])
        jumping = (u[1] < jump) | (walk.degree[walk.pos] == 0)
        walk.pos = np.where(jumping, (u[2] * n).astype(np.int64), nxt)
        walk.mark()
    return step


def _undirected_step(walk: _Walk, u: np.ndarray) -> None:
    walk.pos = walk.neighbour(u[0])
    walk.mark()


def _visited_jump_step(jump: float, visited: list[np.ndarray]) -> StepFn:
    """Henzinger et al.'s step: random jumps go to a page already visited."""
    def step(walk: _Walk, u: np.ndarray) -> None:
        pool = visited[0]
        nxt = walk.neighbour(u[0])
        jumping = (u[1] < jump) | (walk.degree[walk.pos] == 0)
        target = pool[(u[2] * pool.size).astype(np.int64)]
        walk.pos = np.where(jumping, target, nxt)
        new = walk.pos[~walk.seen[walk.pos]]
        if new.size:
            walk.seen[new] = True
            visited[0] = np.concatenate([pool, np.unique(new)])
    return step


# ------------------------------------------------------------------ graph arrays


#: ``expected(v)``: the walk's expected visits one step after the visits ``v``
#: (``P^T v``, P its transition matrix).
ExpectedFn = Callable[[np.ndarray], np.ndarray]


def _self_loop_expected(adj: sp.csr_array) -> ExpectedFn:
    """``P^T v`` for the walk on A + I, rows normalised (``adj`` without self-loops)."""
    inv = 1.0 / (np.diff(adj.indptr) + 1.0)
    into = (adj.T).tocsr()

    def expected(v: np.ndarray) -> np.ndarray:
        w = v * inv
        return np.asarray(into @ w + w)
    return expected


def _jump_expected(adj: sp.csr_array, jump: float) -> ExpectedFn:
    """``P^T v`` for the walk with uniform jumps (always from a page without links)."""
    n = adj.shape[0]
    deg = np.diff(adj.indptr)
    linked = deg > 0
    inv = np.where(linked, (1.0 - jump) / np.maximum(deg, 1), 0.0)
    into = (adj.T).tocsr()

    def expected(v: np.ndarray) -> np.ndarray:
        jumped = float(jump * v[linked].sum() + v[~linked].sum())
        return np.asarray(into @ (v * inv) + jumped / n, dtype=np.float64)
    return expected


def _directed_arrays(adj: sp.csr_array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    indptr = adj.indptr.astype(np.int64)
    return indptr, adj.indices.astype(np.int64), np.diff(indptr)


def _loopless(adj: sp.csr_array) -> sp.csr_array:
    """The graph without its self-loops (the walk adds exactly one per page)."""
    coo = adj.tocoo()
    off = coo.row != coo.col
    return sp.csr_array((coo.data[off], (coo.row[off], coo.col[off])), shape=adj.shape)


def _undirected_arrays(adj: sp.csr_array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR of the undirected multigraph A + A^T: degree = in-links + out-links."""
    coo = adj.tocoo()
    rows = np.concatenate([coo.row, coo.col]).astype(np.int64)
    cols = np.concatenate([coo.col, coo.row]).astype(np.int64)
    order = np.argsort(rows, kind="stable")
    degree = np.bincount(rows, minlength=adj.shape[0]).astype(np.int64)
    indptr = np.concatenate([[0], np.cumsum(degree)])
    return indptr, cols[order], degree


def _starts(adj: sp.csr_array, starts: Any, walkers: int) -> np.ndarray:
    n = adj.shape[0]
    start = np.atleast_1d(np.asarray([0] if starts is None else starts, dtype=np.int64))
    if start.size == 0 or start.min() < 0 or start.max() >= n:
        raise ConfigError(f"start pages must be node indices in [0, {n}), got {start}")
    return start[np.arange(walkers) % start.size]


def _weak_population(adj: sp.csr_array, start: np.ndarray) -> np.ndarray:
    _, labels = csgraph.connected_components(adj, directed=True, connection="weak")
    return np.isin(labels, labels[start])


def _reachable(adj: sp.csr_array, start: np.ndarray) -> np.ndarray:
    # One BFS from a virtual root linked to every start page.
    n = adj.shape[0]
    starts = np.unique(start)
    root = sp.csr_array((np.ones(starts.size), (np.full(starts.size, n), starts)),
                        shape=(n + 1, n + 1))
    grown = sp.block_array([[adj, None], [None, sp.csr_array((1, 1))]], format="csr")
    order = csgraph.breadth_first_order(grown + root, n, directed=True,
                                        return_predecessors=False)
    mask = np.zeros(n + 1, bool)
    mask[order] = True
    return mask[:n]


def _undirected_walk(adj: sp.csr_array, start: np.ndarray, rng: np.random.Generator) -> _Walk:
    walk = _Walk(*_undirected_arrays(adj), start.copy(), rng,
                 seen=np.zeros(adj.shape[0], bool))
    walk.mark()
    return walk
