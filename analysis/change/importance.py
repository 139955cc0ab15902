"""How much each page of a collection matters: the weights of the revisit objective.

The optimal revisit policies maximise ``sum w_i U(f_i)`` (:mod:`webcrawl.analysis.change.
allocation`); ``w_i`` is the page's importance, as Kolobov et al. weigh each URL by its
importance score:

``uniform``   every page 1: Cho and Garcia-Molina's unweighted freshness.
``pagerank``  the page's PageRank in the crawl's captured graph of pages
              (:func:`webcrawl.analysis.graph.pagerank`).
``inlinks``   the number of distinct pages of the crawl linking to it, plus one (so a
              page nobody links to still counts; a seed, say).
given         any positive weights, by URL (:func:`given_weights`).

Weights are scaled to mean 1 over the collection, so a weighted objective reads in the
same units as the unweighted one; only their ratios change the allocation.

References
----------
.. [1] A. Kolobov, Y. Peres, E. Lubetzky and E. Horvitz, "Optimal freshness crawl under
   politeness constraints", SIGIR 2019 (importance-weighted freshness).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike
from webcrawl.storage.arrays import FloatArray
from webcrawl.storage.errors import ConfigError

__all__ = ["IMPORTANCE", "given_weights", "importance_weights", "read_weights"]

#: The importance measures computed from the crawl (a file of weights is the fourth).
IMPORTANCE = ("uniform", "pagerank", "inlinks")


def _scaled(values: FloatArray) -> FloatArray:
    return np.asarray(values / values.mean(), dtype=np.float64)


def importance_weights(db: str | Path, url_ids: ArrayLike, kind: str = "uniform") -> FloatArray:
    """Importance of the collection pages ``url_ids`` of the crawl ``db``, mean 1.

    Parameters
    ----------
    db : path
        The crawl database.
    url_ids : array_like of int
        The collection's URL ids, in the order of the result.
    kind : {"uniform", "pagerank", "inlinks"}

    Returns
    -------
    ndarray
        Positive weights with mean 1.  A page outside the captured graph of pages (none
        in a crawl's own collection) gets the smallest weight of the others.

    Notes
    -----
    The graph is the crawl's pages and the links among them, each URL its own node
    (copies kept apart, ``duplicates="keep"``), so every collection page has a node.
    """
    ids = np.asarray(url_ids, dtype=np.int64)
    if kind not in IMPORTANCE:
        raise ConfigError(f"unknown importance {kind!r}; choose from {', '.join(IMPORTANCE)} "
                          "or give a file of weights")
    if kind == "uniform" or ids.size == 0:
        return np.ones(ids.size)
    from webcrawl.analysis.graph import load_graph, pagerank

    graph = load_graph(db, duplicates="keep", sites="hosts")
    if kind == "pagerank":
        score = np.asarray(pagerank(graph.adjacency).scores, dtype=np.float64)
    else:
        adjacency = graph.adjacency.tocsc()
        score = np.diff(adjacency.indptr).astype(np.float64) + 1.0
    by_id = np.full(int(max(ids.max(), graph.store_ids.max(initial=-1))) + 1, np.nan)
    by_id[graph.store_ids[graph.store_ids >= 0]] = score[graph.store_ids >= 0]
    weights = by_id[ids]
    found = np.isfinite(weights) & (weights > 0)
    floor = weights[found].min() if found.any() else 1.0
    return _scaled(np.where(found, weights, floor))


def given_weights(urls: Sequence[str], weights: Mapping[str, float]) -> FloatArray:
    """Weights of ``urls`` from a mapping URL -> weight, mean 1 (ConfigError when a URL
    has none or a weight is not positive)."""
    missing = [u for u in urls if u not in weights]
    if missing:
        raise ConfigError(f"the importance weights lack {len(missing)} of the {len(urls)} "
                          f"pages (e.g. {missing[0]})")
    values = np.array([weights[u] for u in urls], dtype=np.float64)
    if values.size and not np.all(np.isfinite(values) & (values > 0)):
        raise ConfigError("importance weights must be positive numbers")
    return _scaled(values) if values.size else values


def read_weights(path: Path) -> dict[str, float]:
    """URL -> weight from a TSV file with ``url`` and ``weight`` columns (header line)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read importance weights {path}: {exc}") from None
    header = lines[0].split("\t") if lines else []
    if "url" not in header or "weight" not in header:
        raise ConfigError(f"{path}: need a TSV with 'url' and 'weight' columns")
    iu, iw = header.index("url"), header.index("weight")
    out: dict[str, float] = {}
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        try:
            out[cells[iu]] = float(cells[iw])
        except (IndexError, ValueError):
            raise ConfigError(f"{path}, line {n}: bad weight") from None
    return out
