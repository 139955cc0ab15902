"""The fetch history of a crawl database: ONE reader for every visit and revisit view.

:func:`read_history` reads, from one snapshot, the ``fetches`` table (crawl fetches and
revisits, in insertion order) with the URL, host and meta tables it refers to.  The
views built on it:

* :func:`history_visit_log` / :func:`load_visit_log`: every fetch with an HTTP answer as
  a visit of a :class:`analysis.change.change_stats.VisitLog` (2xx and 304: present; 404 and
  410: gone), with Last-Modified on the visits' clock (``webcrawl analyze changes``,
  the report's change section);
* :func:`history_refreshes` / :func:`load_refreshes`: the refreshes of the collection
  (pages fetched as HTML) for freshness and age (:mod:`webcrawl.analysis.change.revisit_eval`).

HTTP dates (Last-Modified) are parsed here too: :func:`http_date_seconds`,
:func:`parse_http_dates`.

References
----------
.. [1] J. Cho and H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray
from webcrawl.storage.arrays import FloatArray
from webcrawl.storage.errors import AnalysisError, ConfigError
from webcrawl.storage.records import FetchKind, Outcome

if TYPE_CHECKING:
    from webcrawl.analysis.change.change_stats import VisitLog
    from webcrawl.storage.reader import FetchTable, UrlTable

__all__ = [
    "DAY_SECONDS_KEYS",
    "META_DAY_SECONDS",
    "OK_REVISIT",
    "SECONDS_PER_DAY",
    "FetchHistory",
    "LoadedVisits",
    "Refreshes",
    "history_refreshes",
    "history_visit_log",
    "http_date_seconds",
    "load_refreshes",
    "load_visit_log",
    "modified_days",
    "parse_http_dates",
    "read_history",
    "resolve_day_seconds",
    "stored_day_seconds",
]

SECONDS_PER_DAY = 86400.0
#: Meta key where ``webcrawl revisit`` (and the demo, through it) stores the length of a
#: day on its clock, in seconds (``repr`` of a float).
META_DAY_SECONDS = "revisit_day_seconds"
#: Meta keys read for the day length, first found wins (``day_seconds``: older demos).
DAY_SECONDS_KEYS = (META_DAY_SECONDS, "day_seconds")
#: Revisit outcomes that refresh the copy (a 304 confirms it is current).
OK_REVISIT = (Outcome.FETCHED, Outcome.NOT_MODIFIED, Outcome.NOT_HTML, Outcome.TOO_LARGE)


# ----------------------------------------------------------------------- HTTP dates
def http_date_seconds(value: str | None) -> float | None:
    """An HTTP date as Unix seconds (None if absent or unparsable)."""
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None


def parse_http_dates(values: Any) -> FloatArray:
    """Unix seconds of HTTP dates (``nan`` when absent or unparsable), parsed once each."""
    cache: dict[str, float] = {}
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if not v:
            continue
        if v not in cache:
            s = http_date_seconds(v)
            cache[v] = math.nan if s is None else s
        out[i] = cache[v]
    return out


def modified_days(seconds: FloatArray, visit_days: FloatArray, day: float,
                  t0: float) -> FloatArray:
    """Last-Modified times (Unix seconds of the HTTP dates) on the visits' clock.

    HTTP dates run on the server's clock.  On a real one (86400 s a day) it is the
    crawler's, and the first visit's wall time ``t0`` is day 0.  An accelerated server
    clock (the fixture web) has HTTP days of ``day`` real seconds and an unknown origin:
    the origin is taken as the smallest one consistent with every visit, since no page
    was modified after it was seen (``max(Last-Modified - visit)``); fast-changing pages
    make that bound tight.
    """
    http_days = seconds / SECONDS_PER_DAY
    known = np.isfinite(http_days)
    if not known.any():
        return http_days
    if day == SECONDS_PER_DAY:
        return http_days - t0 / SECONDS_PER_DAY
    return http_days - float(np.max(http_days[known] - visit_days[known]))


# ------------------------------------------------------------------------ day length
def stored_day_seconds(meta: Mapping[str, str]) -> float | None:
    """The day length (seconds) a crawl database stores (:data:`DAY_SECONDS_KEYS`), or None."""
    for key in DAY_SECONDS_KEYS:
        try:
            value = float(meta[key])
        except (KeyError, ValueError):
            continue
        if math.isfinite(value) and value > 0:
            return value
    return None


def resolve_day_seconds(meta: Mapping[str, str],
                        explicit: float | None = None) -> tuple[float, str]:
    """The day length to analyse with, and where it came from.

    An explicit value wins (``"given"``); else the one stored by the revisit
    (``"stored"``); else 86400 s (``"default"``).  Every change analysis reads the day
    length this way, so a database from an accelerated revisit (the demo's 1 s days) is
    analysed on its own clock without a flag.
    """
    if explicit is not None:
        if not (math.isfinite(explicit) and explicit > 0):
            raise ConfigError(f"the day length must be a positive number of seconds, "
                              f"got {explicit!r}")
        return float(explicit), "given"
    stored = stored_day_seconds(meta)
    if stored is not None:
        return stored, "stored"
    return SECONDS_PER_DAY, "default"


# -------------------------------------------------------------------------- reading
@dataclass(frozen=True, eq=False)
class FetchHistory:
    """One snapshot of a crawl database's fetches and the tables they refer to.

    ``fetches`` are the columns of :meth:`webcrawl.storage.reader.CrawlReader.fetches` (insertion
    order), ``urls`` the URL table (without the URL strings if read with ``text=False``),
    ``host_ids``/``host_names`` the hosts in id order, ``meta`` the meta table.
    """

    db: Path
    meta: dict[str, str]
    host_ids: NDArray[np.int64]
    host_names: list[str]
    urls: UrlTable
    fetches: FetchTable

    @cached_property
    def last_modified(self) -> FloatArray:
        """Per fetch, its Last-Modified header in Unix seconds (nan if none)."""
        return parse_http_dates(self.fetches["last_modified"])


def read_history(db: str | Path, *, text: bool = True) -> FetchHistory:
    """Read the fetch history of ``db`` from one snapshot (``text=False``: no URL strings)."""
    from webcrawl.storage.reader import CrawlReader

    with CrawlReader(db) as reader, reader.snapshot():
        meta = reader.meta()
        host_ids, host_names = reader.hosts()
        urls = reader.urls(text=text)
        fetches = reader.fetches()
    return FetchHistory(Path(db), meta, host_ids, host_names, urls, fetches)


# ------------------------------------------------------------------------ visit log
class LoadedVisits(NamedTuple):
    """A visit log, the URL id of each of its pages, and the wall time of its day 0."""

    log: VisitLog
    url_ids: NDArray[np.int64]
    t0: float


def history_visit_log(history: FetchHistory, seconds_per_day: float | None = None, *,
                      at: Literal["start", "midpoint"] = "start",
                      server_clock: Literal["wall", "fitted"] = "fitted") -> LoadedVisits:
    """Every fetch with an HTTP answer as a visit of a
    :class:`~webcrawl.analysis.change.change_stats.VisitLog`.

    Parameters
    ----------
    history : FetchHistory
    seconds_per_day : float, optional
        Length of a day on the crawl's clock; times are days since the first visit.
        Default: the length the revisit stored (:func:`resolve_day_seconds`), else
        86400.
    at : {"start", "midpoint"}
        A visit's time: its request's start or midpoint.
    server_clock : {"fitted", "wall"}
        How Last-Modified maps to the visits' clock: ``"fitted"`` (default) assumes HTTP
        days of ``seconds_per_day`` real seconds with the origin fitted to the visits
        (:func:`modified_days`), right for an accelerated fixture clock and identical to
        ``"wall"`` at 86400 s a day; ``"wall"`` takes HTTP dates as wall seconds whatever
        the day length.

    Returns
    -------
    LoadedVisits

    Raises
    ------
    AnalysisError
        No fetch has an HTTP answer.

    Notes
    -----
    2xx and 304 mean the page was there, 404 and 410 that it was gone; other statuses
    and network failures say nothing and are skipped.  ``changed`` comes from the row
    (a 304 without one: unchanged), else from the digest against the previous visit.

    References
    ----------
    .. [1] Cho and Garcia-Molina, TOIT 2003 (visit histories, Last-Modified).
    """
    from webcrawl.analysis.change.change_stats import VisitLog

    seconds_per_day, _ = resolve_day_seconds(history.meta, seconds_per_day)
    f = history.fetches
    status = f["status"]
    present = ((status >= 200) & (status < 300)) | (status == 304)
    keep = present | (status == 404) | (status == 410)
    if not keep.any():
        raise AnalysisError(f"{history.db} has no fetch with an HTTP answer: "
                            "nothing to analyse")
    when = f["started_at"][keep]
    if at == "midpoint":
        when = 0.5 * (when + f["ended_at"][keep])
    t0 = float(when.min())
    days = (when - t0) / seconds_per_day
    changed = f["changed"][keep].astype(np.int8)
    changed[(status[keep] == 304) & (changed < 0)] = 0
    lm_seconds = history.last_modified[keep]
    if server_clock == "fitted":
        lm = modified_days(lm_seconds, days, seconds_per_day, t0)
    else:
        lm = (lm_seconds - t0) / seconds_per_day
    page_ids, page = np.unique(f["url_id"][keep], return_inverse=True)
    url_host = history.urls.host_ids[np.searchsorted(history.urls.ids, page_ids)]
    host = np.searchsorted(history.host_ids, url_host)
    log = VisitLog.from_arrays(page, days, present[keep], changed, last_modified=lm,
                               host=host, host_names=history.host_names or ["?"],
                               digest=list(f["digest"][keep]))
    return LoadedVisits(log, page_ids.astype(np.int64), t0)


def load_visit_log(db: str | Path, seconds_per_day: float | None = None) -> VisitLog:
    """The visit log of a crawl database (:func:`history_visit_log` with its defaults:
    the stored day length unless ``seconds_per_day`` is given)."""
    return history_visit_log(read_history(db, text=False), seconds_per_day).log


# ------------------------------------------------------------------------ refreshes
@dataclass(frozen=True, eq=False)
class Refreshes:
    """The collection's refreshes, flat, sorted by (page, time).

    Attributes
    ----------
    urls : list of str
        The collection (pages the crawl fetched as HTML); page ``i`` is ``urls[i]``.
    url_ids : ndarray of int64
        Their ids in the database.
    page, time : ndarray
        Each refresh: page index and wall-clock time (request midpoint).
    changed : ndarray of int8
        Per refresh: 1 changed since the previous one, 0 unchanged, -1 unknown (the
        crawl fetch, a digest not comparable, or a revisit after a failed one).
    revisit_start, revisit_end : float
        Wall time of the first revisit's start and the last one's end (nan if none).
    """

    urls: list[str]
    url_ids: NDArray[np.int64]
    page: NDArray[np.int64]
    time: FloatArray
    changed: NDArray[np.int8]
    revisit_start: float
    revisit_end: float

    @property
    def n_pages(self) -> int:
        return len(self.urls)

    @property
    def visits_per_page(self) -> NDArray[np.int64]:
        return np.bincount(self.page, minlength=self.n_pages).astype(np.int64)


def history_refreshes(history: FetchHistory) -> Refreshes:
    """The collection (pages fetched as HTML) and its refreshes: the crawl fetch and every
    successful revisit (2xx or 304), each at its request's midpoint."""
    from webcrawl.storage.reader import OUTCOMES

    table, f = history.urls, history.fetches
    coll = table.has_outcome(Outcome.FETCHED)
    ids = table.ids[coll]
    urls = [u for u, keep in zip(table.urls, coll, strict=True) if keep]
    if not urls:
        raise AnalysisError(f"{history.db} holds no page fetched as HTML")
    code = {o: OUTCOMES.index(o) for o in OUTCOMES}
    crawl = f["kind"] == list(FetchKind).index(FetchKind.CRAWL)
    ok = np.where(crawl, f["outcome"] == code[Outcome.FETCHED],
                  np.isin(f["outcome"], [code[o] for o in OK_REVISIT]))
    pos = np.searchsorted(ids, f["url_id"])
    pos_c = np.minimum(pos, ids.size - 1)
    ok &= ids[pos_c] == f["url_id"]
    mid = 0.5 * (f["started_at"] + f["ended_at"])
    page, t = pos_c[ok].astype(np.int64), mid[ok]
    changed = np.where(crawl[ok], -1, f["changed"][ok]).astype(np.int8)
    order = np.lexsort((t, page))
    revisit = ~crawl & np.isin(f["url_id"], ids)
    start = float(f["started_at"][revisit].min()) if revisit.any() else float("nan")
    end = float(f["ended_at"][revisit].max()) if revisit.any() else float("nan")
    return Refreshes(urls, ids.astype(np.int64), page[order], t[order], changed[order],
                     start, end)


def load_refreshes(db: str | Path) -> Refreshes:
    """Read the collection and its refreshes from a crawl database."""
    return history_refreshes(read_history(db))
