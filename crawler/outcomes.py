"""The outcome rule: what one HTTP answer, or one failed request, means for its URL.

Every path that turns a response into a stored :class:`~webcrawl.storage.records.Outcome`
uses these two functions: the crawl (in process or in shard workers, through
:mod:`webcrawl.crawler.downloader`), the revisit loop and the WARC import.  So a page is
``fetched`` under one definition whether it was crawled, revisited or read from an
archive.

A response, in this order of precedence:

========================================  =================
3xx (not 304) with a ``Location``          ``redirect``
304                                        ``not_modified``
any other non-2xx (a 3xx without target)   ``http_error``
2xx whose body passed the size cap         ``too_large``
2xx that is not HTML                       ``not_html``
2xx HTML                                   ``fetched``
========================================  =================

A request that got no answer: ``timeout`` for a timeout, ``http_error`` for a status
the retry policy gave up on, ``network_error`` for everything else.
"""

from __future__ import annotations

from webcrawl.storage.errors import FetchError, FetchTimeoutError, HTTPStatusError
from webcrawl.storage.records import Outcome

__all__ = ["error_outcome", "response_outcome"]


def response_outcome(status: int | None, *, location: str | None = None,
                     too_large: bool = False, is_html: bool = False) -> Outcome:
    """The outcome of an HTTP answer (see the module docstring's table).

    ``status`` None (a record without a status line) is an ``http_error``.
    """
    if status is None:
        return Outcome.HTTP_ERROR
    if 300 <= status < 400 and status != 304 and location:
        return Outcome.REDIRECT
    if status == 304:
        return Outcome.NOT_MODIFIED
    if not 200 <= status < 300:
        return Outcome.HTTP_ERROR
    if too_large:
        return Outcome.TOO_LARGE
    if not is_html:
        return Outcome.NOT_HTML
    return Outcome.FETCHED


def error_outcome(exc: BaseException) -> Outcome:
    """The outcome of a request that raised ``exc`` (a :class:`FetchError` or a bug)."""
    if isinstance(exc, FetchTimeoutError):
        return Outcome.TIMEOUT
    if isinstance(exc, HTTPStatusError):
        return Outcome.HTTP_ERROR
    if isinstance(exc, FetchError):
        return Outcome.NETWORK_ERROR
    return Outcome.NETWORK_ERROR
