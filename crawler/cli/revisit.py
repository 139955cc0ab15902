"""`webcrawl revisit`: not built yet (placeholder so the dispatcher can import it)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    """Add nothing until this sub-command lands."""
    del sub


def _unused(args: argparse.Namespace) -> int:  # pragma: no cover
    return 0
