"""How a shard worker process starts: forked from a server that has its modules loaded.

Every worker child process of a sharded crawl (``--workers N``, restarts included) is a
fork of one *fork server*, a small process that holds the worker's modules imported and
forks a worker on each request.  A worker started as a new interpreter paid its start
and its imports, 0.09-0.11 CPU-s a worker on this project's 2-core machine: with two
workers a sharded crawl's fixed start was 0.45-0.46 CPU-s against 0.22-0.25 for one
process (2026-12-07).  A fork of a process with the modules loaded costs a few
milliseconds; the server freezes its objects for the collector first
(:func:`gc.freeze`), so the worker's collections do not touch, and copy, the pages it
shares with the server.  Measured on that machine (20 rounds, the 20,000-page site): the
start fell to the one-process crawl's (0.21-0.24 CPU-s), a whole ``--workers 2`` crawl's
CPU by about 5 % (3,100 fewer page faults), to 0.95 of the bare loop's.

The server is made one of two ways; the workers start the same way from either:

* :meth:`ForkServer.fork_here` forks it off the coordinator itself, which has the
  crawler's modules already, when the coordinator has no event loop running and one
  thread (``webcrawl crawl`` and :func:`~webcrawl.crawler.engine.crawl` build the
  :class:`~webcrawl.crawler.shard.coordinator.ShardDownloader` before the loop starts).
  A fork of a process with threads is not safe (a lock another thread held stays held
  in the child), nor of one inside a running loop;
* :meth:`ForkServer.exec_new` runs it as ``python -m webcrawl.crawler.shard.forks``
  (a library caller inside its own event loop), which imports the worker's modules
  once.

**Protocol.** A Unix stream socket pair.  A request is a frame (4-byte length, pickle of
the environment variables to set in the worker) sent with two descriptors (SCM_RIGHTS):
the read end of the worker's order pipe and the write end of its result pipe.  The
server forks; the child puts them on its stdin and stdout and runs
:func:`webcrawl.crawler.shard.worker.main`, as ``python -m webcrawl.crawler.shard``
would; the server answers the child's pid (8 bytes).  One request at a time.

**Ends.**  The server waits for each of its children as it ends, and exits at the end
of its socket (after waiting for the workers left): the coordinator closed it
(:meth:`ForkServer.aclose`, which waits for the server) or died.  So every worker's CPU
time adds up into the coordinator's children's, as ``time webcrawl crawl`` shows it.  On
Linux the server also dies with the coordinator (``PR_SET_PDEATHSIG``), and a worker
with the server, so a ``kill -9`` of the coordinator leaves no process behind.  The
coordinator is not a worker's parent: :class:`ForkedWorker` waits for a worker's end on
a pidfd (Linux), or by polling its pid elsewhere.  Neither server nor worker ever
returns into the coordinator's code: they leave by :func:`os._exit`, so no ``atexit``
hook of the coordinator (temporary files, the database) runs in them.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import pickle
import signal
import socket
import struct
import sys
import threading
import traceback
from typing import NoReturn

from webcrawl.crawler.child_pipes import HEADER, child_env, die_with_parent

__all__ = ["ForkServer", "ForkedWorker"]

#: The server's answer: the worker's pid.
_PID = struct.Struct(">q")
#: Reads from a worker's result pipe in chunks of this size at most.
_PIPE_LIMIT = 1 << 24
#: Seconds between two looks at a process that has no pidfd to wait on.
_POLL = 0.005
#: Seconds a server gets to exit at the end of its socket before it is killed.
_REAP_WAIT = 5.0


class ForkServer:
    """The coordinator's end of a fork server (see the module docstring)."""

    def __init__(self, sock: socket.socket, pid: int,
                 process: asyncio.subprocess.Process | None = None) -> None:
        self._sock = sock
        #: the server process's pid
        self.pid = pid
        #: the server started by :meth:`exec_new` (None: forked off this process)
        self._process = process
        self._lock = asyncio.Lock()

    @staticmethod
    def supported() -> bool:
        """Whether this system can fork and pass descriptors (POSIX; not Windows)."""
        return hasattr(os, "fork") and hasattr(socket, "send_fds")

    @classmethod
    def fork_here(cls) -> ForkServer | None:
        """A server forked off this process, or None where a fork is not safe: an event
        loop runs in this thread, or the process has another thread."""
        if not cls.supported() or not _one_thread() or _loop_running():
            return None
        ours, theirs = socket.socketpair()
        for stream in (sys.stdout, sys.stderr):  # no buffered text printed twice
            with contextlib.suppress(Exception):
                stream.flush()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:  # no memory or process left for it: started later, or fails then
            ours.close()
            theirs.close()
            return None
        if pid == 0:  # the server: never returns
            try:
                ours.close()
                die_with_parent(parent)
                serve(theirs)
            finally:
                os._exit(70)
        theirs.close()
        ours.setblocking(False)
        return cls(ours, pid)

    @classmethod
    async def exec_new(cls) -> ForkServer:
        """A server started as a new interpreter (``python -m webcrawl.crawler.shard.forks``)."""
        ours, theirs = socket.socketpair()
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "webcrawl.crawler.shard.forks", stdin=theirs.fileno(),
                env=child_env())
        finally:
            theirs.close()
        ours.setblocking(False)
        return cls(ours, process.pid, process)

    async def start_worker(self, env: dict[str, str]) -> ForkedWorker:
        """A new worker process, its environment updated with ``env``.  Raises
        :class:`ConnectionError` if the server is gone."""
        loop = asyncio.get_running_loop()
        async with self._lock:
            orders_read, orders_write = os.pipe()
            results_read, results_write = os.pipe()
            try:
                payload = pickle.dumps(env)
                socket.send_fds(self._sock, [HEADER.pack(len(payload)) + payload],
                                [orders_read, results_write])
            except OSError as exc:
                for fd in (orders_write, results_read):
                    os.close(fd)
                raise ConnectionError("the shard workers' fork server is gone") from exc
            finally:
                os.close(orders_read)
                os.close(results_write)
            answer = b""
            try:
                while len(answer) < _PID.size:
                    chunk = await loop.sock_recv(self._sock, _PID.size - len(answer))
                    if not chunk:
                        raise ConnectionError("the shard workers' fork server is gone")
                    answer += chunk
            except BaseException:  # (cancelled too) a worker forked meanwhile reads EOF
                for fd in (orders_write, results_read):
                    os.close(fd)
                raise
        (pid,) = _PID.unpack(answer)
        return await ForkedWorker.attach(pid, orders_write, results_read)

    async def aclose(self) -> None:
        """End the server (it exits at the end of its socket) and reap it; workers it
        started and that are still running go on."""
        self._sock.close()
        if self._process is not None:
            await self._process.wait()
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _REAP_WAIT
        with contextlib.suppress(ChildProcessError):  # reaped elsewhere: gone
            while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                if loop.time() > deadline:
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                    return
                await asyncio.sleep(_POLL)


class ForkedWorker:
    """A worker forked by a :class:`ForkServer`: what
    :class:`~webcrawl.crawler.shard.transport.PipeTransport` needs of a process (its
    pipes as streams, its pid, waiting for its end, killing it).  The coordinator is
    not its parent, so it has no exit status: ``returncode`` is 0 once it has ended
    (its server takes the status)."""

    def __init__(self, pid: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader,
                 stdout_pipe: asyncio.BaseTransport) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self._stdout_pipe = stdout_pipe
        self.returncode: int | None = None
        self._pidfd: int | None = None
        if hasattr(os, "pidfd_open"):
            with contextlib.suppress(OSError):  # already gone: wait() returns at once
                self._pidfd = os.pidfd_open(pid)

    @classmethod
    async def attach(cls, pid: int, orders: int, results: int) -> ForkedWorker:
        """The worker ``pid`` behind the coordinator's ends of its pipes."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_PIPE_LIMIT)
        pipe, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                               os.fdopen(results, "rb", buffering=0))
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(orders, "wb", buffering=0))
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        return cls(pid, writer, reader, pipe)

    async def wait(self) -> int:
        """Wait until the worker has ended."""
        if self.returncode is None:
            if self._pidfd is not None:
                await _readable(self._pidfd)
            else:
                while _alive(self.pid):
                    await asyncio.sleep(_POLL)
            self.returncode = 0
        self._close_pidfd()
        # Its pipes, as an asyncio child process's are closed when it has ended.
        self.stdin.close()
        self._stdout_pipe.close()
        return self.returncode

    def kill(self) -> None:
        """SIGKILL the worker (a no-op once it ended)."""
        if self.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            if self._pidfd is not None:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


async def _readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _one_thread() -> bool:
    """Whether this process runs one thread (native ones counted where Linux shows them)."""
    if threading.active_count() > 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return True


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# -- the server ---------------------------------------------------------------------

def serve(sock: socket.socket) -> NoReturn:
    """Run the fork server on ``sock`` until it ends (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator decides when to stop
    # Reaped by a wait, not by ignoring SIGCHLD: a child's CPU time counts in its
    # parent's (the crawl's total, as time(1) shows it) only when the parent waits.
    signal.signal(signal.SIGCHLD, _reap)
    _away_from_stdio()
    _preload()
    gc.freeze()  # the workers' collections leave the shared pages alone
    sock.setblocking(True)
    while True:
        request = _request(sock)
        if request is None:
            _reap_all()
            os._exit(0)
        env, fds = request
        pid = os.fork()
        if pid == 0:
            _worker(sock, fds, env)
        for fd in fds:
            os.close(fd)
        try:
            sock.sendall(_PID.pack(pid))
        except OSError:
            _reap_all()
            os._exit(0)


def _reap(signum: int = 0, frame: object = None) -> None:
    """Wait for every worker that has ended (SIGCHLD)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _reap_all() -> None:
    """Wait for every worker left (the coordinator stopped or killed them already)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    with contextlib.suppress(ChildProcessError):
        while True:
            os.waitpid(-1, 0)


def _request(sock: socket.socket) -> tuple[dict[str, str], list[int]] | None:
    """The next request (its environment and its two descriptors), None at the end."""
    try:
        header, fds, _, _ = socket.recv_fds(sock, HEADER.size, 2)
        if len(header) < HEADER.size or len(fds) != 2:
            return None
        (size,) = HEADER.unpack(header)
        payload = b""
        while len(payload) < size:
            chunk = sock.recv(size - len(payload))
            if not chunk:
                return None
            payload += chunk
    except OSError:
        return None
    env: dict[str, str] = pickle.loads(payload)  # safe: both ends are this program
    return env, list(fds)


def _worker(sock: socket.socket, fds: list[int], env: dict[str, str]) -> NoReturn:
    """In the forked child: become a worker on the two pipes."""
    code = 70
    try:
        server = os.getppid()
        sock.close()
        orders, results = fds
        os.dup2(orders, 0)
        os.dup2(results, 1)
        os.close(orders)
        os.close(results)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.environ.update(env)
        from webcrawl.storage import _testhooks

        _testhooks.reload()
        die_with_parent(server)
        from webcrawl.crawler.shard import worker

        worker.main()  # leaves by os._exit
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def _away_from_stdio() -> None:
    """The server reads and writes neither stdin nor stdout: a pipe a parent reads to
    its end (the coordinator's output) must not stay open in it."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)


def _preload() -> None:
    """Import what every worker imports, once, before the forks."""
    from webcrawl.crawler import eventloop, fetcher, links  # noqa: F401
    from webcrawl.crawler.http1 import client  # noqa: F401
    from webcrawl.crawler.shard import worker  # noqa: F401

    eventloop.loop_name()  # uvloop, when the crawl runs on it


def main() -> None:
    """Entry point of ``python -m webcrawl.crawler.shard.forks`` (its socket on stdin)."""
    try:
        sock = socket.socket(fileno=os.dup(0))
    except OSError:
        sys.stderr.write("webcrawl fork server: stdin must be the socket from the crawl's "
                         "coordinator (webcrawl crawl --workers N starts it)\n")
        sys.exit(2)
    if sock.family != socket.AF_UNIX:
        sys.stderr.write("webcrawl fork server: stdin must be a Unix socket\n")
        sys.exit(2)
    die_with_parent()
    serve(sock)


if __name__ == "__main__":
    main()
