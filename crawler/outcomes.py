"""The outcome rule: what one HTTP answer, or one failed request, means for its URL.

Every path that turns a response into a stored :class:`~webcrawl.storage.records.Outcome`
uses these functions: the crawl (in process or in shard workers, through
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
the retry policy gave up on, ``network_error`` for everything else.  Its cause, in
words a user reads ("connection refused", "no address", "TLS: certificate verify
failed ..."), is :func:`error_cause`.

The outcomes fall into the groups below (defined beside the outcomes, in
:mod:`webcrawl.storage.records`, so the analyses and the report count by them too), the
one place the crawl statistics, the progress line, the CLI's exit status, a resume and
the report count them by:

====================  ==============================================================
:data:`ANSWERED`      got an HTTP answer (any status)
:data:`FAILED`        ended in an error: an error status after retries, a network
                      error, a timeout
:data:`REQUESTED`     requested, answered or failed: the URLs a crawl *fetched*
:data:`NOT_REQUESTED` given without a request (scope, robots.txt): not counted
                      against a page limit
====================  ==============================================================
"""

from __future__ import annotations

import errno
import socket
import ssl

from webcrawl.storage.errors import FetchError, FetchTimeoutError, HTTPStatusError
from webcrawl.storage.records import ANSWERED, FAILED, NOT_REQUESTED, REQUESTED, Outcome

__all__ = ["ANSWERED", "FAILED", "NOT_REQUESTED", "REQUESTED", "error_cause", "error_outcome",
           "response_outcome"]


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
    return Outcome.NETWORK_ERROR


#: ``errno`` of a connection failure and how it is said (curl's and wget's words).
_ERRNO_CAUSES = {
    "ECONNREFUSED": "connection refused",
    "ECONNRESET": "connection reset",
    "ECONNABORTED": "connection aborted",
    "EHOSTUNREACH": "no route to host",
    "ENETUNREACH": "network unreachable",
    "EHOSTDOWN": "host down",
    "EADDRNOTAVAIL": "address not available",
    "ETIMEDOUT": "timeout",
    "EPIPE": "connection closed",
}


def error_cause(exc: BaseException) -> str:
    """Why a request failed, in a few words: ``connection refused``, ``no address``
    (the name did not resolve), ``TLS: ...``, ``connect timeout``, ``HTTP 503`` ...

    The transport's error (:class:`~webcrawl.storage.errors.NetworkError`) keeps the
    operating system's exception as its cause; the first one of the chain that says
    more than "network error" names the cause.
    """
    if isinstance(exc, HTTPStatusError):
        return f"HTTP {exc.status}"
    if isinstance(exc, FetchTimeoutError):
        words = str(exc).split(" fetching ")[0].strip()
        return words if words.endswith("timeout") else "timeout"
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        cause = _os_cause(current)
        if cause is not None:
            return cause
        current = current.__cause__ or current.__context__
    text = " ".join(str(exc).split())
    head = text.split(" fetching ")[0] if " fetching " in text else text
    return head or type(exc).__name__


def _os_cause(exc: BaseException) -> str | None:
    """The cause an operating-system or TLS error names, None for anything else."""
    if isinstance(exc, FetchError):
        return None
    if isinstance(exc, socket.gaierror):
        return "no address"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS: {exc.verify_message or 'certificate verify failed'}"
    if isinstance(exc, ssl.SSLError):
        reason = (exc.reason or "").lower().replace("_", " ")
        return f"TLS: {reason or ' '.join(str(exc).split())}"
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, OSError):
        name = errno.errorcode.get(exc.errno, "") if exc.errno is not None else ""
        if name in _ERRNO_CAUSES:
            return _ERRNO_CAUSES[name]
        if exc.strerror:
            return exc.strerror.lower()
        text = " ".join(str(exc).split())
        return "no address" if text.startswith("no address") else (text or None)
    return None
