"""A finished crawl in a read-only folder is analysed (issue 19).

The folder is made read-only for real: a private mount namespace (``unshare -m``)
bind-mounts it read-only, so even root cannot create the ``-shm`` file a WAL reader
normally needs.  The reader then opens the file ``immutable=1``; the answers must equal
those from the writable folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from crawldb import write_crawl
from webcrawl.storage.reader import CrawlReader

URLS = [f"http://a.test/{i}" for i in range(6)]
LINKS = {0: [1, 2, 3], 1: [0, 2], 2: [4], 3: [5, 0], 4: [0]}


def _can_mount_read_only(tmp: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c",
                            f"mount --bind -o ro {tmp} {tmp} && ! touch {tmp}/x"],
                           capture_output=True)
    return probe.returncode == 0


def _run(args: list[str], read_only: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "webcrawl.crawler.cli", *args]
    if read_only is not None:
        quoted = " ".join(f"'{a}'" for a in cmd)
        cmd = ["unshare", "-m", "sh", "-c",
               f"mount --bind -o ro '{read_only}' '{read_only}' && exec {quoted}"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})


@pytest.mark.parametrize("args", [["export", "edges"], ["analyze", "degrees", "--json"],
                                  ["analyze", "pagerank", "--top", "3"]],
                         ids=["export", "degrees", "pagerank"])
def test_read_only_folder_is_analysed(tmp_path: Path, args: list[str]) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    if not _can_mount_read_only(folder):
        pytest.skip("needs unshare -m and mount (a private read-only bind mount)")
    db = write_crawl(folder / "c.db", URLS, LINKS)
    for leftover in folder.glob("c.db-*"):  # a finished crawl: no -wal / -shm
        if leftover.name.endswith(("-wal", "-shm")):
            leftover.unlink()
    writable = _run([*args, "--db", str(db)])
    assert writable.returncode == 0, writable.stderr
    for leftover in folder.glob("c.db-shm"):
        leftover.unlink()
    ro = _run([*args, "--db", str(db)], read_only=folder)
    assert ro.returncode == 0, ro.stderr
    assert ro.stdout == writable.stdout and ro.stdout


def test_immutable_fallback_refuses_a_leftover_wal(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    if not _can_mount_read_only(folder):
        pytest.skip("needs unshare -m and mount (a private read-only bind mount)")
    db = write_crawl(folder / "c.db", URLS, LINKS)
    (folder / "c.db-wal").write_bytes(b"\0" * 64)  # a killed writer's log
    for leftover in folder.glob("c.db-shm"):
        leftover.unlink()
    ro = _run(["export", "edges", "--db", str(db)], read_only=folder)
    assert ro.returncode == 1
    assert ro.stderr.count("\n") == 1 and "uncheckpointed" in ro.stderr, ro.stderr


def test_reader_reports_directory_and_device(tmp_path: Path) -> None:
    from webcrawl.storage.errors import StoreError

    with pytest.raises(StoreError, match="is a directory"):
        CrawlReader(tmp_path)
    with pytest.raises(StoreError, match="device or special file"):
        CrawlReader("/dev/null")
