"""A full disk while writing an output file leaves nothing behind (issue 19).

``ENOSPC`` is injected into the write itself (a small tmpfs would need root and a
mount); the command must end with one stderr line naming the problem, a non-zero exit
and neither the target nor its ``.partial`` sibling on disk.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
import webcrawl.crawler.archive
import webcrawl.storage.export
import webcrawl.storage.output
from crawldb import write_crawl
from webcrawl.crawler.cli import main

URLS = [f"http://a.test/{i}" for i in range(4)]
LINKS = {0: [1, 2], 1: [3], 2: [0]}


def _full(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, "No space left on device")


def _check(tmp_path: Path, out: Path, code: int, err: str) -> None:
    assert code == 1
    assert err.count("\n") == 1 and "No space left on device" in err, err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if "partial" in p.name) == []


def test_export_on_a_full_disk_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    db = write_crawl(tmp_path / "c.db", URLS, LINKS)
    real = webcrawl.storage.export.export_pages

    def half_then_full(db: Path, out: Any, fmt: str) -> int:
        out.write("url\tstatus\n" + "http://a.test/0\t200\n" * 100)
        _full()
        return real(db, out, fmt)  # pragma: no cover

    monkeypatch.setattr(webcrawl.storage.export, "export_pages", half_then_full)
    out = tmp_path / "pages.tsv"
    code = main(["export", "pages", "--db", str(db), "-o", str(out)])
    _check(tmp_path, out, code, capsys.readouterr().err)


class _FillingFile:
    """A file on a disk that fills up: half of the first write gets out, then ENOSPC."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def write(self, data: bytes) -> int:
        self.real.write(data[: len(data) // 2])
        _full()
        return 0  # pragma: no cover

    def __enter__(self) -> _FillingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.real.close()


def test_report_on_a_full_disk_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    db = write_crawl(tmp_path / "c.db", URLS, LINKS)

    def filling_open(path: Any, mode: str, **kwargs: Any) -> _FillingFile:
        return _FillingFile(open(path, mode, **kwargs))

    # Every output file is opened in webcrawl.storage.output: its ``open`` fills the disk.
    monkeypatch.setattr(webcrawl.storage.output, "open", filling_open, raising=False)
    out = tmp_path / "report.html"
    code = main(["report", "--db", str(db), "-o", str(out), "--quiet"])
    _check(tmp_path, out, code, capsys.readouterr().err)


# -- WARC output on a full disk ----------------------------------------------------------

class _DiskWithRoom:
    """An unbuffered file on a disk with ``room`` bytes free: a write past it writes what
    fits (a short write, as write(2) does), and the next one fails with ENOSPC."""

    def __init__(self, real: Any, room: int) -> None:
        self.real, self.room = real, room

    def write(self, data: Any) -> int:
        if self.room == 0:
            _full()
        n = int(self.real.write(bytes(data[: self.room])))
        self.room -= n
        return n

    def fileno(self) -> int:
        return int(self.real.fileno())

    def close(self) -> None:
        self.real.close()


@pytest.mark.parametrize("room", [100, 30_000], ids=["no whole record", "some records"])
def test_warc_output_on_a_full_disk_is_one_line_and_keeps_whole_records(
        room: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from warcio.archiveiterator import ArchiveIterator
    from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

    def small_disk(path: Any, mode: str, **kwargs: Any) -> _DiskWithRoom:
        return _DiskWithRoom(open(path, mode, **kwargs), room)

    monkeypatch.setattr(webcrawl.crawler.archive, "open", small_disk, raising=False)
    warc, db = tmp_path / "warc", tmp_path / "c.db"
    web = FixtureWeb.build(FixtureConfig(pages=30, hosts=2, seed=2))
    with serve_in_thread(web) as server:
        code = main(["crawl", server.seed_url, "--db", str(db), "--warc", str(warc),
                     "--quiet", "--min-delay", "0", "--max-delay", "0", "--delay-factor", "0",
                     "--resolve", "*.test=127.0.0.1", "--allow-host", "*.test"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.count("\n") == 1 and "No space left on device" in err and ".warc.gz" in err, err
    files = sorted(warc.iterdir())
    if room == 100:
        assert files == []  # not even the warcinfo record fitted: no file is left
    for path in files:  # whole records only: every one reads to its end
        with open(path, "rb") as f:
            kinds = [r.rec_type for r in ArchiveIterator(f)]
        assert kinds[0] == "warcinfo" and path.stat().st_size <= room
    assert not db.with_name("c.db-writer").exists()


# -- --log-file on a full disk -------------------------------------------------------------

class _FullStream:
    """A text stream on a full disk: every write and flush fails with ENOSPC."""

    def write(self, text: str) -> int:
        _full()
        return 0  # pragma: no cover

    def flush(self) -> None:
        _full()

    def close(self) -> None:
        pass


def _crawl_logging_to(log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                      ) -> tuple[int, str]:
    """Crawl part of a small web, then resume it with ``--log-file log`` (a resume logs
    what it found at INFO, the file's level)."""
    from webcrawl.fixtures import FixtureConfig, FixtureWeb, serve_in_thread

    web = FixtureWeb.build(FixtureConfig(pages=30, hosts=2, seed=2))
    options = ["--db", str(tmp_path / "c.db"), "--quiet", "--min-delay", "0", "--max-delay",
               "0", "--delay-factor", "0", "--resolve", "*.test=127.0.0.1",
               "--allow-host", "*.test"]
    with serve_in_thread(web) as server:
        assert main(["crawl", server.seed_url, *options, "--max-pages", "5"]) == 0
        capsys.readouterr()
        code = main(["crawl", "--resume", *options, "--max-pages", "1000", "--log-file",
                     str(log)])
    return code, capsys.readouterr().err


def _one_error_line(err: str, line: str) -> None:
    """The one error line, last; no traceback per log record (only the resume's note
    on the stored settings it overrides comes before it)."""
    assert "Traceback" not in err and "Logging error" not in err, err
    assert err.splitlines()[-1] == line and err.count("error") == 1, err


def test_a_log_file_on_a_full_disk_is_one_line_and_the_crawl_completes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from webcrawl.crawler.cli import _output

    monkeypatch.setattr(_output._LogFile, "_open", lambda self: _FullStream())
    log = tmp_path / "crawl.log"
    code, err = _crawl_logging_to(log, tmp_path, capsys)
    assert code == 1
    _one_error_line(err, f"webcrawl: error: No space left on device: {log}")
    with sqlite3.connect(tmp_path / "c.db") as conn:  # the crawl itself went to its end
        assert conn.execute("SELECT count(*) FROM urls WHERE outcome IS NULL").fetchone() == (0,)


def test_a_log_file_on_a_full_device_is_one_line(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    full = tmp_path / "full"
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # the "full" device
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD")
    code, err = _crawl_logging_to(full, tmp_path, capsys)
    assert code == 1
    _one_error_line(err, f"webcrawl: error: No space left on device: {full}")
