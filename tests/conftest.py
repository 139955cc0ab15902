"""What every test shares: compiled bytecode cached outside the source tree.

With ``PYTHONDONTWRITEBYTECODE`` set (common in containers), every Python process the
suite starts (the CLI runs, the workers, the fresh interpreters of
``test_every_module_imports_alone``) compiles our ~190 modules from source again: measured
2.0 CPU-s against 1.4 for importing the crawler, the CLI and the report, a third of what
each CLI subprocess spends before it starts.  For the test session only, bytecode goes to
a throwaway cache (``PYTHONPYCACHEPREFIX``, never beside the sources) that every process of
the run shares and that is removed at the end.  Without the variable Python caches by
itself, beside the sources, and nothing changes here.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

#: the cache folder of this run (set by the controller only)
_KEY = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    # xdist workers inherit the controller's environment: only the controller decides.
    if not sys.dont_write_bytecode or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    cache = tempfile.mkdtemp(prefix="webcrawl-pycache-")
    config.stash[_KEY] = cache
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = cache
    sys.pycache_prefix = cache
    sys.dont_write_bytecode = False


def pytest_unconfigure(config: pytest.Config) -> None:
    cache = config.stash.get(_KEY, None)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)

