"""``python -m webcrawl.crawler.shard`` outside a crawl: a clear error, not an abort.

The worker reads its orders from stdin and writes its answers to stdout through the
event loop's pipe transports; under uvloop, libuv aborts the process (SIGABRT, no
message) when one of them is a file or a terminal.  Started by hand with a file on
either side, the worker says what it needs and exits 2; started with pipes that end at
once, it ends cleanly (exit 0), as it does when the coordinator closes its input.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

WORKER = [sys.executable, "-m", "webcrawl.crawler.shard"]


@pytest.mark.parametrize("side", ["stdin", "stdout"])
def test_a_file_for_stdin_or_stdout_is_a_one_line_error(tmp_path: Path, side: str) -> None:
    target = tmp_path / "file"
    target.write_bytes(b"")
    with target.open("r+b") as file:
        done = subprocess.run(WORKER, stdin=file if side == "stdin" else subprocess.PIPE,
                              stdout=file if side == "stdout" else subprocess.PIPE,
                              stderr=subprocess.PIPE, check=False)
    assert done.returncode == 2
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and "must be pipes" in lines[0]


def test_pipes_that_end_at_once_end_the_worker_cleanly() -> None:
    done = subprocess.run(WORKER, input=b"", capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"" and done.stderr == b""
