"""Options and helpers shared by several sub-commands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from storage.errors import ConfigError

__all__ = ["add_db_option", "add_json_option", "existing_db", "print_json", "print_table"]


def add_db_option(parser: argparse.ArgumentParser, *, must_exist: bool = True) -> None:
    """``--db PATH``: the crawl database."""
    parser.add_argument("--db", required=True, type=Path, metavar="PATH",
                        help="the crawl database file" + (" (must exist)" if must_exist else ""))


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """``--json``: machine-readable output instead of tables."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def existing_db(path: Path) -> Path:
    """Return ``path`` if it is an existing file, else raise a one-line ConfigError."""
    if not path.exists():
        raise ConfigError(f"no crawl database at {path}")
    if not path.is_file():
        raise ConfigError(f"{path} is not a file")
    return path


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=_json_default)
    sys.stdout.write("\n")


def _json_default(obj: Any) -> Any:
    # numpy scalars and arrays
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def print_table(headers: list[str], rows: list[list[Any]], *, title: str | None = None) -> None:
    """Print a plain aligned table; floats get 4 significant digits."""
    def fmt(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

    cells = [[fmt(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(headers)]
    if title:
        print(title)
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
