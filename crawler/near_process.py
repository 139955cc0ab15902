"""The near-duplicate test in a process of its own: the crawl hands it pages as they
come and reads its results at each commit.

The test's work a page (the page's text, its sketch, the look-up among the groups'
leaders: :func:`~webcrawl.crawler.near_steps.sketch_and_test`) cost 12-16 % of a
CPU-bound one-process crawl's CPU (docs/results/near-duplicates.md), all of it in the
event loop's thread.  A :class:`NearProcess` runs it in a child process
(``python -m webcrawl.crawler.near_process``), on another core when there is one:
:class:`~webcrawl.crawler.near_batch.NearBatch` sends it each page (its decoded HTML,
its text or its sketch) as the page is recorded, and at the store's next commit asks
for the results of every page sent since the last, which the child has mostly made
by then.

Contract
--------
* **Same results.**  The child holds the test's state
  (:class:`~webcrawl.crawler.near_seen.NearSeen`, read from the crawl database with
  :meth:`~webcrawl.crawler.near_seen.NearSeen.from_db` when one is given) and runs
  ``sketch_and_test`` on the pages in the order they were sent: the sketches and group
  changes of the test run in the crawl's own process, bit for bit.
* **Pipelined.**  The child works through the pages as they arrive, in runs of at least
  :data:`RUN_PAGES` (a sketch costs mostly numpy's per-call overhead, which a run pays
  once); a commit waits only for the pages of the last run.  The pipe to the child holds
  up to 1 MiB where the system allows it, so sending does not wait on the child while
  it works.
* **Ends with its parent.**  The child stops at the end of its input: when
  :meth:`NearProcess.close` closes it, and when the crawl's process ends in any way
  (``kill -9`` included), as the system closes its pipes (on Linux it is also killed
  with its parent).  Ctrl-C does not stop it (it runs in a process group of its own, and
  ignores SIGINT): the crawl's last commit, after Ctrl-C, still asks it for the last
  pages' results.
* **Errors.**  A failure in the child (an unreadable database, a bug) or its loss is
  raised by the next :meth:`NearProcess.results` as a
  :class:`~webcrawl.storage.errors.CrawlError`: the commit waiting for it fails, as a
  failed write does, and nothing of its batch is written.
* **Cost.**  Frames are pickles (:mod:`~webcrawl.crawler.child_pipes`,
  the shard workers' format); a page costs the crawl's process its pickling and a share
  of one write a frame.  The child's own CPU is added to the crawl's: the test does not
  get cheaper, it leaves the loop's thread (measured in docs/results/near-duplicates.md).
"""

from __future__ import annotations

import contextlib
import fcntl
import signal
import subprocess
import sys
import traceback
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from webcrawl.crawler.child_pipes import (
    child_env,
    die_with_parent,
    encode_frame,
    read_frame_from,
)
from webcrawl.storage.errors import CrawlError

if TYPE_CHECKING:
    from webcrawl.crawler.near_seen import NearUpdate
    from webcrawl.crawler.near_steps import NearPage

__all__ = ["RUN_PAGES", "NearProcess", "main", "serve"]

#: Pages the child sketches and tests together at least (fewer only at a commit):
#: numpy's per-call cost makes 16 texts at once cost 1.4 times as much a page as 64
#: (benchmarks/bench_near_dup.py).
RUN_PAGES = 64
#: Bytes the pipe to the child holds, where the system allows it (Linux's default
#: ``pipe-max-size``; 64 KiB otherwise).
_PIPE_BYTES = 1 << 20
#: Seconds :meth:`NearProcess.close` gives the child to exit before it is killed.
_CLOSE_WAIT = 5.0


class NearProcess:
    """A child process running the near-duplicate test (see the module docstring)."""

    __slots__ = ("_lost", "_process", "_stdin", "_stdout")

    def __init__(self, min_resemblance: float, db: Path | None = None) -> None:
        """Start the child with the test's state: ``db``'s stored groups, else empty.

        On Linux the child is killed when the thread that started it ends: start it in
        the thread that runs the crawl (the event loop's), not in a passing one."""
        self._process = subprocess.Popen(
            [sys.executable, "-m", "webcrawl.crawler.near_process"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_env(),
            # its own process group: Ctrl-C at the terminal does not reach it
            process_group=0)
        assert self._process.stdin is not None and self._process.stdout is not None
        self._stdin: IO[bytes] = self._process.stdin
        self._stdout: IO[bytes] = self._process.stdout
        if hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux
            with contextlib.suppress(OSError):
                fcntl.fcntl(self._stdin.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        self._lost = False
        self._write(["start", min_resemblance, None if db is None else str(db)])
        if db is not None:
            # The crawl commits nothing until the child has read the stored groups: a
            # commit with no page to test does not wait for the child.
            try:
                self._reply()
            except CrawlError:
                self.close()
                raise

    def _reply(self) -> list[Any]:
        reply = None if self._lost else read_frame_from(self._stdout)
        if reply is None:
            code = self._process.poll()
            raise CrawlError("the near-duplicate test's process ended"
                             + ("" if code is None else f" (exit status {code})"))
        if reply[0] == "error":
            raise CrawlError(f"the near-duplicate test failed: {reply[1]}")
        return reply

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The child's exit status (None while it runs)."""
        return self._process.poll()

    def send(self, pages: list[NearPage]) -> None:
        """Hand the child pages to sketch and test, in order."""
        self._write(["pages", pages])

    def results(self) -> tuple[list[bytes | None], list[NearUpdate], int]:
        """The stored sketch (None: none) of every page sent since the last call, in
        order; the group changes their tests made, in order; and the near copies the
        test knows of now."""
        self._write(["results"])
        _, sketches, updates, near_copies = self._reply()
        return sketches, updates, near_copies

    def close(self) -> None:
        """End the child (it stops at the end of its input) and wait for it."""
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            self._process.wait(_CLOSE_WAIT)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._stdout.close()

    def _write(self, message: list[Any]) -> None:
        if self._lost:
            return
        try:
            self._stdin.write(encode_frame(message))
            self._stdin.flush()
        except (BrokenPipeError, ValueError):  # the child is gone: results() says so
            self._lost = True


def serve(inp: IO[bytes], out: IO[bytes]) -> None:
    """The child's side: read the test's state and pages from ``inp``, answer on ``out``
    (see the module docstring)."""
    from webcrawl.crawler.near_seen import NearSeen
    from webcrawl.crawler.near_steps import sketch_and_test

    start = read_frame_from(inp)
    if start is None:
        return
    _, min_resemblance, db = start
    error: str | None = None
    try:
        near = NearSeen.from_db(db, min_resemblance) if db else NearSeen(min_resemblance)
    except Exception:
        near, error = NearSeen(min_resemblance), _failure()
    if db:  # the state is read: the crawl may commit
        out.write(encode_frame(["ready"] if error is None else ["error", error]))
        out.flush()
    waiting: list[NearPage] = []
    sketches: list[bytes | None] = []
    updates: list[NearUpdate] = []

    def run() -> None:
        nonlocal waiting, error
        pages, waiting = waiting, []
        if error is not None or not pages:
            return
        try:
            made, changed = sketch_and_test(near, pages)
        except Exception:
            error = _failure()
            return
        sketches.extend(made)
        updates.extend(changed)

    while (message := read_frame_from(inp)) is not None:
        if message[0] == "pages":
            waiting += message[1]
            if len(waiting) >= RUN_PAGES:
                run()
            continue
        run()  # "results"
        reply: list[Any] = (["error", error] if error is not None else
                            ["results", sketches, updates, near.near_duplicates])
        out.write(encode_frame(reply))
        out.flush()
        sketches, updates = [], []


def _failure() -> str:
    """The exception being handled, in one line (its last frame's place)."""
    kind, value, tb = sys.exc_info()
    where = traceback.extract_tb(tb)[-1] if tb is not None else None
    at = f" ({Path(where.filename).name}:{where.lineno})" if where is not None else ""
    return f"{kind.__name__ if kind else 'error'}: {value}{at}"


def main() -> None:
    """Entry point of ``python -m webcrawl.crawler.near_process`` (pages on stdin,
    results on stdout)."""
    die_with_parent()
    # The crawl decides when it stops, and its last commit still asks this process for
    # the last pages' results.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(BrokenPipeError):  # the crawl is gone: nobody reads
        serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
