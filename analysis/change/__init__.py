"""Page change over time: visit histories, change-rate estimators, change statistics,
refresh objectives and allocations (under a budget and per-host politeness limits),
freshness and the evaluation of revisit runs.

From a revisited crawl database: ``estimate_rates(load_visit_log("crawl.db").history())``.
On a hand-made history, one page visited 10 times a day apart that had changed at 4 visits,
Cho and Garcia-Molina's bias-reduced estimator gives -log((10 - 4 + 0.5) / (10 + 0.5)):

>>> import math
>>> from webcrawl.analysis.change import VisitHistory, estimate_rates
>>> history = VisitHistory.regular([10], [4], 1.0)
>>> math.isclose(estimate_rates(history).rate[0], -math.log(6.5 / 10.5))
True
"""

from __future__ import annotations

from webcrawl.analysis.change.allocation import (
    POLICIES,
    Allocation,
    Policy,
    allocate,
    polite_allocation,
    throttle,
)
from webcrawl.analysis.change.change_stats import (
    ChangeReport,
    PoissonTest,
    VisitLog,
    change_report,
    mean_change_intervals,
    poisson_test,
)
from webcrawl.analysis.change.estimators import (
    RateEstimate,
    VisitHistory,
    bias_reduced_rate,
    estimate_rates,
    last_modified_rate,
    mle_rate,
    naive_rate,
    no_change_upper_bound,
)
from webcrawl.analysis.change.fetch_history import (
    META_DAY_SECONDS,
    FetchHistory,
    history_visit_log,
    load_visit_log,
    read_history,
    resolve_day_seconds,
)
from webcrawl.analysis.change.freshness import (
    FreshnessResult,
    evaluate_freshness,
    expected_age,
    expected_freshness,
)
from webcrawl.analysis.change.importance import (
    IMPORTANCE,
    importance_weights,
)
from webcrawl.analysis.change.objectives import (
    OBJECTIVES,
    Objective,
    mean_age,
    mean_freshness,
    mean_harmonic_staleness,
)
from webcrawl.analysis.change.rate_table import (
    PageRates,
    export_rates,
    page_rates,
)
from webcrawl.analysis.change.refresh import (
    PlannerSettings,
    RevisitPlanner,
)
from webcrawl.analysis.change.revisit_eval import (
    RevisitEvaluation,
    SimClock,
    evaluate_revisit,
)

__all__ = [
    "IMPORTANCE",
    "META_DAY_SECONDS",
    "OBJECTIVES",
    "POLICIES",
    "Allocation",
    "ChangeReport",
    "FetchHistory",
    "FreshnessResult",
    "Objective",
    "PageRates",
    "PlannerSettings",
    "PoissonTest",
    "Policy",
    "RateEstimate",
    "RevisitEvaluation",
    "RevisitPlanner",
    "SimClock",
    "VisitHistory",
    "VisitLog",
    "allocate",
    "bias_reduced_rate",
    "change_report",
    "estimate_rates",
    "evaluate_freshness",
    "evaluate_revisit",
    "expected_age",
    "expected_freshness",
    "export_rates",
    "history_visit_log",
    "importance_weights",
    "last_modified_rate",
    "load_visit_log",
    "mean_age",
    "mean_change_intervals",
    "mean_freshness",
    "mean_harmonic_staleness",
    "mle_rate",
    "naive_rate",
    "no_change_upper_bound",
    "page_rates",
    "poisson_test",
    "polite_allocation",
    "read_history",
    "resolve_day_seconds",
    "throttle",
]
