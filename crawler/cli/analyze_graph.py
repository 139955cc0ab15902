"""`webcrawl analyze` topics: not built yet (placeholder)."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Add nothing until these topics land."""
    del sub
