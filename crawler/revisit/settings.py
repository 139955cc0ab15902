"""Settings of the revisit loop (:mod:`crawler.revisit.loop`) and its volatile-content rule."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass

from webcrawl.storage.errors import ConfigError

__all__ = ["REVISIT_IMPORTANCE", "REVISIT_OBJECTIVES", "REVISIT_POLICIES", "RevisitSettings",
           "body_digest", "volatile_pattern"]

#: Policies of ``webcrawl revisit`` (CLI spelling ``optimal-age`` is ``optimal_age``):
#: ``polite_optimal`` is the optimum under the budget and every host's politeness limit
#: (Kolobov et al. 2019), ``optimal`` the optimum for the budget alone (Cho and
#: Garcia-Molina 2000), held to the hosts' limits only when it fetches.
REVISIT_POLICIES = ("uniform", "proportional", "optimal", "optimal_age", "polite_optimal")
#: Objectives of the optimal policies (:data:`webcrawl.analysis.change.objectives.OBJECTIVES`).
REVISIT_OBJECTIVES = ("freshness", "age", "harmonic")
#: Importance weights of the pages (:mod:`webcrawl.analysis.change.importance`), or a
#: TSV file of ``url`` and ``weight``.
REVISIT_IMPORTANCE = ("uniform", "pagerank", "inlinks")


@dataclass(frozen=True)
class RevisitSettings:
    """Settings of a revisit run (politeness, fetching and robots come from CrawlSettings).

    Attributes
    ----------
    policy : str
        One of :data:`REVISIT_POLICIES` (default ``"optimal"``).
    objective : str
        What the optimal policies maximise, one of :data:`REVISIT_OBJECTIVES` (default
        ``"freshness"``: binary freshness; ``"age"``: minus Cho's age; ``"harmonic"``:
        minus Kolobov et al.'s harmonic staleness).  ``optimal_age`` implies ``"age"``.
    importance : str
        The pages' weights in the objective: one of :data:`REVISIT_IMPORTANCE` (default
        ``"uniform"``) or the path of a TSV file with ``url`` and ``weight`` columns.
    budget : float
        Fetch starts per second over all hosts, at most (default 1).
    burst : float
        Token-bucket capacity: starts that may be saved up and spent at once (default 1).
    duration : float or None
        Seconds to run; None (default) until stopped.
    max_visits : int or None
        Revisits to start, at most; the run ends when the last one has finished
        (default None: no limit).  A count stop makes a run's size independent of the
        machine's speed, which a duration does not.
    day_seconds : float
        Wall seconds per planner day (default 86400).
    volatile : str or None
        Regex whose matches are deleted from a body before digesting (default None:
        the raw body).  Changing it between runs makes the next 2xx of each page
        incomparable (recorded ``changed`` NULL).
    prior_changes, prior_days : float
        The planner's Gamma prior (defaults 1 and 7: ``1/7`` change per day).
    recompute_every : int or None
        Visits between reallocations; None (default): ``clip(pages // 20, 1, 1000)``.
    min_frequency : float
        Floor on every page's revisit frequency, per day (default 0).
    progress_interval : float
        Seconds between progress-line refreshes (default 0.5).
    add_new : bool
        Cho and Garcia-Molina's page window (default False): pages that revisited
        pages link to, on the collection's hosts, join the collection
        (:mod:`webcrawl.crawler.revisit.window`), so births and lifespans of new pages can be
        measured.
    progress_log_interval : float
        Seconds between progress log lines when stderr is not a terminal (default 10;
        0: none).
    sitemaps : bool or None
        Read each collection host's sitemaps as change signals (``lastmod``,
        ``changefreq``; :mod:`webcrawl.crawler.revisit.sitemap_reads`); None (default):
        when the crawl read them (its ``sitemaps_follow``).
    sitemap_interval : float
        Planner days between two reads of a host's sitemaps (default 1); the first is
        at the start of the run.
    """

    policy: str = "optimal"
    objective: str = "freshness"
    importance: str = "uniform"
    budget: float = 1.0
    burst: float = 1.0
    duration: float | None = None
    max_visits: int | None = None
    day_seconds: float = 86400.0
    volatile: str | None = None
    prior_changes: float = 1.0
    prior_days: float = 7.0
    recompute_every: int | None = None
    min_frequency: float = 0.0
    progress_interval: float = 0.5
    add_new: bool = False
    progress_log_interval: float = 10.0
    sitemaps: bool | None = None
    sitemap_interval: float = 1.0

    def __post_init__(self) -> None:
        if self.policy not in REVISIT_POLICIES:
            raise ConfigError(f"unknown policy {self.policy!r}; choose from "
                              f"{', '.join(p.replace('_', '-') for p in REVISIT_POLICIES)}")
        if self.objective not in REVISIT_OBJECTIVES:
            raise ConfigError(f"unknown objective {self.objective!r}; choose from "
                              f"{', '.join(REVISIT_OBJECTIVES)}")
        if self.policy == "optimal_age" and self.objective != "age":
            object.__setattr__(self, "objective", "age")
        for name in ("budget", "day_seconds", "progress_interval", "sitemap_interval"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"{name} must be a positive number, got {value!r}")
        if not (math.isfinite(self.progress_log_interval) and self.progress_log_interval >= 0):
            raise ConfigError("progress_log_interval must be >= 0, got "
                              f"{self.progress_log_interval!r}")
        if not (math.isfinite(self.burst) and self.burst >= 1):
            raise ConfigError(f"burst must be >= 1, got {self.burst!r}")
        if self.duration is not None and not self.duration >= 0:
            raise ConfigError(f"duration must be >= 0 seconds, got {self.duration!r}")
        if self.max_visits is not None and self.max_visits < 1:
            raise ConfigError(f"max_visits must be >= 1, got {self.max_visits!r}")
        if not self.prior_changes >= 0 or not self.prior_days > 0:
            raise ConfigError("prior_changes must be >= 0 and prior_days > 0")
        if self.recompute_every is not None and self.recompute_every < 1:
            raise ConfigError("recompute_every must be >= 1")
        if not self.min_frequency >= 0:
            raise ConfigError("min_frequency must be >= 0")
        volatile_pattern(self.volatile)

    @property
    def budget_per_day(self) -> float:
        """The planner's budget: fetches per planner day."""
        return self.budget * self.day_seconds


def volatile_pattern(rule: str | None) -> re.Pattern[bytes] | None:
    """Compile the volatile-content rule (a regex over the body bytes), ConfigError if bad."""
    if not rule:
        return None
    try:
        return re.compile(rule.encode("utf-8"))
    except re.error as exc:
        raise ConfigError(f"bad volatile regex {rule!r}: {exc}") from None


def body_digest(body: bytes, pattern: re.Pattern[bytes] | None = None) -> str:
    """blake2b-128 hex of ``body`` with every ``pattern`` match deleted (crawl's digest if None)."""
    if pattern is not None:
        body = pattern.sub(b"", body)
    return hashlib.blake2b(body, digest_size=16).hexdigest()


