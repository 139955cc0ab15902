"""Change signals a site gives for free, as observations for the rate estimators.

Besides the content digest of each revisit (the ground truth of "changed since the last
visit" for the crawler, up to the ``volatile`` rule), sites publish:

``lastmod`` (sitemaps)
    The time of each URL's last modification, for every URL of a sitemap, at the cost
    of one request per sitemap.  Read at times ``t_1 < t_2 < ...``, it turns into one
    observation per interval between reads: changed or not, and if changed, the time
    since the last change, exactly the censored-exponential observation of
    Last-Modified (Cho and Garcia-Molina [1]_, section 6), but for every listed page
    at every read.  The first read of a page also reaches back before the revisits
    began: its ``lastmod`` says the page has not changed since, which for a page that
    changes less often than the revisit window is long is most of what any window
    can learn of it.  It counts as change-free time only, not as a change at
    ``lastmod``: that may be the page's creation, and most pages never change after
    it (counted as a change, it made every such page look one change fast).
    **Bias**: generated sitemaps often stamp every URL with the time of generation,
    or move ``lastmod`` when a template changes: a ``lastmod`` that moves without a
    content change is a false signal, and makes rates look higher.
    Stale sitemaps miss changes (rates look lower).  Dates without a time are only
    good to a day.
``changefreq`` (sitemaps)
    The publisher's stated intent (``hourly`` ... ``yearly``), not a measurement.
    **Bias**: unknown, often wrong by a bucket or more; used only as the prior's
    centre (:data:`CHANGEFREQ_PER_DAY`), with the prior's weight of one pseudo-change.
``Last-Modified`` (HTTP)
    The time of the last change, on the server's clock (read against its ``Date``, so
    client clock skew does not matter), with one-second resolution.  **Bias**:
    dynamic pages often send the time of the response: false signals, rates too high.
``ETag`` (HTTP)
    Sent back in ``If-None-Match``: a 304 says "unchanged" without a body.  **Bias**:
    an ETag that changes with every response only costs bandwidth (the digest still
    decides); one that does not change when the content does (a weak validator kept
    across edits) makes a real change look like none, which no observation of ours
    can detect without an unconditional fetch.

Every signal is checked against the digest, host by host (:meth:`ChangeSignals.trusted`):
a revisit that found the content unchanged although the signal claims a change after
the previous visit, or found it changed although the signal (read after the visit)
puts the last change before it, contradicts the signal.  A host whose contradictions
exceed :data:`DISTRUST_FRACTION` of its checks (and number at least
:data:`DISTRUST_MIN`) loses that signal: its pages are estimated from the revisit bits
alone.  A truthful signal is never contradicted (up to the ``volatile`` rule: content
that changes in parts the site does not count, which the tolerance absorbs).

The sitemap channel and the revisit channel observe one change process over the same
time, so their likelihoods are not independent: a page with a trusted sitemap is
estimated from its sitemap observations only, every other page from its revisits.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003.
.. [2] A. Kolobov, Y. Peres, C. Lu and E. Horvitz, "Staying up to date with online
   content changes using reinforcement learning for scheduling", NeurIPS 2019 (sources
   whose changes are observed, such as through sitemaps, beside those whose are not).
.. [3] sitemaps.org, "Sitemaps XML format", protocol 0.9 (``lastmod``, ``changefreq``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from webcrawl.analysis.change._column import Column
from webcrawl.storage.arrays import BoolArray, FloatArray, IntArray

__all__ = [
    "CHANGEFREQ_PER_DAY",
    "DISTRUST_FRACTION",
    "DISTRUST_MIN",
    "ChangeSignals",
    "changefreq_rate",
]

#: Changes per day a sitemap ``changefreq`` stands for (``always``: every half hour;
#: ``never``: once in ten years, archived pages).
CHANGEFREQ_PER_DAY: dict[str, float] = {
    "always": 48.0, "hourly": 24.0, "daily": 1.0, "weekly": 1 / 7, "monthly": 1 / 30,
    "yearly": 1 / 365, "never": 1 / 3650,
}
#: A host loses a signal when more than this fraction of its checks contradict it ...
DISTRUST_FRACTION = 0.1
#: ... and at least this many do (one odd answer is not a pattern).
DISTRUST_MIN = 2
#: One HTTP-date second in days: a Last-Modified within it of the previous one has not moved.
_HTTP_SECOND = 1.0 / 86400.0


def changefreq_rate(values: ArrayLike) -> FloatArray:
    """Changes per day for sitemap ``changefreq`` words (``nan`` for unknown or missing).

    >>> changefreq_rate(["daily", "Weekly", "", "sometimes"]).round(4).tolist()
    [1.0, 0.1429, nan, nan]
    """
    words = np.asarray(values, dtype=object)
    return np.array([CHANGEFREQ_PER_DAY.get(str(v).strip().lower(), np.nan) for v in words],
                    dtype=np.float64)


class ChangeSignals:
    """Sitemap and Last-Modified observations of many pages, with per-host reliability.

    Pages and hosts are indices (the :class:`~webcrawl.analysis.change.refresh.RevisitPlanner`
    maps its keys); times are days on the planner's clock.

    Examples
    --------
    A truthful sitemap read three times; the page changed at day 1.5 and 2.2:

    >>> s = ChangeSignals()
    >>> s.read_sitemap([0], 1.0, [0.0], host=[0])
    >>> s.read_sitemap([0], 2.0, [1.5], host=[0])
    >>> s.read_sitemap([0], 3.0, [2.2], host=[0])
    >>> page, interval, changed, since = s.sitemap_history()
    >>> interval.tolist(), changed.tolist(), [round(float(x), 6) for x in since]
    ([1.0, 1.0, 1.0], [False, True, True], [nan, 0.5, 0.8])

    The first read says only that nothing changed in the day since ``lastmod``.
    """

    def __init__(self) -> None:
        self._lastmod = Column(np.float64, np.nan)      # latest lastmod per page
        self._read_at = Column(np.float64, np.nan)      # when it was read
        self._fn_pending = Column(np.float64, np.nan)   # a changed visit's previous visit
        self._last_modified = Column(np.float64, np.nan)  # latest Last-Modified per page
        self._prior = Column(np.float64, np.nan)        # changefreq, changes per day
        self._s_page = Column(np.int64)
        self._s_interval = Column(np.float64)
        self._s_changed = Column(np.bool_)
        self._s_since = Column(np.float64)
        # Per host: sitemap checks, sitemap contradictions, Last-Modified checks and
        # contradictions.
        self._counts = np.zeros((0, 4), dtype=np.int64)

    def _ensure(self, n_pages: int, n_hosts: int) -> None:
        for col in (self._lastmod, self._read_at, self._fn_pending, self._last_modified,
                    self._prior):
            col.resize(n_pages)
        if n_hosts > self._counts.shape[0]:
            grown = np.zeros((n_hosts, 4), dtype=np.int64)
            grown[: self._counts.shape[0]] = self._counts
            self._counts = grown

    # --- observations ---------------------------------------------------------------
    def read_sitemap(self, pages: ArrayLike, time: float, lastmod: ArrayLike, *,
                     host: ArrayLike, resolution: ArrayLike = _HTTP_SECOND) -> None:
        """One sitemap read at ``time``: each listed page's ``lastmod`` (days; ``nan``
        when the entry has none), the host of each, and each value's resolution in days
        (default one second, a full timestamp; 1 for a date)."""
        idx = np.asarray(pages, dtype=np.int64)
        hosts = np.asarray(host, dtype=np.int64)
        new = np.asarray(lastmod, dtype=np.float64)
        res = np.broadcast_to(np.asarray(resolution, dtype=np.float64), new.shape)
        if idx.size == 0:
            return
        self._ensure(int(idx.max()) + 1, int(hosts.max()) + 1)
        known = np.isfinite(new)
        prev_read = self._read_at.data[idx].astype(np.float64)
        prev = self._lastmod.data[idx].astype(np.float64)
        closes = known & np.isfinite(prev_read) & np.isfinite(prev) & (time > prev_read)
        # Read against the answer's Date (whole seconds), an unchanged lastmod moves by
        # up to a second from read to read (0.001-0.05 s measured on http.server): a
        # move within that is no change.
        changed = new > prev + _HTTP_SECOND
        interval = time - prev_read
        since = np.clip(time - new, 0.0, interval)
        self._s_page.extend(idx[closes])
        self._s_interval.extend(interval[closes])
        self._s_changed.extend(changed[closes])
        self._s_since.extend(np.where(changed, since, np.nan)[closes])
        # A page's first read: no change since its lastmod.  Not counted as a change at
        # lastmod, which may be the page's creation (most pages never change again): a
        # creation counted as a change made never-changed pages look one change fast.
        age = time - new
        first = known & ~np.isfinite(prev_read) & (age > 0)
        self._s_page.extend(idx[first])
        self._s_interval.extend(age[first])
        self._s_changed.extend(np.zeros(int(first.sum()), dtype=bool))
        self._s_since.extend(np.full(int(first.sum()), np.nan))
        # A visit that saw a change after its previous visit at p: the change is after
        # p, so a lastmod read since that still puts the last change at or before p
        # contradicts it.
        pending = self._fn_pending.data[idx].astype(np.float64)
        check = known & np.isfinite(pending)
        np.add.at(self._counts[:, 0], hosts[check], 1)
        np.add.at(self._counts[:, 1], hosts[check & (new + res <= pending)], 1)
        self._fn_pending.data[idx[check]] = np.nan
        self._read_at.data[idx[known]] = time
        self._lastmod.data[idx[known]] = new[known]

    def set_changefreq(self, pages: ArrayLike, per_day: ArrayLike) -> None:
        """The ``changefreq`` of pages, as changes per day (:func:`changefreq_rate`)."""
        idx = np.asarray(pages, dtype=np.int64)
        rate = np.asarray(per_day, dtype=np.float64)
        if idx.size:
            self._ensure(int(idx.max()) + 1, 0)
            self._prior.data[idx] = rate

    def visit(self, page: int, previous: float, time: float, changed: bool,
              last_modified: float | None, host: int) -> None:
        """A revisit at ``time`` after one at ``previous`` found the content ``changed``
        (by digest), with the answer's Last-Modified day if any: the checks."""
        self._ensure(page + 1, host + 1)
        counts = self._counts[host]
        read_at, lastmod = self._read_at.data[page], self._lastmod.data[page]
        if changed:
            self._fn_pending.data[page] = previous
        elif previous < read_at <= time:
            # Read between the visits, which saw no change: lastmod must not claim one.
            counts[0] += 1
            counts[1] += int(lastmod > previous)
        if last_modified is None or not np.isfinite(last_modified):
            return
        before = self._last_modified.data[page]
        self._last_modified.data[page] = last_modified
        if not np.isfinite(before):
            return
        counts[2] += 1
        if changed:  # the content changed after `previous`: so must Last-Modified
            counts[3] += int(last_modified + _HTTP_SECOND <= previous)
        else:
            counts[3] += int(last_modified > before + _HTTP_SECOND)

    # --- what the estimator reads ---------------------------------------------------------
    def trusted(self, n_hosts: int) -> tuple[BoolArray, BoolArray]:
        """Per host: whether its sitemap ``lastmod`` and its Last-Modified are trusted."""
        self._ensure(0, n_hosts)
        c = self._counts[:n_hosts]

        def ok(checks: IntArray, contra: IntArray) -> BoolArray:
            return np.asarray(~((contra >= DISTRUST_MIN) & (contra > DISTRUST_FRACTION * checks)))

        return ok(c[:, 0], c[:, 1]), ok(c[:, 2], c[:, 3])

    def checks(self, n_hosts: int) -> IntArray:
        """Per host: sitemap checks, sitemap contradictions, Last-Modified checks and
        contradictions (a copy)."""
        self._ensure(0, n_hosts)
        return self._counts[:n_hosts].copy()

    def sitemap_history(self) -> tuple[IntArray, FloatArray, BoolArray, FloatArray]:
        """The sitemap channel: page, interval, changed and time since the last change
        (``nan`` where unchanged) of every interval between two reads of a page."""
        return (self._s_page.view().astype(np.int64), self._s_interval.view().astype(np.float64),
                self._s_changed.view().astype(bool), self._s_since.view().astype(np.float64))

    def prior_rate(self, n_pages: int) -> FloatArray:
        """Each page's ``changefreq`` in changes per day (``nan``: none given)."""
        self._ensure(n_pages, 0)
        return np.asarray(self._prior.data[:n_pages], dtype=np.float64)
