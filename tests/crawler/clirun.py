"""Run the ``webcrawl`` command in-process and capture what it says (a test helper)."""

from __future__ import annotations

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
