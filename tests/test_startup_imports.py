"""What a ``webcrawl`` process imports before its command runs (aiohttp's test_import_time,
as a property instead of a timing): a command loads its own parser and what it uses, never
the heavy libraries of the analyses.  Each check runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Libraries no crawl uses: the analyses' numerics, the hand-offs, the report's figures.
NOT_IN_A_CRAWL = ("scipy", "pandas", "numba", "matplotlib", "networkx", "pyarrow", "aiohttp")
#: What reading a crawl's graph (``export edges``, the loader under every analysis) does not
#: need: the graph algorithms' scipy modules and pandas (pyarrow imports it on
#: ``pyarrow.array`` and ``to_numpy`` when it is installed).
NOT_IN_LOAD_GRAPH = ("scipy.sparse.csgraph", "scipy.linalg", "scipy.special", "scipy.stats",
                     "pandas", "numba", "matplotlib")


def _loaded(script: str, watch: tuple[str, ...], cwd: Path) -> list[str]:
    """Which of ``watch`` a fresh interpreter has in ``sys.modules`` after ``script``."""
    script = textwrap.dedent(script) + (
        f"\nimport sys\nprint(' '.join(m for m in {watch!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_crawl_command_loads_no_analysis_library(tmp_path: Path) -> None:
    """``webcrawl crawl`` with worker processes: its parser, settings, engine, progress
    line and shard worker, built as the command builds them."""
    script = """
        from webcrawl.crawler.cli import _parser_for
        from webcrawl.crawler.cli.crawl import _given_settings
        argv = ["crawl", "http://a.test/", "--db", "crawl.db", "--workers", "2"]
        args = _parser_for(argv).parse_args(argv)
        from webcrawl.crawler.engine import Crawler
        import webcrawl.crawler.progress, webcrawl.crawler.shard.worker
        crawler = Crawler(args.db, args.seeds, overrides=_given_settings(args))
        assert type(crawler.downloader).__name__ == "ShardDownloader"
    """
    assert _loaded(script, NOT_IN_A_CRAWL, tmp_path) == []


@pytest.mark.parametrize("argv", [["crawl", "--help"], ["export", "--help"],
                                  ["crawl", "http://a.test/"]], ids=["crawl-help",
                                                                     "export-help", "crawl"])
def test_a_command_builds_its_own_parser_alone(argv: list[str], tmp_path: Path) -> None:
    """The other commands' modules (and what they import) stay unloaded; the whole parser
    is for the top-level help (tests/test_architecture.py checks that one is light)."""
    others = tuple(f"webcrawl.crawler.cli.{name}" for name in
                   ("demo", "fixture", "crawl", "revisit", "analyze", "compare", "simulate",
                    "ingest", "export", "report") if name != argv[0])
    script = f"""
        from webcrawl.crawler.cli import _parser_for
        parser = _parser_for({argv!r})
        assert parser.prog == "webcrawl"
    """
    assert _loaded(script, (*others, "asyncio", "sqlite3", "numpy"), tmp_path) == []


def test_reading_a_graph_loads_no_algorithm(tmp_path: Path) -> None:
    """``webcrawl export edges``'s library path: the loader, and the Arrow-backed URLs
    built, taken and sorted as the loader and ``analyze`` do."""
    script = """
        import numpy as np
        from webcrawl.analysis.graph.loader import graph_edges, load_graph
        from webcrawl.storage.urlstrings import UrlStrings, int64_array
        urls = UrlStrings.from_list(["http://b.test/", "http://a.test/é"])
        assert list(urls.sort_indices()) == [1, 0]
        assert list(urls.take(np.array([1, 0]))) == ["http://a.test/é", "http://b.test/"]
        assert UrlStrings.from_joined("x\\x00y", 2) == ["x", "y"]
        assert int64_array(np.arange(3)).to_pylist() == [0, 1, 2]
    """
    assert _loaded(script, NOT_IN_LOAD_GRAPH, tmp_path) == []
