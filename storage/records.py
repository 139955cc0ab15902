"""Plain records passed between the crawler and the store (no I/O here)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["ANSWERED", "FAILED", "NOT_REQUESTED", "REQUESTED", "FetchKind", "FetchRecord",
           "Outcome"]


class Outcome(StrEnum):
    """The one final outcome every URL ends with (``urls.outcome``, ``fetches.outcome``)."""

    FETCHED = "fetched"              # 2xx HTML page, links extracted
    NOT_HTML = "not_html"            # 2xx, but not HTML (by Content-Type or sniffing)
    REDIRECT = "redirect"            # 3xx; the target is recorded as this page's one link
    NOT_MODIFIED = "not_modified"    # 304 on a conditional revisit
    HTTP_ERROR = "http_error"        # 4xx/5xx after retries
    NETWORK_ERROR = "network_error"  # connect/reset/DNS after retries
    TIMEOUT = "timeout"              # connect/read/total timeout after retries
    TOO_LARGE = "too_large"          # body over the size cap (cut, not parsed)
    ROBOTS_EXCLUDED = "robots_excluded"  # disallowed by the host's robots.txt; not requested
    OUT_OF_SCOPE = "out_of_scope"    # host, depth, per-host cap, URL length, path repetition
    ABANDONED = "abandoned"          # (older versions) left at a page limit; resumable
    #: not requested: the host's robots.txt stayed unreachable (a connection error, a
    #: timeout or a 5xx), which RFC 9309 reads as "disallow all"; the cause is in the
    #: meta key ``robots_unreachable:<host[:port]>``.  Last, so older codes keep their place.
    ROBOTS_UNREACHABLE = "robots_unreachable"


# The outcome groups (see webcrawl.crawler.outcomes, which counts by them).
#: Outcomes of a URL that got an HTTP answer (any status).
ANSWERED = frozenset({Outcome.FETCHED, Outcome.NOT_HTML, Outcome.REDIRECT,
                      Outcome.NOT_MODIFIED, Outcome.HTTP_ERROR, Outcome.TOO_LARGE})
#: Outcomes of a request that ended in an error.
FAILED = frozenset({Outcome.HTTP_ERROR, Outcome.NETWORK_ERROR, Outcome.TIMEOUT})
#: Outcomes of a URL that was requested: "fetched" URLs, whatever the answer or failure.
REQUESTED = ANSWERED | FAILED
#: Outcomes given without a request.
NOT_REQUESTED = frozenset({Outcome.OUT_OF_SCOPE, Outcome.ROBOTS_EXCLUDED,
                           Outcome.ROBOTS_UNREACHABLE})


class FetchKind(StrEnum):
    CRAWL = "crawl"
    REVISIT = "revisit"


@dataclass(slots=True)
class FetchRecord:
    """One fetch attempt: a row of the ``fetches`` table."""

    url_id: int
    seq: int                       # crawl sequence number: order in which URLs were taken
    started_at: float              # wall clock, seconds since the epoch
    ended_at: float
    outcome: Outcome
    status: int | None = None      # HTTP status, None when no response
    content_type: str | None = None
    size: int | None = None        # body bytes read
    digest: str | None = None      # hex digest of the (normalised) body
    etag: str | None = None
    last_modified: str | None = None  # the header, verbatim
    error: str | None = None       # error class name (e.g. 'FetchTimeoutError')
    attempt: int = 1               # 1 for the first try, 2.. for retries
    kind: FetchKind = FetchKind.CRAWL
    strategy: str | None = None    # crawl ordering that chose it
    priority: float | None = None  # the URL's priority when it was taken
    rank: int | None = None        # its rank among frontier URLs when taken (0 = best)
    changed: bool | None = None    # revisits: changed since the previous visit
