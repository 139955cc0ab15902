"""A shard worker: the downloader of the hosts a worker process owns.

A worker holds no database and no URL registry: it runs one
:class:`~webcrawl.crawler.downloader.LocalDownloader` -- the same object an unsharded crawl
fetches through -- for the hosts the coordinator sends it, so politeness clocks,
kept-alive connections, the retry policy, decoding, link extraction and normalisation
are the crawl's own.  The coordinator sends a host's URLs ahead of need
(``shard_window`` of them); the downloader answers each host's orders one at a time, in
the order they arrived (a per-host back queue, as in Mercator), so the host's next
fetch starts the moment its politeness wait ends, with no round trip to the
coordinator in between.  An order's ``wait`` (the coordinator's view of the host's
remaining delay) is how a restarted worker respects a host's last contact.

Answers leave in batches: everything that finished in the same event-loop turn (or,
with ``shard_flush_interval`` > 0, within that many seconds of the first one; at most
:data:`FLUSH_SIZE`) goes in one frame.  The worker exits on
:class:`~webcrawl.crawler.shard.protocol.StopWorker` or when its input ends (the
coordinator closed it, or died), dropping orders in flight; its last message,
:class:`~webcrawl.crawler.shard.protocol.WorkerStopped`, leaves once its downloader is
closed (its WARC files whole) and carries its WARC counts.  On Linux it asks the kernel
to SIGKILL it when its parent dies, so no orphan keeps contacting a host.  A crawl forks
its workers from a server that has this module loaded
(:mod:`webcrawl.crawler.shard.forks`), which runs :func:`main` on the worker's pipes;
``python -m webcrawl.crawler.shard`` runs the same on a new interpreter's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
from collections.abc import Callable
from dataclasses import replace

from webcrawl.crawler import eventloop
from webcrawl.crawler.child_pipes import die_with_parent
from webcrawl.crawler.downloader import DownloaderLink, LocalDownloader
from webcrawl.crawler.orders import FetchedAnswer, FetchFile, FetchPage, FetchRobots, OnDone
from webcrawl.crawler.scope import Scope
from webcrawl.crawler.shard.protocol import StartWorker, StopWorker, WorkerOrder, WorkerStopped
from webcrawl.crawler.shard.transport import encode_frame, read_frame
from webcrawl.storage import _testhooks

__all__ = ["serve", "worker_downloader"]

log = logging.getLogger(__name__)

#: Results that make a worker send its batch at once.
FLUSH_SIZE = 256


def worker_downloader(start: StartWorker) -> tuple[LocalDownloader, DownloaderLink]:
    """The downloader of worker ``start.worker`` (the crawl's settings, one WARC file
    series of its own; every series of the crawl read back when the crawl resumed or
    the worker was started again) and its link (the scope the seeds give: robots.txt
    redirects stay in it)."""
    s = start.settings
    if s.warc_dir is not None:
        s = replace(s, warc_prefix=f"{s.warc_prefix}-w{start.worker}")
    if s.near_process and s.near_duplicates:  # (without the test the flag is unread)
        # A worker finds its pages' texts in the parse that gave their links, and
        # sends the texts (or sketches: sketch_answers), not the pages: less to send,
        # and no second parse in the coordinator's test process.
        s = replace(s, near_process=False)
    return LocalDownloader(s), DownloaderLink(host_allowed=Scope(s, start.seeds).host_allowed,
                                              resumed=start.resumed or start.generation > 0,
                                              warc_prefix=start.settings.warc_prefix)


async def serve(reader: asyncio.StreamReader, write: Callable[[bytes], None], *,
                make: Callable[[StartWorker], tuple[LocalDownloader, DownloaderLink]]
                = worker_downloader) -> None:
    """Answer the orders read from ``reader`` until it ends (or :class:`StopWorker`);
    ``make`` builds the worker's downloader from its start order (a test's runs over a
    fake web)."""
    first = await read_frame(reader)
    if not first or not isinstance(first[0], StartWorker):
        return
    start: StartWorker = first[0]
    loop = asyncio.get_running_loop()
    outbox: list[FetchedAnswer] = []
    failure: list[BaseException] = []

    interval = start.settings.shard_flush_interval
    timer: list[asyncio.Handle] = []
    sketch: Callable[[list[FetchedAnswer]], None] | None = None
    if start.settings.near_duplicates:  # numpy only for the near-duplicate test
        from webcrawl.crawler.near_batch import sketch_answers as sketch

    def flush() -> None:
        timer.clear()
        if sketch is not None:  # the frame's page texts, sketched at once
            sketch(outbox)
        try:
            write(encode_frame(outbox))
        except (OSError, RuntimeError):  # the coordinator is gone: nobody reads answers
            reader.feed_eof()
        outbox.clear()
        _testhooks.kill_at("shard_worker_batch")

    def done(result: FetchedAnswer | BaseException) -> None:
        if isinstance(result, BaseException):  # a bug: end; the coordinator restarts us
            failure.append(result)
            reader.feed_eof()
            return
        outbox.append(result)
        if len(outbox) >= FLUSH_SIZE:
            if timer:
                timer[0].cancel()
            flush()
        elif not timer:
            timer.append(loop.call_later(interval, flush) if interval > 0
                         else loop.call_soon(flush))

    worker, link = make(start)
    await worker.open(link)
    try:
        await _take_orders(reader, list(first[1:]), worker, done)
    finally:
        await worker.aclose()
    if failure:
        raise failure[0]
    with contextlib.suppress(OSError, RuntimeError):  # nobody reads: nothing to tell
        write(encode_frame([WorkerStopped(worker.warc_counts())]))


async def _take_orders(reader: asyncio.StreamReader, pending: list[WorkerOrder],
                       worker: LocalDownloader, done: OnDone) -> None:
    """Submit the orders read until :class:`StopWorker` or the end of the input."""
    while True:
        for order in pending:
            if isinstance(order, StopWorker):
                return
            if isinstance(order, FetchPage | FetchRobots | FetchFile):
                worker.submit(order, done)
        batch = await read_frame(reader)
        if batch is None:
            return
        pending = batch


async def _stdio_main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    # The descriptors, not sys.stdin and sys.stdout: a forked worker's sys objects are
    # its fork server's (a test runner may have replaced them).
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                 os.fdopen(0, "rb", buffering=0))
    # Non-blocking: a coordinator slow to read never stalls this worker's fetches.
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(1, "wb", buffering=0))

    def write(data: bytes) -> None:
        out.write(data)

    await serve(reader, write)
    # The last message may still sit in the pipe's buffer: wait until the coordinator
    # has read it (it reads until this process exits), or gives up on us.
    deadline = loop.time() + _LAST_WORDS_WAIT
    while out.get_write_buffer_size() and not out.is_closing() and loop.time() < deadline:
        await asyncio.sleep(0.01)


#: Seconds the last message may wait for the coordinator to read it (it waits 5 s for
#: a worker to exit before it kills it).
_LAST_WORDS_WAIT = 5.0


def main() -> None:
    """Entry point of ``python -m webcrawl.crawler.shard`` (orders on stdin, results on stdout)."""
    if not (_is_pipe(0) and _is_pipe(1)):
        # libuv aborts the process on a pipe transport over a file or a terminal.
        sys.stderr.write("webcrawl worker: stdin and stdout must be pipes from the crawl's "
                         "coordinator (webcrawl crawl --workers N starts its workers)\n")
        sys.exit(2)
    die_with_parent()
    # Ctrl-C reaches the whole process group: the coordinator decides when the crawl
    # stops (it drains, then closes our input), so a worker ignores SIGINT.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # force: a forked worker has its coordinator's handlers
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="webcrawl worker: %(message)s", force=True)
    eventloop.run(_stdio_main())
    # A clean end (answers sent, WARC files closed): leave without the interpreter's
    # teardown, which frees every module and object one by one for nobody, about 20 ms
    # of CPU a worker (2026-12-07).  Only the log lines may still sit in a buffer.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0)


def _is_pipe(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket (what the event loop's pipe transports take)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


if __name__ == "__main__":
    main()
