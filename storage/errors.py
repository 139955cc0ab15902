"""The one exception tree of webcrawl.

Every error that the library raises on purpose derives from :class:`WebcrawlError`,
so a caller (and the CLI edge) can catch one class.  Third-party errors are
converted at the boundary with ``raise OurError(...) from exc``.  Where the meaning
matches a builtin, the class also inherits from it.

::

    WebcrawlError
    ├── ConfigError (ValueError)           bad settings or arguments
    ├── InputFormatError (ValueError)      a file to import is damaged (WARC record, ...)
    ├── StoreError                         the crawl database
    │   ├── SchemaVersionError             file written by another schema version
    │   ├── StoreFullError (OSError)       disk full while writing
    │   ├── StoreLockedError               another process is writing the database
    │   └── StoreReadOnlyError (OSError)   database or folder not writable
    ├── CrawlError                         the crawl process itself
    │   └── ScopeError (ValueError)        a seed outside the configured scope
    ├── FetchError                         one fetch failed (recorded, never fatal)
    │   ├── NetworkError (OSError)         connect/reset/DNS
    │   │   └── ReusedConnectionLost       a kept-alive connection lost after the
    │   │                                  request went out: sent again at the host's
    │   │                                  next polite turn, never at once
    │   ├── FetchTimeoutError (TimeoutError)
    │   ├── TooLargeError                  body over the size cap
    │   └── HTTPStatusError                retryable HTTP status (5xx, 429)
    ├── AnalysisError                      analysis on a graph or a crawl
    │   ├── EmptyGraphError (ValueError)   nothing to analyse
    │   └── PowerIterationFailedConvergence
    └── FixtureError (ValueError)          fixture web arguments

Which class means what (one rule everywhere):

- the caller's input is wrong (a setting, an argument, a path or file they named, a value
  out of range): :class:`ConfigError` (fixable by changing the call; the CLI exits 1 with
  the message; :class:`FixtureError` is the fixture web's);
- the input is valid but the data cannot support the measurement (no page, no revisit,
  a graph too small): :class:`AnalysisError`, :class:`EmptyGraphError` when it is empty;
- the crawl database cannot be read or written as asked: :class:`StoreError` and children;
- a crawl cannot go on (not one fetch): :class:`CrawlError`;
- one fetch failed: a :class:`FetchError`; the crawler records it as the URL's outcome and
  never raises it to its caller.

Settings classes check their fields with :func:`webcrawl.storage.checks.check_fields`.
"""

from __future__ import annotations

__all__ = [
    "AnalysisError",
    "ConfigError",
    "CrawlError",
    "EmptyGraphError",
    "FetchError",
    "FetchTimeoutError",
    "FixtureError",
    "HTTPStatusError",
    "InputFormatError",
    "NetworkError",
    "PowerIterationFailedConvergence",
    "ReusedConnectionLost",
    "SchemaVersionError",
    "ScopeError",
    "StoreError",
    "StoreFullError",
    "StoreLockedError",
    "StoreReadOnlyError",
    "TooLargeError",
    "WebcrawlError",
]


class WebcrawlError(Exception):
    """Root of every error webcrawl raises on purpose."""


class ConfigError(WebcrawlError, ValueError):
    """A setting or argument is invalid."""


class InputFormatError(WebcrawlError, ValueError):
    """A file given to ``webcrawl import`` is damaged or not in its format.

    ``offset`` is the byte offset of the damaged part (a WARC record) when known.
    """

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


class StoreError(WebcrawlError):
    """The crawl database cannot be opened, read or written."""


class SchemaVersionError(StoreError):
    """The database was written by an incompatible schema version."""


class StoreFullError(StoreError, OSError):
    """The disk is full; what was committed before stays intact."""


class StoreLockedError(StoreError):
    """Another process holds the database's writer lock (one writer per crawl)."""


class StoreReadOnlyError(StoreError, OSError):
    """The database (or its folder) cannot be written."""


class CrawlError(WebcrawlError):
    """The crawl cannot start or continue."""


class ScopeError(CrawlError, ValueError):
    """A seed URL lies outside the configured scope."""


class FetchError(WebcrawlError):
    """One fetch failed; the crawler records it as the URL's outcome."""


class NetworkError(FetchError, OSError):
    """Connection refused or reset, or the host could not be resolved."""


class ReusedConnectionLost(NetworkError):
    """A kept-alive connection was lost after a request was written on it, before any
    byte of the answer, and the server may have read the request: it is not sent again
    at once (:mod:`webcrawl.crawler.http1.resend`)."""


class FetchTimeoutError(FetchError, TimeoutError):
    """Connect, read or total timeout."""


class TooLargeError(FetchError):
    """The body exceeded the configured size cap."""


class HTTPStatusError(FetchError):
    """A retryable HTTP status (5xx, 429)."""

    def __init__(self, status: int, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after


class AnalysisError(WebcrawlError):
    """An analysis cannot run on the given graph or crawl."""


class EmptyGraphError(AnalysisError, ValueError):
    """The graph (or the crawl) has no nodes to analyse."""


class PowerIterationFailedConvergence(AnalysisError):
    """An iterative method did not converge within ``max_iter`` iterations."""

    def __init__(self, max_iter: int, residual: float | None = None) -> None:
        msg = f"power iteration failed to converge within {max_iter} iterations"
        if residual is not None:
            msg += f" (last L1 change {residual:.3g})"
        super().__init__(msg)
        self.max_iter = max_iter
        self.residual = residual


class FixtureError(WebcrawlError, ValueError):
    """Invalid fixture web arguments."""
