"""What every test shares: compiled bytecode cached outside the source tree, and the
longest test files first.

With ``PYTHONDONTWRITEBYTECODE`` set (common in containers), every Python process the
suite starts (the CLI runs, the workers, the fresh interpreters of
``test_every_module_imports_alone``) compiles our ~190 modules from source again: measured
2.0 CPU-s against 1.4 for importing the crawler, the CLI and the report, a third of what
each CLI subprocess spends before it starts.  For the test session only, bytecode goes to
a throwaway cache (``PYTHONPYCACHEPREFIX``, never beside the sources) that every process of
the run shares and that is removed at the end.  Without the variable Python caches by
itself, beside the sources, and nothing changes here.

README command 2 hands whole files to one worker process per core (``-n auto``, with
``--dist loadfile --no-loadscope-reorder`` from pyproject.toml), in the order collected; a
file of several minutes handed out last would run alone at the end.
:data:`LONGEST_FILES` go first (longest processing time first), the rest keep their order.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

#: Test files of a minute or more (``--durations``, 2-core machine, 2026-12-06), longest
#: first: the README and guide blocks (~50 s each), the resident-memory and kill -9 crawls,
#: the demo, the fresh imports of every module.
LONGEST_FILES = ("test_readme_commands.py", "test_memory_limit.py", "test_crash_safety.py",
                 "test_demo.py", "test_architecture.py")

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



def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of :data:`LONGEST_FILES` first (a stable sort: order kept within)."""
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
