"""Transfer-time models: how long a simulated fetch of each page takes.

A timed replay (:mod:`webcrawl.analysis.ordering.timed`) needs each page's fetch time.
Baeza-Yates et al. computed it from the page's size and its site's transfer rate, both
measured in their crawl [1]_.  The user picks one of three models, and every output
names it with its parameters (:meth:`TransferModel.describe`, :meth:`TransferModel.to_dict`):

``recorded``
    Each page's measured fetch time in the recorded crawl (its site's median where
    none was measured, else the median of all, else ``seconds``): meaningful for a
    crawl of the real web, a few milliseconds for a crawl served on loopback.
``constant``
    ``seconds`` for every page.
``bandwidth``
    ``latency[site] + size / bandwidth[site]``: the page's size in bytes (the recorded
    crawl's body size, or the sizes the caller gives, e.g. a generated web's; a page
    without one gets its site's median, else the median of all, else ``page_size``)
    over its site's bandwidth, plus its site's latency (connection set-up and first
    byte).  Each site's bandwidth and latency are the given medians, or, with a spread
    ``sigma > 0``, drawn from a log-normal law of that median and ``sigma`` (the
    standard deviation of the natural logarithm).  A site's draw is keyed by its
    name and ``seed`` (a hash, not the order sites were met), so the same site gets
    the same rates in any crawl of it, whatever the order.

In every model ``crawler_time`` seconds are added to each fetch: the crawler's own
time per page (parsing, storing), which a loopback crawl shows to dominate (a
16-connection replay of a crawl that took 13.0 s takes 7.3 s without it).

References
----------
.. [1] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country:
   better strategies than breadth-first for web page ordering", WWW 2005 (transfer
   times from page sizes and per-site transfer rates measured in the crawl).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.storage.errors import ConfigError

__all__ = [
    "TRANSFER_MODELS",
    "TransferModel",
    "site_rates",
]

TransferKind = Literal["recorded", "constant", "bandwidth"]
#: The models a user can choose (``compare --transfer``).
TRANSFER_MODELS: tuple[str, ...] = ("recorded", "constant", "bandwidth")

#: Default size of a page without a measured one, in bytes: the order of a
#: national crawl's median HTML page (tens of kilobytes).
DEFAULT_PAGE_SIZE = 20_000.0


@dataclass(frozen=True)
class TransferModel:
    """The fetch time of each page of a timed replay (module docstring).

    Attributes
    ----------
    kind : {"recorded", "constant", "bandwidth"}
    seconds : float
        ``constant``: every page's fetch time; ``recorded``: the time of pages
        nothing was measured for when nothing was measured at all.
    bandwidth, bandwidth_spread : float
        ``bandwidth``: the sites' median bandwidth (bytes/s) and the log-normal
        ``sigma`` of its spread over sites (0: every site the median).
    latency, latency_spread : float
        ``bandwidth``: the sites' median latency (s) and its spread.
    page_size : float
        Bytes of a page without a known size (``bandwidth``).
    crawler_time : float
        The crawler's own seconds per page, added to every fetch.
    seed : int
        Seed of the per-site draws.
    """

    kind: TransferKind = "recorded"
    seconds: float = 0.5
    bandwidth: float = 50_000.0
    bandwidth_spread: float = 0.0
    latency: float = 0.05
    latency_spread: float = 0.0
    page_size: float = DEFAULT_PAGE_SIZE
    crawler_time: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in TRANSFER_MODELS:
            raise ConfigError(f"unknown transfer model {self.kind!r}; choose from "
                              f"{', '.join(TRANSFER_MODELS)}")
        for name in ("seconds", "latency", "crawler_time", "bandwidth_spread",
                     "latency_spread"):
            value = getattr(self, name)
            if not (value >= 0 and np.isfinite(value)):
                raise ConfigError(f"transfer {name} must be finite and >= 0, got {value}")
        for name in ("bandwidth", "page_size"):
            value = getattr(self, name)
            if not (value > 0 and np.isfinite(value)):
                raise ConfigError(f"transfer {name} must be finite and > 0, got {value}")

    def describe(self) -> str:
        """The model and its parameters in one line, as every output names it."""
        if self.kind == "recorded":
            text = ("recorded fetch times (site median where none was measured, "
                    f"{self.seconds:g} s if nothing was)")
        elif self.kind == "constant":
            text = f"{self.seconds:g} s per page"
        else:
            text = (f"latency + size / bandwidth per site: bandwidth "
                    f"{_spread(self.bandwidth, self.bandwidth_spread, 'B/s')}, latency "
                    f"{_spread(self.latency, self.latency_spread, 's')}"
                    + (f", seed {self.seed}" if self.bandwidth_spread or self.latency_spread
                       else "")
                    + f"; page sizes as measured or given (else site median, else "
                    f"{self.page_size:,.0f} B)")
        if self.crawler_time:
            text += f"; + {self.crawler_time:g} s crawler time per page"
        return f"transfer model: {text}"

    def to_dict(self) -> dict[str, Any]:
        """The model's parameters, JSON-ready, with its one-line description."""
        return {**asdict(self), "description": self.describe()}

    def durations(self, graph: CapturedGraph, *, db_path: str | Path | None = None,
                  sizes: np.ndarray | None = None) -> np.ndarray:
        """Fetch seconds of each node of ``graph`` under this model.

        Parameters
        ----------
        graph : CapturedGraph
        db_path : path, optional
            The crawl database ``graph`` was loaded from: the recorded times
            (``recorded``) or body sizes (``bandwidth``).
        sizes : ndarray, optional
            Bytes of each node (``bandwidth``; NaN where unknown): overrides the
            database's sizes (a generated web's).

        Returns
        -------
        ndarray of float64, length ``graph.n``
        """
        from webcrawl.analysis.ordering.timed import fill_by_site, recorded_per_node

        site = np.asarray(graph.sites, dtype=np.int64)
        if self.kind == "constant":
            base = np.full(graph.n, self.seconds)
        elif self.kind == "recorded":
            measured = (np.full(graph.n, np.nan) if db_path is None
                        else recorded_per_node(db_path, graph, "seconds"))
            base = fill_by_site(measured, site, self.seconds)
        else:
            if sizes is None:
                sizes = (np.full(graph.n, np.nan) if db_path is None
                         else recorded_per_node(db_path, graph, "size"))
            elif np.asarray(sizes).size != graph.n:
                raise ConfigError(f"sizes need one entry per node ({graph.n}), got "
                                  f"{np.asarray(sizes).size}")
            size = fill_by_site(np.asarray(sizes, dtype=np.float64), site, self.page_size)
            latency, bandwidth = site_rates(graph.site_names, self)
            base = latency[site] + size / bandwidth[site] if graph.n else np.zeros(0)
        return base + self.crawler_time


def _spread(median: float, sigma: float, unit: str) -> str:
    if not sigma:
        return f"{median:,g} {unit}"
    return f"log-normal (median {median:,g} {unit}, sigma {sigma:g})"


def site_rates(site_names: Sequence[str], model: TransferModel) -> tuple[np.ndarray, np.ndarray]:
    """Each site's latency (s) and bandwidth (bytes/s) under ``model``.

    A spread draws ``median * exp(sigma * z)`` with ``z`` a standard normal variate
    computed from a hash of ``(seed, quantity, site name)``: the same name and seed
    give the same rates on any machine and in any crawl order.

    Examples
    --------
    >>> lat, bw = site_rates(["a.test", "b.test"], TransferModel("bandwidth", bandwidth=1e5))
    >>> lat.tolist(), bw.tolist()
    ([0.05, 0.05], [100000.0, 100000.0])
    """
    latency = model.latency * np.exp(model.latency_spread
                                     * _normal_by_name(site_names, model.seed, "latency"))
    bandwidth = model.bandwidth * np.exp(model.bandwidth_spread
                                         * _normal_by_name(site_names, model.seed, "bandwidth"))
    return latency, bandwidth


def _normal_by_name(names: Sequence[str], seed: int, what: str) -> np.ndarray:
    """A standard normal variate per name, from a hash (one per site: a short loop)."""
    from scipy.special import ndtri

    if not len(names):
        return np.zeros(0)
    words = np.array([int.from_bytes(hashlib.blake2b(f"{seed}\0{what}\0{name}".encode(),
                                                     digest_size=8).digest(), "little")
                      for name in names], dtype=np.uint64)
    # 53 high bits -> a uniform strictly inside (0, 1)
    uniform = ((words >> np.uint64(11)).astype(np.float64) + 0.5) / float(1 << 53)
    return np.asarray(ndtri(uniform), dtype=np.float64)
