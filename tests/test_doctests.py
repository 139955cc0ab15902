"""Every docstring example in the four packages runs (numpydoc Examples must be runnable)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("analysis", "crawler", "fixtures", "storage")


def _modules() -> list[str]:
    names: list[str] = []
    for package in PACKAGES:
        pkg = importlib.import_module(package)
        names.append(package)
        names += [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}.")
                  if not m.name.endswith("__main__")]
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
