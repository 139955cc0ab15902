"""Run the ``webcrawl`` command, in-process or as a child process, and capture what it
says (test helpers)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from webcrawl.crawler.cli import main


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``main(argv)``: its exit status (a usage error's too), stdout and stderr."""
    capsys.readouterr()
    try:
        code: Any = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return int(code or 0), out, err


#: ``webcrawl`` as a child process, from this source tree.
WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]


def run_webcrawl(cmd: list[str], kill: str | None = None,
                 timeout: float = 150) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` (``WEBCRAWL + [...]``) to its end; ``kill`` is a test kill point
    (``WEBCRAWL_TEST_KILL``, :mod:`webcrawl.storage._testhooks`), never inherited."""
    env = {k: v for k, v in os.environ.items() if k != "WEBCRAWL_TEST_KILL"}
    if kill is not None:
        env["WEBCRAWL_TEST_KILL"] = kill
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                          check=False)
