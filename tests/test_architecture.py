"""The house above the files: no import cycles, modules that import alone, facades that list
the documented API, a light ``webcrawl --help`` (aiohttp's test_circular_imports /
test_import_time and httpx's test_exported_members, adapted).  The layer contract itself is
``lint-imports`` in .ci/run.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import grimp
import networkx as nx
import pytest
import webcrawl
import webcrawl.analysis
import webcrawl.crawler
import webcrawl.fixtures
import webcrawl.storage
from ourmodules import PACKAGES, all_modules

ROOT = Path(__file__).resolve().parents[1]

#: Packages whose ``__init__`` is a facade: its ``__all__`` lists the package's documented API.
FACADES = (
    "webcrawl.analysis",
    "webcrawl.analysis.change",
    "webcrawl.analysis.graph",
    "webcrawl.analysis.ordering",
    "webcrawl.analysis.ordering.strategies",
    "webcrawl.analysis.report",
    "webcrawl.analysis.sampling",
    "webcrawl.crawler",
    "webcrawl.crawler.engine",
    "webcrawl.crawler.http1",
    "webcrawl.crawler.ingest",
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
    # The whole package: grimp reads top-level packages only ("webcrawl" is a regular one).
    graph = grimp.build_graph("webcrawl", exclude_type_checking_imports=True)
    g = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module:
                g.add_edge(module, imported)
    cycles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert cycles == []


# ~170 fresh imports: 26 s on a quiet machine, past the default 120 s at load 13.
@pytest.mark.timeout(900)
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
                         text=True, timeout=840, check=True)
    assert json.loads(out.stdout) == {}


@pytest.mark.parametrize("name", [m for m in MODULES if "." in m])
def test_module_name_is_not_shadowed(name: str) -> None:
    """``import pkg.mod`` binds the module: no facade re-exports a function named like it."""
    module = importlib.import_module(name)
    parent, _, leaf = name.rpartition(".")
    assert getattr(importlib.import_module(parent), leaf) is module


def _public_modules(package: str) -> list[str]:
    """Every module below ``package`` that is not private (``_x``), the CLI or ``__main__``."""
    pkg = importlib.import_module(package)
    return [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}.")
            if not any(part.startswith("_") for part in m.name.split("."))
            and not m.name.startswith("webcrawl.crawler.cli")]


@pytest.mark.parametrize("facade", FACADES)
def test_facade_lists_public_names(facade: str) -> None:
    """``__all__`` is the facade's list: sorted, unique, and every name resolves to a name that
    a public module of the package declares in its own ``__all__`` (no helper of a private
    module leaks out), never one that hides a submodule (``import pkg.mod`` must bind the
    module whatever was imported before)."""
    package = importlib.import_module(facade)
    exported = list(package.__all__)
    assert exported, f"{facade} exports nothing"
    assert exported == sorted(exported, key=_isort_key), "__all__ is kept sorted (ruff RUF022)"
    assert len(exported) == len(set(exported))
    submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    assert sorted(set(exported) & submodules) == []
    declared: dict[str, list[object]] = {}
    for name in _public_modules(facade):
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            declared.setdefault(attr, []).append(getattr(module, attr))
    undeclared = [name for name in exported
                  if not any(getattr(package, name) is value for value in declared.get(name, ()))]
    assert undeclared == []


def _statically_exported(tree: ast.Module) -> tuple[set[str], set[str], bool]:
    """Names an ``__init__`` binds at module level (``if`` blocks included), the subset that
    type checkers treat as re-exported without ``__all__``, and whether ``__all__`` is a literal."""
    bound: set[str] = set()
    explicit: set[str] = set()
    literal_all = False
    body = list(tree.body)
    while body:
        node = body.pop(0)
        if isinstance(node, ast.If):
            body += node.body + node.orelse
        elif isinstance(node, ast.ImportFrom | ast.Import):
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                bound.add(name)
                if alias.asname == alias.name:
                    explicit.add(name)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
            explicit.add(node.name)
        elif isinstance(node, ast.Assign):
            names = {n.id for target in node.targets for n in ast.walk(target)
                     if isinstance(n, ast.Name)}
            bound |= names
            explicit |= names
            if "__all__" in names:
                literal_all = isinstance(node.value, ast.List | ast.Tuple) and all(
                    isinstance(e, ast.Constant) for e in node.value.elts)
    return bound, explicit, literal_all


@pytest.mark.parametrize("facade", FACADES)
def test_type_checkers_see_every_exported_name(facade: str) -> None:
    """A lazy facade's names load at run time through ``__getattr__``; mypy and pyright (ours
    and a user's, under ``--strict``) see a name only if the ``__init__`` imports it, and
    re-exports it only through a literal ``__all__`` or ``from m import X as X``."""
    package = importlib.import_module(facade)
    assert package.__file__ is not None
    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
    bound, explicit, literal_all = _statically_exported(tree)
    visible = bound if literal_all else explicit
    assert sorted(set(package.__all__) - visible) == []


def _documented_imports() -> list[tuple[str, str, str]]:
    """``(where, package, name)`` for every name that a Python code block of README.md or of
    docs/**/*.md imports from a package of ours (``from webcrawl.x import name``), or reads as
    an attribute of one (``import webcrawl.x as wx; wx.name``).  Read at test time: the
    documents change without this test changing."""
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found: list[tuple[str, str, str]] = []
    for path in documents:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        fences = r"^[ \t]*```(?:python|py|pycon)[ \t]*\n(.*?)^[ \t]*```"
        for match in re.finditer(fences, text, flags=re.S | re.M):
            where = f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 2}"
            lines = textwrap.dedent(match.group(1)).splitlines()
            if any(line.startswith(">>> ") for line in lines):  # a session: keep the input
                lines = [line[4:] for line in lines if line.startswith((">>> ", "... "))]
            try:
                tree = ast.parse("\n".join(lines))
            except SyntaxError:  # pseudo-code: read its import lines alone
                tree = ast.parse("\n".join(
                    line.strip() for line in lines
                    if re.match(r"\s*from webcrawl[\w.]* import [\w, ]+$", line)))
            aliases: dict[str, str] = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("webcrawl."):
                    found += [(where, node.module or "", a.name) for a in node.names]
                elif isinstance(node, ast.Import):
                    aliases |= {a.asname or a.name: a.name for a in node.names
                                if a.name.startswith("webcrawl.")}
            found += [(where, aliases[ast.unparse(node.value)], node.attr)
                      for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                      and ast.unparse(node.value) in aliases]
    return found


def test_documented_imports_are_exported() -> None:
    """Every name the README's and the docs' code imports from a facade is in that facade's
    ``__all__`` (or is one of its modules): the facade's list is the documented API."""
    from_facades = [(where, package, name) for where, package, name in _documented_imports()
                    if package in FACADES]
    assert from_facades, "no code block of README.md or docs/ imports from a facade"
    missing = []
    for where, package, name in from_facades:
        pkg = importlib.import_module(package)
        submodules = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
        if name not in pkg.__all__ and name not in submodules:
            missing.append(f"{where}: {package}.{name}")
    assert missing == []


@pytest.mark.parametrize("facade", FACADES)
def test_public_modules_declare_all(facade: str) -> None:
    package = importlib.import_module(facade)
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or (facade, info.name) == ("webcrawl.crawler", "cli"):
            continue
        module = importlib.import_module(f"{facade}.{info.name}")
        assert hasattr(module, "__all__"), f"{module.__name__} has no __all__"


HEAVY = ("aiohttp", "matplotlib", "numpy", "scipy")


@pytest.mark.parametrize("script", [
    "from webcrawl.crawler.cli import main\ntry:\n    main(['--help'])\n"
    "except SystemExit:\n    pass",
    "import webcrawl.crawler, webcrawl.analysis, webcrawl.storage, webcrawl.fixtures",
    "import webcrawl.crawler.shard",
    "import webcrawl.crawler.urls",
    "import webcrawl.storage.errors",
], ids=["help", "facades", "shard-facade", "urls", "errors"])
def test_light_imports_load_no_heavy_library(script: str) -> None:
    """``webcrawl --help``, the facades and the light modules that the CLI dispatcher and the
    fixture web import load no heavy library: the facades load a name's module on first use."""
    script += (f"\nimport sys\nheavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
               "print(' '.join(heavy), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stderr.strip() == ""


def test_version_everywhere() -> None:
    packages = (webcrawl, webcrawl.analysis, webcrawl.crawler, webcrawl.fixtures,
                webcrawl.storage)
    versions = {p.__version__ for p in packages}
    assert len(versions) == 1
    out = subprocess.run([sys.executable, "-m", "webcrawl.crawler.cli", "--version"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == f"webcrawl {versions.pop()}"


@pytest.mark.parametrize("package", PACKAGES)
def test_package_ships_type_hints(package: str) -> None:
    assert (ROOT / package.removeprefix("webcrawl.") / "py.typed").is_file()


def test_webcrawl_is_a_light_regular_package() -> None:
    """``import webcrawl`` is the package at the repository's root (its ``__init__.py`` and
    ``py.typed``), holding the version and nothing heavy; the four packages are below it."""
    assert webcrawl.__file__ is not None  # a regular package, not a namespace
    assert Path(webcrawl.__file__).read_bytes() == (ROOT / "__init__.py").read_bytes()
    assert webcrawl.__all__ == ["__version__"]
    assert (ROOT / "py.typed").is_file()
    out = subprocess.run([sys.executable, "-c", "import sys, webcrawl\n"
                          f"print([m for m in {HEAVY!r} if m in sys.modules])"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_installed_packages_match_the_folders() -> None:
    """pyproject's package list names every folder of ours, each under ``webcrawl.``."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = sorted(config["tool"]["setuptools"]["packages"])
    folders = sorted("webcrawl." + str(p.parent.relative_to(ROOT)).replace("/", ".")
                     for top in ("crawler", "analysis", "storage", "fixtures")
                     for p in (ROOT / top).rglob("__init__.py"))
    assert listed == sorted(["webcrawl", *folders])
    assert config["tool"]["setuptools"]["package-dir"]["webcrawl"] == "."


def test_no_code_imports_the_bare_folder_names() -> None:
    """Installed, the packages exist only as ``webcrawl.<name>``: a bare ``import crawler``
    works from the repository root by accident and nowhere else."""
    import re

    bare = re.compile(r"^\s*(from|import) (crawler|analysis|storage|fixtures)\b", re.M)
    offenders = [str(p.relative_to(ROOT))
                 for top in ("crawler", "analysis", "storage", "fixtures", "tests", "benchmarks")
                 for p in (ROOT / top).rglob("*.py") if bare.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
