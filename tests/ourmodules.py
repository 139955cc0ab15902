"""Every importable module of the four packages (shared by the doctest and architecture tests)."""

from __future__ import annotations

import importlib
import pkgutil

PACKAGES = ("webcrawl.analysis", "webcrawl.crawler", "webcrawl.fixtures", "webcrawl.storage")


def all_modules() -> list[str]:
    """Dotted names of every package and module of ours, ``__main__`` modules left out."""
    names: list[str] = []
    for package in PACKAGES:
        pkg = importlib.import_module(package)
        names.append(package)
        names += [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}.")
                  if not m.name.endswith("__main__")]
    return sorted(names)
