"""What every report section reads: the settings, the caller's inputs, and the database
read once (:class:`ReportContext`, shared by the sections so each analysis runs once)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from webcrawl.analysis.graph.captured import (
    DuplicatePolicy,
    GraphKind,
    check_duplicates,
    check_graph_kind,
)
from webcrawl.storage.checks import check_fields
from webcrawl.storage.errors import AnalysisError, ConfigError

if TYPE_CHECKING:
    from webcrawl.analysis.graph.bowtie_alg import BowTie
    from webcrawl.analysis.graph.captured import CapturedGraph
    from webcrawl.analysis.graph.degree_dist import DegreeLaws
    from webcrawl.analysis.graph.hits_alg import HitsResult
    from webcrawl.analysis.ordering.compare import Comparison
    from webcrawl.analysis.ordering.quality import QualityReport

__all__ = ["ReportContext", "ReportInputs", "ReportSettings"]


@dataclass(frozen=True)
class ReportSettings:
    """What the report shows.

    Attributes
    ----------
    top_k : int
        Rows of the top-pages tables (default 20).
    timeline_bins : int
        Time bins of the pages-per-second plot (default 40).
    rate_bins : int
        Bins of the change-rate histogram (default 30).
    freshness_points : int
        Time points of the freshness curves (default 60).
    compare : tuple of str
        Orderings replayed virtually over the captured graph for the comparison
        section (default none: the section says how to ask for it).
    seconds_per_day : float or None
        Length of a day on the crawl's clock for change rates; None reads the meta keys
        :data:`DAY_SECONDS_KEYS` (an accelerated revisit records its own) and falls back
        to 86400.
    rate_prior_changes, rate_prior_days : float
        The Gamma prior of the change-rate estimates (:func:`analysis.change.estimators.map_rate`,
        defaults 0.1 and 1.0: weak, so one change timed by Last-Modified decides a fast
        page's rate, while a page never seen changing still gets a positive rate).
    title : str or None
        Page title (default ``webcrawl report: <file name>``).
    graph : {"pages", "all"}
        The graph every measurement runs on (default ``pages``: the fetched pages and
        the links among them; ``all`` adds every discovered URL).
    """

    top_k: int = 20
    timeline_bins: int = 40
    rate_bins: int = 30
    freshness_points: int = 60
    compare: tuple[str, ...] = ()
    seconds_per_day: float | None = None
    rate_prior_changes: float = 0.1
    rate_prior_days: float = 1.0
    title: str | None = None
    graph: GraphKind = "pages"
    duplicates: DuplicatePolicy = "collapse"

    def __post_init__(self) -> None:
        check_graph_kind(self.graph)
        check_duplicates(self.duplicates)
        check_fields(self, ("top_k", "timeline_bins", "rate_bins", "freshness_points"),
                     at_least=1)
        check_fields(self, ("rate_prior_changes",), at_least=0)
        check_fields(self, ("rate_prior_days",), above=0)
        check_fields(self, ("seconds_per_day",), above=0, optional=True)


@dataclass(frozen=True, eq=False)
class ReportInputs:
    """Analyses already computed by the caller, and facts only the caller knows.

    Every field is optional; missing analyses are computed from the database.
    ``graph`` is the measured graph (``load_graph(db, graph=settings.graph)``: every
    section measures it), ``full_graph`` the ``all`` graph (virtual crawls replay over
    it); ``pagerank``, ``hits``, ``bowtie``, ``degree_laws`` and ``quality`` belong to
    ``graph``; ``comparison`` is a virtual comparison measured on ``graph``
    (:func:`analysis.ordering.compare.virtual_comparison`).  ``facts`` are extra rows of the summary
    (fixture, audit), ``expected_exponents`` the (in, out) exponents the graph was
    generated with, ``true_rates`` the true change rate (per day) of each URL,
    ``truth_freshness`` a true freshness curve ``(wall-clock seconds, freshness)`` and
    ``change_facts`` extra rows of the change section (revisit policy, errors);
    ``setting_defaults`` the crawl settings' default values (stored form), so that the
    report lists only the settings that differ from them (without it, every stored one).
    """

    graph: CapturedGraph | None = None
    full_graph: CapturedGraph | None = None
    pagerank: np.ndarray | None = None
    hits: HitsResult | None = None
    bowtie: BowTie | None = None
    degree_laws: DegreeLaws | None = None
    quality: QualityReport | None = None
    comparison: Comparison | None = None
    facts: Mapping[str, str] = field(default_factory=dict)
    expected_exponents: tuple[float | None, float | None] = (None, None)
    true_rates: Mapping[str, float] | None = None
    truth_freshness: tuple[np.ndarray, np.ndarray] | None = None
    change_facts: Mapping[str, str] = field(default_factory=dict)
    setting_defaults: Mapping[str, Any] | None = None



class ReportContext:
    """Everything read from the database once, and analyses shared between sections."""

    def __init__(self, db: Path, settings: ReportSettings, inputs: ReportInputs) -> None:
        from webcrawl.analysis.change.fetch_history import read_history
        from webcrawl.analysis.graph.loader import load_graph

        self.db, self.settings, self.inputs = db, settings, inputs
        self.history = read_history(db)
        self.meta, self.urls = self.history.meta, self.history.urls
        self.host_names, self.fetches = self.history.host_names, self.history.fetches
        self.graph = (inputs.graph if inputs.graph is not None
                      else load_graph(db, graph=settings.graph,
                                      duplicates=settings.duplicates))
        if inputs.full_graph is not None:
            self.full = inputs.full_graph
        else:
            self.full = self.graph if self.graph.kind == "all" else load_graph(
                db, graph="all", duplicates=settings.duplicates)
        if self.graph.kind != settings.graph:
            raise ConfigError(f"the report measures the {settings.graph!r} graph, but "
                              f"ReportInputs.graph is the {self.graph.kind!r} graph")
        self._pagerank = inputs.pagerank
        self.figures: dict[str, Any] = {"graph": self.graph.info()}
        self.rate_error: tuple[float, int] | None = None
        #: the bow-tie of the measured graph, once its section has run
        self.bowtie: BowTie | None = None

    @property
    def pagerank(self) -> np.ndarray:
        """PageRank (sum 1) of the measured graph, computed once."""
        if self._pagerank is None:
            from webcrawl.analysis.graph.pagerank_alg import pagerank

            if self.graph.n == 0:
                raise AnalysisError("no page was crawled")
            self._pagerank = np.asarray(pagerank(self.graph.adjacency).scores)
        return self._pagerank
