"""The house above the files: no import cycles, modules that import alone, complete facades,
a light ``webcrawl --help`` (aiohttp's test_circular_imports / test_import_time and httpx's
test_exported_members, adapted).  The layer contract itself is ``lint-imports`` in .ci/run.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx
import pytest
import webcrawl.analysis
import webcrawl.crawler
import webcrawl.fixtures
import webcrawl.storage
from ourmodules import PACKAGES, all_modules

ROOT = Path(__file__).resolve().parents[1]

#: Packages whose ``__init__`` is a facade over their public modules.
FACADES = (
    "webcrawl.analysis",
    "webcrawl.analysis.change",
    "webcrawl.analysis.graph",
    "webcrawl.analysis.ordering",
    "webcrawl.analysis.ordering.strategies",
    "webcrawl.analysis.report",
    "webcrawl.analysis.sampling",
    "webcrawl.crawler",
    "webcrawl.crawler.revisit",
    "webcrawl.crawler.shard",
    "webcrawl.fixtures",
    "webcrawl.storage",
)


MODULES = all_modules()


def _isort_key(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: CONSTANTS, then Classes, then functions and the rest.
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def test_no_import_cycle_between_modules() -> None:
    # grimp records every import statement, function-local ones included; imports under
    # TYPE_CHECKING exist for annotations only and are left out.
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True)
    g = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module:
                g.add_edge(module, imported)
    cycles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert cycles == []


def test_every_module_imports_alone() -> None:
    # One fresh interpreter; before each import every module of ours is forgotten, so each
    # one is imported first, as a user's `import x.y` would (third-party modules stay cached:
    # they are not what could cycle).
    script = (
        "import importlib, json, sys\n"
        f"ours = {PACKAGES!r}\n"
        "failed = {}\n"
        f"for name in {MODULES!r}:\n"
        "    for m in [m for m in sys.modules if m.startswith(ours)]:\n"
        "        del sys.modules[m]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed[name] = repr(exc)\n"
        "print(json.dumps(failed))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, check=True)
    assert json.loads(out.stdout) == {}


@pytest.mark.parametrize("name", [m for m in MODULES if "." in m])
def test_module_name_is_not_shadowed(name: str) -> None:
    """``import pkg.mod`` binds the module: no facade re-exports a function named like it."""
    module = importlib.import_module(name)
    parent, _, leaf = name.rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is module


@pytest.mark.parametrize("facade", FACADES)
def test_facade_exports_every_public_name(facade: str) -> None:
    package = importlib.import_module(facade)
    exported = list(package.__all__)
    assert exported == sorted(exported, key=_isort_key), "__all__ is kept sorted (ruff RUF022)"
    assert len(exported) == len(set(exported))
    for name in exported:
        assert getattr(package, name) is not None
    missing = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or (facade, info.name) == ("webcrawl.crawler", "cli"):
            continue
        module = importlib.import_module(f"{facade}.{info.name}")
        lacking = sorted(set(getattr(module, "__all__", ())) - set(exported))
        if lacking:
            missing[info.name] = lacking
    assert missing == {}


@pytest.mark.parametrize("facade", FACADES)
def test_public_modules_declare_all(facade: str) -> None:
    package = importlib.import_module(facade)
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or (facade, info.name) == ("webcrawl.crawler", "cli"):
            continue
        module = importlib.import_module(f"{facade}.{info.name}")
        assert hasattr(module, "__all__"), f"{module.__name__} has no __all__"


def test_help_loads_no_heavy_library() -> None:
    script = (
        "import sys\n"
        "from webcrawl.crawler.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('aiohttp', 'matplotlib', 'numpy', 'scipy')\n"
        "print(' '.join(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stderr.strip() == ""


def test_version_everywhere() -> None:
    packages = (webcrawl.analysis, webcrawl.crawler, webcrawl.fixtures, webcrawl.storage)
    versions = {p.__version__ for p in packages}
    assert len(versions) == 1
    out = subprocess.run([sys.executable, "-m", "webcrawl.crawler.cli", "--version"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == f"webcrawl {versions.pop()}"


@pytest.mark.parametrize("package", PACKAGES)
def test_package_ships_type_hints(package: str) -> None:
    assert (ROOT / package.removeprefix("webcrawl.") / "py.typed").is_file()


def test_installed_packages_match_the_folders() -> None:
    """pyproject's package list names every folder of ours, each under ``webcrawl.``."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = sorted(config["tool"]["setuptools"]["packages"])
    folders = sorted("webcrawl." + str(p.parent.relative_to(ROOT)).replace("/", ".")
                     for top in ("crawler", "analysis", "storage", "fixtures")
                     for p in (ROOT / top).rglob("__init__.py"))
    assert listed == folders


def test_no_code_imports_the_bare_folder_names() -> None:
    """Installed, the packages exist only as ``webcrawl.<name>``: a bare ``import crawler``
    works from the repository root by accident and nowhere else."""
    import re

    bare = re.compile(r"^\s*(from|import) (crawler|analysis|storage|fixtures)\b", re.M)
    offenders = [str(p.relative_to(ROOT))
                 for top in ("crawler", "analysis", "storage", "fixtures", "tests", "benchmarks")
                 for p in (ROOT / top).rglob("*.py") if bare.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
