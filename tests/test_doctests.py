"""Every docstring example in the four packages runs (numpydoc Examples must be runnable)."""

from __future__ import annotations

import doctest
import importlib

import pytest
from ourmodules import all_modules


@pytest.mark.parametrize("name", all_modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
