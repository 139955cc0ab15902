"""A full disk while writing an output file leaves nothing behind (issue 19).

``ENOSPC`` is injected into the write itself (a small tmpfs would need root and a
mount); the command must end with one stderr line naming the problem, a non-zero exit
and neither the target nor its ``.partial`` sibling on disk.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest
import webcrawl.storage.export
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


def test_report_on_a_full_disk_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    db = write_crawl(tmp_path / "c.db", URLS, LINKS)
    real_write = Path.write_bytes

    def write_bytes(self: Path, data: bytes) -> int:
        if self.name.endswith(".partial"):
            real_write(self, data[: len(data) // 2])  # some bytes got out, then ENOSPC
            _full()
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    out = tmp_path / "report.html"
    code = main(["report", "--db", str(db), "-o", str(out), "--quiet"])
    _check(tmp_path, out, code, capsys.readouterr().err)
