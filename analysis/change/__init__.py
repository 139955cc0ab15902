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

from typing import TYPE_CHECKING

from webcrawl.storage._facade import lazy_attributes

if TYPE_CHECKING:  # `X as X`: explicit re-exports for type checkers
    from webcrawl.analysis.change.allocation import POLICIES as POLICIES
    from webcrawl.analysis.change.allocation import Allocation as Allocation
    from webcrawl.analysis.change.allocation import Policy as Policy
    from webcrawl.analysis.change.allocation import allocate as allocate
    from webcrawl.analysis.change.allocation import polite_allocation as polite_allocation
    from webcrawl.analysis.change.allocation import throttle as throttle
    from webcrawl.analysis.change.change_stats import ChangeReport as ChangeReport
    from webcrawl.analysis.change.change_stats import PoissonTest as PoissonTest
    from webcrawl.analysis.change.change_stats import VisitLog as VisitLog
    from webcrawl.analysis.change.change_stats import change_report as change_report
    from webcrawl.analysis.change.change_stats import mean_change_intervals as mean_change_intervals
    from webcrawl.analysis.change.change_stats import poisson_test as poisson_test
    from webcrawl.analysis.change.estimators import RateEstimate as RateEstimate
    from webcrawl.analysis.change.estimators import VisitHistory as VisitHistory
    from webcrawl.analysis.change.estimators import bias_reduced_rate as bias_reduced_rate
    from webcrawl.analysis.change.estimators import estimate_rates as estimate_rates
    from webcrawl.analysis.change.estimators import last_modified_rate as last_modified_rate
    from webcrawl.analysis.change.estimators import mle_rate as mle_rate
    from webcrawl.analysis.change.estimators import naive_rate as naive_rate
    from webcrawl.analysis.change.estimators import no_change_upper_bound as no_change_upper_bound
    from webcrawl.analysis.change.fetch_history import META_DAY_SECONDS as META_DAY_SECONDS
    from webcrawl.analysis.change.fetch_history import FetchHistory as FetchHistory
    from webcrawl.analysis.change.fetch_history import history_visit_log as history_visit_log
    from webcrawl.analysis.change.fetch_history import load_visit_log as load_visit_log
    from webcrawl.analysis.change.fetch_history import read_history as read_history
    from webcrawl.analysis.change.fetch_history import resolve_day_seconds as resolve_day_seconds
    from webcrawl.analysis.change.freshness import FreshnessResult as FreshnessResult
    from webcrawl.analysis.change.freshness import evaluate_freshness as evaluate_freshness
    from webcrawl.analysis.change.freshness import expected_age as expected_age
    from webcrawl.analysis.change.freshness import expected_freshness as expected_freshness
    from webcrawl.analysis.change.importance import IMPORTANCE as IMPORTANCE
    from webcrawl.analysis.change.importance import importance_weights as importance_weights
    from webcrawl.analysis.change.objectives import OBJECTIVES as OBJECTIVES
    from webcrawl.analysis.change.objectives import Objective as Objective
    from webcrawl.analysis.change.objectives import mean_age as mean_age
    from webcrawl.analysis.change.objectives import mean_freshness as mean_freshness
    from webcrawl.analysis.change.objectives import (
        mean_harmonic_staleness as mean_harmonic_staleness,
    )
    from webcrawl.analysis.change.rate_table import PageRates as PageRates
    from webcrawl.analysis.change.rate_table import export_rates as export_rates
    from webcrawl.analysis.change.rate_table import page_rates as page_rates
    from webcrawl.analysis.change.refresh import PlannerSettings as PlannerSettings
    from webcrawl.analysis.change.refresh import RevisitPlanner as RevisitPlanner
    from webcrawl.analysis.change.revisit_eval import RevisitEvaluation as RevisitEvaluation
    from webcrawl.analysis.change.revisit_eval import SimClock as SimClock
    from webcrawl.analysis.change.revisit_eval import evaluate_revisit as evaluate_revisit

#: The public API: name -> the module that defines it (imported on first use, so that the
#: revisit loop, which reads fetch histories, loads neither scipy.stats nor the estimators
#: it does not call)
_LAZY = {
    "POLICIES": "webcrawl.analysis.change.allocation",
    "Allocation": "webcrawl.analysis.change.allocation",
    "Policy": "webcrawl.analysis.change.allocation",
    "allocate": "webcrawl.analysis.change.allocation",
    "polite_allocation": "webcrawl.analysis.change.allocation",
    "throttle": "webcrawl.analysis.change.allocation",
    "ChangeReport": "webcrawl.analysis.change.change_stats",
    "PoissonTest": "webcrawl.analysis.change.change_stats",
    "VisitLog": "webcrawl.analysis.change.change_stats",
    "change_report": "webcrawl.analysis.change.change_stats",
    "mean_change_intervals": "webcrawl.analysis.change.change_stats",
    "poisson_test": "webcrawl.analysis.change.change_stats",
    "RateEstimate": "webcrawl.analysis.change.estimators",
    "VisitHistory": "webcrawl.analysis.change.estimators",
    "bias_reduced_rate": "webcrawl.analysis.change.estimators",
    "estimate_rates": "webcrawl.analysis.change.estimators",
    "last_modified_rate": "webcrawl.analysis.change.estimators",
    "mle_rate": "webcrawl.analysis.change.estimators",
    "naive_rate": "webcrawl.analysis.change.estimators",
    "no_change_upper_bound": "webcrawl.analysis.change.estimators",
    "META_DAY_SECONDS": "webcrawl.analysis.change.fetch_history",
    "FetchHistory": "webcrawl.analysis.change.fetch_history",
    "history_visit_log": "webcrawl.analysis.change.fetch_history",
    "load_visit_log": "webcrawl.analysis.change.fetch_history",
    "read_history": "webcrawl.analysis.change.fetch_history",
    "resolve_day_seconds": "webcrawl.analysis.change.fetch_history",
    "FreshnessResult": "webcrawl.analysis.change.freshness",
    "evaluate_freshness": "webcrawl.analysis.change.freshness",
    "expected_age": "webcrawl.analysis.change.freshness",
    "expected_freshness": "webcrawl.analysis.change.freshness",
    "IMPORTANCE": "webcrawl.analysis.change.importance",
    "importance_weights": "webcrawl.analysis.change.importance",
    "OBJECTIVES": "webcrawl.analysis.change.objectives",
    "Objective": "webcrawl.analysis.change.objectives",
    "mean_age": "webcrawl.analysis.change.objectives",
    "mean_freshness": "webcrawl.analysis.change.objectives",
    "mean_harmonic_staleness": "webcrawl.analysis.change.objectives",
    "PageRates": "webcrawl.analysis.change.rate_table",
    "export_rates": "webcrawl.analysis.change.rate_table",
    "page_rates": "webcrawl.analysis.change.rate_table",
    "PlannerSettings": "webcrawl.analysis.change.refresh",
    "RevisitPlanner": "webcrawl.analysis.change.refresh",
    "RevisitEvaluation": "webcrawl.analysis.change.revisit_eval",
    "SimClock": "webcrawl.analysis.change.revisit_eval",
    "evaluate_revisit": "webcrawl.analysis.change.revisit_eval",
}

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
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
