"""Every command that writes a file leaves a device, a FIFO or a link what it was.

``export -o``, ``export --nodes``, the Parquet export, ``report -o``, and the files of the
output folders (``analyze quality --out``, ``compare --out``, ``fixture truth --out``)
go through :mod:`webcrawl.storage.output`: a regular file is replaced whole, a
character device or a FIFO is written through, a link to a file keeps pointing at it.
The special files are made in a temporary folder (``mknod``, ``mkfifo``): no test
touches ``/dev``.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from crawldb import write_crawl
from webcrawl.crawler.cli import main

URLS = [f"http://a.test/{i}" for i in range(6)]
LINKS = {0: [1, 2], 1: [3, 0], 2: [0, 4], 3: [5], 4: [0]}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_crawl(tmp_path_factory.mktemp("db") / "c.db", URLS, LINKS, strategy="bfs")


def _null(path: Path) -> Path:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the null device's numbers
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD")
    return path


def _is(path: Path, test: object) -> bool:
    return bool(test(os.lstat(path).st_mode))  # type: ignore[operator]


def _quiet(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "Traceback" not in err


FILE_COMMANDS = {
    "export pages": lambda db, out: ["export", "pages", "--db", str(db), "-o", str(out)],
    "export edges --nodes": lambda db, out: [
        "export", "edges", "--db", str(db), "--ids", "--nodes", str(out),
        "-o", str(out.with_name("edges.tsv"))],
    "export parquet": lambda db, out: ["export", "edges", "--db", str(db), "--format",
                                       "parquet", "-o", str(out)],
    "report": lambda db, out: ["report", "--db", str(db), "-o", str(out), "--quiet"],
}


@pytest.mark.parametrize("command", FILE_COMMANDS)
def test_a_device_output_is_written_through_and_stays_a_device(
        command: str, db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if command == "export parquet":
        pytest.importorskip("pyarrow")
    null = _null(tmp_path / "null")
    _quiet(FILE_COMMANDS[command](db, null), capsys)
    assert _is(null, stat.S_ISCHR)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


@pytest.mark.parametrize("command", ["export pages", "report"])
def test_a_fifo_output_is_written_through(command: str, db: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    _quiet(FILE_COMMANDS[command](db, fifo), capsys)
    reader.join(timeout=60)
    assert _is(fifo, stat.S_ISFIFO)
    assert got and (got[0].startswith(b"url\t") if command == "export pages"
                    else b"</html>" in got[0])


# The report is left out: its writing is the same call, and it costs seconds.
@pytest.mark.parametrize("command", [c for c in FILE_COMMANDS if c != "report"])
def test_a_link_to_a_file_stays_a_link_to_the_new_content(
        command: str, db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if command == "export parquet":
        pytest.importorskip("pyarrow")
    (tmp_path / "keep").mkdir()
    real = tmp_path / "keep" / "target"
    real.write_bytes(b"old")
    link = tmp_path / "out"
    link.symlink_to(real)
    _quiet(FILE_COMMANDS[command](db, link), capsys)
    assert _is(link, stat.S_ISLNK) and os.readlink(link) == str(real)
    assert real.read_bytes() != b"old" and real.stat().st_size > 0


def test_export_through_a_proc_link_like_dev_stdout(db: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    read, write = os.pipe()
    try:
        link = tmp_path / "stdout"
        link.symlink_to(f"/proc/self/fd/{write}")
        _quiet(["export", "edges", "--db", str(db), "--format", "edgelist", "--graph", "stored",
                "-o", str(link)],
               capsys)
        os.close(write)
        write = -1
        data = b""
        while chunk := os.read(read, 65536):
            data += chunk
        assert data.count(b"\n") == sum(map(len, LINKS.values())) and _is(link, stat.S_ISLNK)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


FOLDER_COMMANDS = {
    "analyze quality": (lambda db, out: ["analyze", "quality", "--db", str(db), "--out",
                                         str(out), "--json"],
                        "quality.json", "pagerank_capture.png"),
    "compare": (lambda db, out: ["compare", "--db", str(db), "--strategies", "bfs,dfs",
                                 "--virtual", "--out", str(out), "--json"],
                "comparison.json", "top_n_fetched.png"),
    "fixture truth": (lambda db, out: ["fixture", "truth", "--pages", "40", "--hosts", "2",
                                       "--out", str(out)], "pages.tsv", "edges.tsv"),
}


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_files_of_an_output_folder_keep_their_links_and_devices(
        command: str, db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, linked, device = FOLDER_COMMANDS[command]
    folder = tmp_path / "out"
    folder.mkdir()
    real = tmp_path / "real"
    real.write_bytes(b"old")
    (folder / linked).symlink_to(real)
    _null(folder / device)
    _quiet(argv(db, folder), capsys)
    assert _is(folder / linked, stat.S_ISLNK) and real.read_bytes() != b"old"
    assert _is(folder / device, stat.S_ISCHR)
    assert not [p for p in folder.iterdir() if p.name.endswith(".partial")]
