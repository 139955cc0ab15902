"""The revisit loop's collection and its stored visit history.

:func:`load_history` reads, from a crawl database, the pages the crawl fetched as HTML
(the collection) and every visit of theirs in completion order -- the crawl fetch, then
earlier revisits -- as the planner replays them at start: a visit's time is the
midpoint of its request; a crawl fetch registers the page; a revisit that answered
says whether the page changed (``changed``), unless an error broke the interval
before it; a 404 or 410 retires the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from webcrawl.analysis.change.fetch_history import OK_REVISIT
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.records import FetchKind, Outcome

__all__ = ["GONE_STATUSES", "History", "Page", "load_history"]

#: Statuses that mean the page is gone for good.
GONE_STATUSES = frozenset((404, 410))
_OK_REVISIT = frozenset(OK_REVISIT)


@dataclass(slots=True)
class Page:
    """What the loop keeps per collection page."""

    url_id: int
    url: str
    host_id: int
    etag: str | None = None
    last_modified: str | None = None
    digest: str | None = None
    digest_ok: bool = False   # digest computed under the current volatile rule
    resync: bool = False      # an error broke the interval: next visit only registers
    gone: bool = False
    joined: bool = False      # added by the page window, not fetched yet


@dataclass(slots=True)
class History:
    """The stored collection and its visit history (read in a thread at start)."""

    pages: dict[int, Page]
    retired: set[int]
    origin: float                    # wall time of planner day 0
    visit_page: list[int]
    visit_time: list[float]          # wall seconds
    visit_changed: list[bool | None]


def load_history(db: Path, since_seq: int, rule_is_raw: bool) -> History:
    """Read the collection (pages fetched as HTML) and its visits from the database."""
    from webcrawl.analysis.change.fetch_history import read_history
    from webcrawl.storage.reader import OUTCOMES

    history = read_history(db)
    table, f = history.urls, history.fetches
    fetched = table.has_outcome(Outcome.FETCHED)
    pages = {int(i): Page(int(i), table.urls[k], int(table.host_ids[k]))
             for k, i in enumerate(table.ids) if fetched[k]}
    if not pages:
        raise ConfigError(f"{db} holds no page fetched as HTML: nothing to revisit")
    in_coll = np.isin(f["url_id"], np.fromiter(pages, dtype=np.int64, count=len(pages)))
    if not in_coll.any():
        raise ConfigError(f"{db} holds no fetch records (an imported graph?): nothing to "
                          "revisit")
    outcome = [OUTCOMES[c] if c >= 0 else None for c in f["outcome"]]
    is_crawl = f["kind"] == list(FetchKind).index(FetchKind.CRAWL)
    origin = float(np.min(f["started_at"][in_coll]))
    retired: set[int] = set()
    vp: list[int] = []
    vt: list[float] = []
    vc: list[bool | None] = []
    # Insertion order is completion order, and one page is never fetched twice at once.
    for j in np.flatnonzero(in_coll).tolist():
        page = pages[int(f["url_id"][j])]
        if page.gone:
            continue
        mid = 0.5 * (float(f["started_at"][j]) + float(f["ended_at"][j]))
        if is_crawl[j]:
            if outcome[j] is not Outcome.FETCHED:
                continue  # an earlier failed attempt of the crawl
            changed: bool | None = None
            page.digest, page.digest_ok = f["digest"][j], rule_is_raw
        elif int(f["status"][j]) in GONE_STATUSES:
            page.gone = True
            retired.add(page.url_id)
            continue
        elif outcome[j] in _OK_REVISIT:
            code = int(f["changed"][j])
            changed = None if code < 0 or page.resync else bool(code)
            page.resync = False
            if f["digest"][j] is not None:
                page.digest = f["digest"][j]
                page.digest_ok = int(f["seq"][j]) >= since_seq
        else:  # an error: as live, the page's clock restarts and the next visit resyncs
            changed, page.resync = None, True
        page.etag = f["etag"][j] or page.etag
        page.last_modified = f["last_modified"][j] or page.last_modified
        vp.append(page.url_id)
        vt.append(mid)
        vc.append(changed)
    return History(pages, retired, origin, vp, vt, vc)
