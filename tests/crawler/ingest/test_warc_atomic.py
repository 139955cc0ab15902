"""`import warc` writes its database whole or not at all: killed (``kill -9`` at several
points) or failed (a full disk), it leaves no database, no temporary file and no lock
file, and running it again imports every record."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from warcdata import N, Warc, fetched_urls, write_synthetic_warc
from webcrawl.crawler.cli import main
from webcrawl.crawler.ingest import import_warc
from webcrawl.storage.errors import StoreError

WEBCRAWL = [sys.executable, "-m", "webcrawl.crawler.cli"]


@pytest.fixture(scope="module")
def warc(tmp_path_factory: pytest.TempPathFactory) -> Warc:
    return write_synthetic_warc(tmp_path_factory.mktemp("warc") / "site.warc.gz", gz=True)


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if "site.db" in p.name)


def _rerun_imports_everything(warc: Warc, db: Path) -> None:
    result = import_warc([warc.path], db)
    assert (result.records, result.bad) == (N, 0)
    assert _left(db.parent) == ["site.db"]  # the lock file goes with the writer
    assert fetched_urls(db) == warc.urls


@pytest.mark.parametrize("point", ["warc_record:1", "warc_record:700", "new_database:1"],
                         ids=["after the first record", "after 700 records",
                              "complete, before the rename"])
def test_a_killed_import_leaves_nothing_and_runs_again(warc: Warc, point: str,
                                                       tmp_path: Path) -> None:
    db = tmp_path / "site.db"
    run = subprocess.run([*WEBCRAWL, "import", "warc", str(warc.path), "--db", str(db),
                          "--quiet"], env={**os.environ, "WEBCRAWL_TEST_KILL": point},
                         capture_output=True, timeout=300)
    # Reading stderr to its end (above) also waited for the killed import's guardian,
    # which keeps that stream and removes the temporary and lock files.
    assert run.returncode == -9, run.stderr.decode()
    assert _left(tmp_path) == []
    _rerun_imports_everything(warc, db)


def test_an_import_killed_inside_a_write_transaction_leaves_nothing(warc: Warc,
                                                                   tmp_path: Path) -> None:
    db = tmp_path / "site.db"
    marker = tmp_path / "paused"
    proc = subprocess.Popen([*WEBCRAWL, "import", "warc", str(warc.path), "--db", str(db),
                             "--quiet"],
                            env={**os.environ, "WEBCRAWL_TEST_PAUSE": f"store_write:1:{marker}"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # waits for the event (the marker), not for a duration
    assert marker.exists(), proc.communicate()
    assert any(p.name.startswith(".site.db.importing") for p in tmp_path.iterdir())
    proc.kill()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == -9, err.decode()
    assert _left(tmp_path) == []
    _rerun_imports_everything(warc, db)


def test_a_full_disk_is_one_line_and_leaves_nothing(warc: Warc, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "site.db"
    monkeypatch.setenv("WEBCRAWL_TEST_MAX_PAGE_COUNT", "40")  # SQLITE_FULL, as on a full disk
    assert main(["import", "warc", str(warc.path), "--db", str(db), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("webcrawl: error: disk full"), err
    assert _left(tmp_path) == []
    monkeypatch.delenv("WEBCRAWL_TEST_MAX_PAGE_COUNT")
    _rerun_imports_everything(warc, db)


def test_an_existing_database_is_refused_and_left_intact(warc: Warc, tmp_path: Path) -> None:
    db = tmp_path / "site.db"
    import_warc([warc.path], db)
    before = db.read_bytes()
    with pytest.raises(StoreError, match="already exists"):
        import_warc([warc.path], db)
    assert db.read_bytes() == before
    assert _left(tmp_path) == ["site.db"]  # the lock file goes with the writer
