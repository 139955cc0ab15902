"""When a request on a kept-alive connection may be sent once more.

Servers close idle connections just as a request goes out on one.  A GET (or HEAD)
written into a *reused* connection that closed before any byte of the answer arrived is
sent once more, at once, on a new connection, only when the server cannot have read it:
on Linux the kernel's TCP counters (``TCP_INFO``) must show bytes of the request that
the server's TCP never acknowledged (the server had closed before the request arrived).
A request the server's TCP took whole and then dropped is not resent: it fails with
NetworkError and the engine's retry decides after its polite wait.  Where the counters
cannot be read (not Linux, or TLS under uvloop, whose TLS layer closes the socket before
it reports a close without ``close_notify``) the resend is made as curl and aiohttp
make it.
"""

from __future__ import annotations

import asyncio
import socket
import struct

from webcrawl.storage.errors import NetworkError

__all__ = ["RESENDABLE", "Resend", "peer_took_all"]

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
