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

A prefix hides every ``__pycache__`` folder, the installed libraries' too: each worker
compiled numpy, scipy, pandas and matplotlib again (collecting the suite took 23.3 CPU-s
in one process against 14.2 with the libraries' own bytecode, 2026-12-06).  So the cache
starts with links to the bytecode the installer and Python's own install wrote (their
tests folders left out: nothing imports them); a process that finds one stale replaces the
link with a fresh file (Python writes bytecode to a new file, then renames it), never
writing into the library's own file.

README command 2 hands whole files to one worker process per core and one more
(``-n auto``, :func:`pytest_xdist_auto_num_workers`, with
``--dist loadfile --no-loadscope-reorder`` from pyproject.toml), in the order collected; a
file of several minutes handed out last would run alone at the end.
:data:`LONGEST_FILES` go first (longest processing time first), the rest keep their order.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from typing import Any

import pytest

#: Test files of 18 CPU-s or more, longest first (CPU time of the test process and the
#: processes it waited for, each file run alone, 2026-12-06: 99, 56, 50, 34, 33, 26, 21,
#: 18 CPU-s): the resident-memory crawls, the README and guide blocks, the reports, the
#: kill -9 crawls, the demo.
LONGEST_FILES = ("test_memory_limit.py", "test_readme_commands.py", "test_report.py",
                 "test_revisit_crash_safety.py", "test_orderings_resume_live.py",
                 "test_crash_safety.py", "test_shard_kill.py", "test_demo.py")

#: the cache folder of this run (set by the controller only)
_KEY = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    # xdist workers inherit the controller's environment: only the controller decides.
    if not sys.dont_write_bytecode or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    cache = tempfile.mkdtemp(prefix="webcrawl-pycache-")
    config.stash[_KEY] = cache
    _link_installed_bytecode(cache, str(config.rootpath))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = cache
    sys.pycache_prefix = cache
    sys.dont_write_bytecode = False


def _link_installed_bytecode(cache: str, repository: str) -> None:
    """Link every ``dir/__pycache__/mod.TAG.pyc`` of the interpreter's library folders
    (the venv's and the interpreter's, not the repository's folders, whose bytecode was
    never written) where the prefix ``cache`` looks for it (``cache/dir/mod.TAG.pyc``,
    ``dir`` as on ``sys.path``)."""
    suffix = f".{sys.implementation.cache_tag}.pyc"  # not the -O (.opt-N) variants
    tops = {os.path.abspath(p) for p in sys.path if p and os.path.isdir(p)}
    for top in tops:
        if _inside(top, repository) and not _inside(top, sys.prefix):
            continue
        for root, dirs, files in os.walk(top):
            # the base interpreter's site-packages is not this venv's (its own top)
            dirs[:] = [d for d in dirs if d not in ("tests", "test", "site-packages")]
            if os.path.basename(root) != "__pycache__":
                continue
            mirror = os.path.join(cache, os.path.dirname(root).lstrip(os.sep))
            os.makedirs(mirror, exist_ok=True)
            for name in files:
                if name.endswith(suffix):
                    _link(os.path.join(root, name), os.path.join(mirror, name))


def _link(target: str, link: str) -> None:
    """A hard link (0.2 sys-s for the 6,000 files against 5 for symbolic links, whose long
    targets each take a disk block); a symbolic one across file systems or where the
    kernel refuses to link another user's file."""
    try:
        os.link(target, link)
    except OSError:
        os.symlink(target, link)


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath((path, os.path.abspath(folder))) == os.path.abspath(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    cache = config.stash.get(_KEY, None)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker per core and one more.

    Many tests wait on the processes and servers they start, so one worker a core leaves
    the cores idle part of the time.  The suite in a clean clone, 2-core machine,
    2026-12-06, one run after the other: 2 workers 8 min 52 s (1.43 cores busy on
    average; other jobs ending in its first minutes), 3 workers 6 min 30 s (1.85 busy),
    4 workers 6 min 40 s (1.91), at load average 1-3.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still sets the number (xdist reads it).
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of :data:`LONGEST_FILES` first (a stable sort: order kept within)."""
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture
def pagerank_computations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per PageRank computed for a database's graph (a kept one costs none:
    :mod:`webcrawl.analysis.graph.kept`); and no quiet period before a file's state is
    taken, so that files written by a test keep results at once."""
    from webcrawl.analysis.graph import kept
    from webcrawl.analysis.graph.pagerank_alg import pagerank
    from webcrawl.storage import results_cache

    monkeypatch.setattr(results_cache, "QUIET_SECONDS", 0.0)
    calls: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return pagerank(*args, **kwargs)

    monkeypatch.setattr(kept, "pagerank", counting)
    return calls
