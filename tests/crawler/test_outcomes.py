"""The outcome rule, its groups, and the causes of failed requests.

The rule is the module docstring's table, checked row by row and at its precedence
boundaries; the groups partition the outcomes; a cause is read from the operating
system's own exception, here raised for real on loopback where that is deterministic
(a refused connection)."""

from __future__ import annotations

import socket
import ssl

import pytest
from fakeweb import no_address, read_timeout, refused, tls_failure
from webcrawl.crawler.fetcher import Fetcher
from webcrawl.crawler.outcomes import (
    ANSWERED,
    FAILED,
    NOT_REQUESTED,
    REQUESTED,
    error_cause,
    error_outcome,
    response_outcome,
)
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import FetchError, HTTPStatusError, NetworkError
from webcrawl.storage.records import Outcome

O = Outcome  # noqa: E741 (the table below reads better short)


@pytest.mark.parametrize(("status", "kw", "expected"), [
    (301, {"location": "/x"}, O.REDIRECT),
    (307, {"location": "/x", "too_large": True, "is_html": True}, O.REDIRECT),
    (301, {}, O.HTTP_ERROR),                   # a 3xx without a target
    (304, {"location": "/x"}, O.NOT_MODIFIED),  # 304 is never a redirect
    (404, {"is_html": True}, O.HTTP_ERROR),
    (503, {}, O.HTTP_ERROR),
    (200, {"too_large": True, "is_html": True}, O.TOO_LARGE),  # the cap before the type
    (200, {"is_html": False}, O.NOT_HTML),
    (204, {"is_html": True}, O.FETCHED),
    (None, {"is_html": True}, O.HTTP_ERROR),   # a record without a status line
])
def test_response_outcome_follows_the_table(status: int | None, kw: dict[str, object],
                                            expected: Outcome) -> None:
    assert response_outcome(status, **kw) is expected  # type: ignore[arg-type]


def test_error_outcome() -> None:
    assert error_outcome(read_timeout()) is O.TIMEOUT
    assert error_outcome(HTTPStatusError(503, None)) is O.HTTP_ERROR
    assert error_outcome(refused()) is O.NETWORK_ERROR
    assert error_outcome(FetchError("other")) is O.NETWORK_ERROR
    assert error_outcome(RuntimeError("a bug")) is O.NETWORK_ERROR


def test_the_groups_partition_the_outcomes() -> None:
    assert REQUESTED == ANSWERED | FAILED and {O.HTTP_ERROR} == ANSWERED & FAILED
    assert not REQUESTED & NOT_REQUESTED
    assert REQUESTED | NOT_REQUESTED | {O.ABANDONED} == set(Outcome)


@pytest.mark.parametrize(("error", "cause"), [
    (refused(), "connection refused"),
    (no_address(), "no address"),
    (tls_failure(), "TLS: unable to get local issuer certificate"),
    (read_timeout(), "read timeout"),
    (HTTPStatusError(503, 1.0), "HTTP 503"),
    (NetworkError("response closed fetching http://a.test/"), "response closed"),
], ids=["refused", "no-address", "tls", "timeout", "status", "protocol"])
def test_error_cause(error: Exception, cause: str) -> None:
    assert error_cause(error) == cause


def test_a_real_refused_connection_says_so() -> None:
    with socket.socket() as sock:  # bound, never listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

        async def get() -> Exception:
            async with Fetcher(CrawlSettings()) as fetcher:
                try:
                    await fetcher.fetch(f"http://127.0.0.1:{port}/")
                except NetworkError as exc:
                    return exc
            raise AssertionError("the connection was not refused")

        import asyncio

        assert error_cause(asyncio.run(get())) == "connection refused"


def test_tls_errors_name_their_reason() -> None:
    error = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
    error.reason = "WRONG_VERSION_NUMBER"
    try:
        raise NetworkError("SSLError fetching https://a.test/") from error
    except NetworkError as exc:
        assert error_cause(exc) == "TLS: wrong version number"
