"""The source tree of another git revision, for benchmarks that compare before and after.

``extract(ref, into)`` writes ``git archive ref`` of this repository under ``into/tree``
and returns that folder; run the old code with ``PYTHONPATH`` set to it.
"""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def extract(ref: str, into: Path) -> Path:
    """The tree of git revision ``ref`` in ``into`` (for the 'before' code)."""
    archive = into / "tree.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref], stdout=out, check=True)
    tree = into / "tree"
    tree.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    # The folders are installed as webcrawl.<folder>: a webcrawl/ of links to them puts
    # that revision first on PYTHONPATH=tree (else the editable install's code runs).
    space = tree / "webcrawl"
    space.mkdir(exist_ok=True)
    for folder in ("crawler", "analysis", "storage", "fixtures"):
        if (tree / folder).is_dir() and not (space / folder).exists():
            (space / folder).symlink_to(Path("..") / folder)
    return tree
