"""When a request on a kept-alive connection may be sent once more, and when not at once.

Servers close idle connections just as a request goes out on one.  A GET (or HEAD)
written into a *reused* connection that was lost before any byte of the answer arrived
ends in one of three ways (:func:`unanswered`):

* **sent again at once** (:class:`Resend`), on a new connection and within the same
  total timeout, when no server can have read it: the server closed first (a FIN) and,
  on Linux, the kernel's TCP counters (``TCP_INFO``) show bytes of the request that the
  server's TCP never acknowledged: it had closed before the request arrived;
* **not at once** (:class:`ReusedConnectionLost`) when the server may have read it: the
  connection was reset (RST) with no FIN first (a server that reads a request and then
  resets, or one that closed with the request unread in its buffer: from outside both
  look alike, and the counters cannot tell them apart, as the reset may overtake the
  server's delayed ACK), or it was closed and the counters cannot be read (not Linux,
  or TLS under uvloop, whose TLS layer closes the socket before it reports a close
  without ``close_notify``).  The crawler retries it at the host's next politeness
  slot (:mod:`webcrawl.crawler.retry`), so the server never sees it twice within its
  politeness wait;
* **failed** (NetworkError) when the server's TCP took the request whole and the server
  closed without an answer: the retry policy decides, after its polite wait.
"""

from __future__ import annotations

import asyncio
import socket
import struct

from webcrawl.storage.errors import NetworkError, ReusedConnectionLost

__all__ = ["RESENDABLE", "Resend", "ReusedConnectionLost", "peer_took_all", "unanswered"]

#: methods resent once when a reused connection turns out closed (safe, idempotent)
RESENDABLE = frozenset(("GET", "HEAD"))
# struct tcp_info (linux/tcp.h): tcpi_bytes_acked at 120 (Linux 4.1), tcpi_bytes_sent
# and tcpi_bytes_retrans at 200 (Linux 4.19); the SYN counts as one acknowledged byte
_TCP_INFO = getattr(socket, "TCP_INFO", None)
_TCP_INFO_SIZE = 216
_ACKED = struct.Struct("=Q")
_SENT = struct.Struct("=QQ")


class Resend(NetworkError):
    """The reused connection closed before the server can have read the request."""


def unanswered(url: str, *, reset: bool, took: bool | None, why: str = "") -> NetworkError:
    """The error of a request whose reused connection was lost before any byte of the
    answer: reset (an error, no FIN first) or closed, and whether the server's TCP
    acknowledged all that was sent (None: unknown).  See the module docstring."""
    if reset:
        return ReusedConnectionLost(f"connection reset before any response fetching {url}"
                                    f"{why}")
    if took is False:
        return Resend(f"connection closed before any response fetching {url}")
    if took is None:
        return ReusedConnectionLost(f"connection closed before any response fetching {url}")
    return NetworkError(f"connection closed fetching {url}{why}")


def peer_took_all(transport: asyncio.BaseTransport | None) -> bool | None:
    """Whether the peer's TCP acknowledged every byte sent on ``transport``'s socket.

    False means bytes (of the request in flight: all before it were answered) never
    reached the peer's TCP, so no server can have read the request; None: the kernel
    does not say (not Linux, older than 4.19, or the socket is gone).
    """
    if _TCP_INFO is None or transport is None:
        return None
    sock = transport.get_extra_info("socket")
    if sock is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _TCP_INFO_SIZE)
    except OSError:
        return None
    if len(info) < _TCP_INFO_SIZE:
        return None
    acked: int = _ACKED.unpack_from(info, 120)[0] - 1  # less the SYN
    sent: int
    retransmitted: int
    sent, retransmitted = _SENT.unpack_from(info, 200)
    return acked >= sent - retransmitted
