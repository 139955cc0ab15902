"""A database's graph and its PageRank, kept between commands.

``webcrawl analyze pagerank`` and then ``webcrawl compare`` on one file, each its own
process, computed the same PageRank of the same graph twice.  Here a graph loaded from
a database remembers where it came from (:class:`GraphSource`: the file's state before
the load and the load's options), and :func:`source_pagerank` keeps the PageRank it
computes beside the database (:mod:`webcrawl.storage.results_cache`) for the next
command that loads the same graph from the file in the same state and asks for the
same damping and tolerance.  Anything else (a file written since, a crawl still
running, another graph kind, duplicate rule or site rule, another damping, tolerance,
thread count or version of the code) computes it again.

A kept result is the computed one bit for bit: PageRank's sums depend on how many
threads pushed the links (:func:`webcrawl.analysis.graph.pagerank_alg.pagerank`), so
the thread count and whether numba is used are part of the key.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from webcrawl.analysis._compiled import compiled, worker_count
from webcrawl.analysis.graph import loader
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.graph.pagerank_alg import PageRankResult, _push, pagerank
from webcrawl.storage.results_cache import (
    DatabaseState,
    database_state,
    load_result,
    store_result,
)

__all__ = ["GraphSource", "load_source_graph", "source_pagerank"]


@dataclass(frozen=True)
class GraphSource:
    """The database a graph was loaded from: its path, its state before the load
    (None: nothing may be kept, see :func:`webcrawl.storage.results_cache.database_state`)
    and every option of :func:`~webcrawl.analysis.graph.loader.load_graph`, defaults
    included."""

    db: Path
    state: DatabaseState | None
    options: dict[str, Any]

    def with_options(self, **changes: Any) -> GraphSource:
        """The same source with some load options changed (a graph known to equal the
        one those options load)."""
        return GraphSource(self.db, self.state, {**self.options, **changes})


def load_source_graph(db_path: str | Path, **options: Any) -> tuple[CapturedGraph, GraphSource]:
    """:func:`~webcrawl.analysis.graph.loader.load_graph` with ``options``, and where the
    graph came from (the file's state taken before it is read)."""
    unknown = set(options) - set(_LOAD_DEFAULTS)
    if unknown:
        raise TypeError(f"load_graph() has no option {sorted(unknown)[0]!r}")
    state = database_state(db_path, settle=_worth_waiting(db_path))
    graph = loader.load_graph(db_path, **options)
    return graph, GraphSource(Path(db_path), state, {**_LOAD_DEFAULTS, **options})


#: A database at least this large is waited for when it was just written (at most
#: ``QUIET_SECONDS``) so that its PageRank can be kept: loading and ranking it takes
#: seconds or more (a 2.7 GB import: 80 s), so ``import edges`` then ``analyze
#: pagerank`` then ``compare`` typed in a row keep and reuse it.  Smaller ones are not
#: waited for: their PageRank costs less than the wait.
SETTLE_MIN_BYTES = 64 << 20


def _worth_waiting(db_path: str | Path) -> bool:
    size = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            size += os.stat(f"{db_path}{suffix}").st_size
    return size >= SETTLE_MIN_BYTES


#: Every keyword option of ``load_graph`` and its default.
_LOAD_DEFAULTS = {name: p.default for name, p in
                  inspect.signature(loader.load_graph).parameters.items()
                  if p.kind is inspect.Parameter.KEYWORD_ONLY}


#: Modules whose code makes the graph and its PageRank: a change to one is a new key.
_CODE = ("webcrawl.analysis.graph.loader", "webcrawl.analysis.graph.pagerank_alg",
         "webcrawl.storage.reader", "webcrawl.storage._linkread")


def _code_digest() -> str:
    import importlib

    digest = hashlib.sha256()
    for name in _CODE:
        digest.update(Path(inspect.getfile(importlib.import_module(name))).read_bytes())
    return digest.hexdigest()[:16]


def source_pagerank(source: GraphSource | None, adjacency: Any, alpha: float = 0.85, *,
                    tol: float = 1e-10) -> PageRankResult:
    """PageRank (sum 1) of ``adjacency``, the graph loaded from ``source``: the one kept
    from an earlier command when it matches, else computed (and kept).

    Parameters
    ----------
    source : GraphSource or None
        Where ``adjacency`` was loaded from (:func:`load_source_graph`); None computes
        and keeps nothing.
    adjacency : sparse array
        The loaded graph's adjacency, unchanged.
    alpha, tol : float
        As :func:`webcrawl.analysis.graph.pagerank_alg.pagerank`.

    Returns
    -------
    PageRankResult
        Equal, bit for bit, to ``pagerank(adjacency, alpha, tol=tol)``.
    """
    if source is None or source.state is None:
        return pagerank(adjacency, alpha, tol=tol)
    params = {"graph": source.options, "alpha": float(alpha), "tol": float(tol),
              "threads": worker_count(), "compiled": compiled(_push) is not None,
              "code": _code_digest()}
    n = adjacency.shape[0]
    # The file must still be as it was before the load, or the graph is not its own.
    current = database_state(source.db) == source.state
    kept = load_result(source.db, "pagerank", params, source.state) if current else None
    if kept is not None and kept["scores"].shape == (n,):
        return PageRankResult(kept["scores"], int(kept["iterations"]),
                              float(kept["residual"]), True)
    result = pagerank(adjacency, alpha, tol=tol)
    if current:
        store_result(source.db, "pagerank", params, source.state,
                     {"scores": result.scores, "iterations": np.array(result.iterations),
                      "residual": np.array(result.residual)})
    return result
