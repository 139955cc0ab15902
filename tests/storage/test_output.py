"""Output files never destroy what their path names (storage/output.py).

A regular file (or nothing) is replaced whole; a character device, a FIFO or a link
through ``/proc`` (what ``/dev/stdout`` is) is written through and stays what it was; a
directory, a block device or a socket is refused before anything is written.  Every
special file is made in a temporary folder (``mknod``, ``mkfifo``, ``socket.bind``): no
test touches ``/dev``.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.output import Way, open_output, output_path, output_way, write_output


def _kind(path: Path) -> str:
    mode = os.lstat(path).st_mode
    for name, test in (("link", stat.S_ISLNK), ("file", stat.S_ISREG), ("fifo", stat.S_ISFIFO),
                       ("char", stat.S_ISCHR), ("block", stat.S_ISBLK), ("dir", stat.S_ISDIR),
                       ("socket", stat.S_ISSOCK)):
        if test(mode):
            return name
    raise AssertionError(oct(mode))  # pragma: no cover


def _device(path: Path, kind: int, major: int, minor: int) -> Path:
    """A device node in a temporary folder (needs CAP_MKNOD: root in a container)."""
    try:
        os.mknod(path, kind | 0o666, os.makedev(major, minor))
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD")
    return path


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial"))


def test_a_regular_file_is_replaced_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.tsv"
    target.write_text("old\n")
    target.chmod(0o640)
    assert output_way(target) == (Way.REPLACE, target)
    with open_output(target) as out:
        out.write("new\n")
        assert target.read_text() == "old\n"  # nothing visible until the block ends
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _leftovers(tmp_path) == []


def test_a_failure_leaves_the_old_file_and_no_partial_one(tmp_path: Path) -> None:
    target = tmp_path / "out.tsv"
    target.write_text("old\n")
    with pytest.raises(OSError, match="No space") as info, open_output(target) as out:
        out.write("half")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert info.value.filename == str(target)  # the one-line message names the file
    assert target.read_text() == "old\n" and _leftovers(tmp_path) == []


def test_a_missing_file_is_created_with_its_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "report.html"
    assert write_output(target, "<p>é</p>") == target
    assert target.read_text(encoding="utf-8") == "<p>é</p>"


@pytest.mark.parametrize("relative", [True, False], ids=["relative", "absolute"])
def test_a_link_to_a_regular_file_stays_a_link_to_the_new_content(tmp_path: Path,
                                                                   relative: bool) -> None:
    (tmp_path / "runs").mkdir()
    real = tmp_path / "runs" / "2026.tsv"
    real.write_text("old\n")
    link = tmp_path / "latest.tsv"
    link.symlink_to(Path("runs/2026.tsv") if relative else real)
    chain = tmp_path / "chain.tsv"
    chain.symlink_to(link)
    write_output(chain, "new\n")
    assert _kind(chain) == "link" and _kind(link) == "link" and _kind(real) == "file"
    assert real.read_text() == "new\n"
    assert _leftovers(tmp_path) == [] and _leftovers(real.parent) == []


def test_a_dangling_link_gets_its_target_created(tmp_path: Path) -> None:
    link = tmp_path / "out.tsv"
    link.symlink_to(tmp_path / "elsewhere" / "made.tsv")
    write_output(link, "x")
    assert _kind(link) == "link" and (tmp_path / "elsewhere" / "made.tsv").read_text() == "x"


def _read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(path, "rb") as f:
            into.append(f.read())
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = _read_fifo(fifo, got)
    assert output_way(fifo) == (Way.THROUGH, fifo)
    write_output(fifo, b"rows\n" * 1000)
    reader.join(timeout=60)
    assert got == [b"rows\n" * 1000] and _kind(fifo) == "fifo"
    assert _leftovers(tmp_path) == []


def test_a_character_device_is_written_through_and_stays_one(tmp_path: Path) -> None:
    null = _device(tmp_path / "null", stat.S_IFCHR, 1, 3)  # the null device's numbers
    write_output(null, b"x" * 100_000)
    assert _kind(null) == "char" and _leftovers(tmp_path) == []


def test_a_full_device_is_an_error_naming_it_and_stays_a_device(tmp_path: Path) -> None:
    full = _device(tmp_path / "full", stat.S_IFCHR, 1, 7)  # the "full" device's numbers
    with pytest.raises(OSError) as info, open_output(full, "wb") as out:
        out.write(b"x" * 100_000)
        out.flush()
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(full)
    assert _kind(full) == "char"


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        os.close(fd)


def test_a_link_through_proc_is_written_through(tmp_path: Path, pipe: tuple[int, int]) -> None:
    """What ``/dev/stdout`` is: a link to ``/proc/self/fd/1``, itself the kernel's view of
    an open pipe; renaming a file over it would replace the link with a file."""
    read, write = pipe
    link = tmp_path / "stdout"
    link.symlink_to(f"/proc/self/fd/{write}")
    assert output_way(link) == (Way.THROUGH, link)
    write_output(link, b"through\n")
    assert os.read(read, 100) == b"through\n"
    assert _kind(link) == "link" and os.readlink(link) == f"/proc/self/fd/{write}"


def test_directories_block_devices_and_sockets_are_refused(tmp_path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "sock"))
        refused = {"dir": tmp_path, "socket": tmp_path / "sock"}
        # A block device no disk answers to: it is refused before it is opened.
        refused["block"] = _device(tmp_path / "disk", stat.S_IFBLK, 7, 255)
        for kind, path in refused.items():
            with pytest.raises(ConfigError, match=r"directory|block device|socket"):
                output_way(path)
            with pytest.raises(ConfigError), output_path(path):
                pass  # pragma: no cover
            assert _kind(path) == kind
    finally:
        sock.close()


def test_a_folder_that_cannot_be_written_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match=r"(?i)not a directory"):
        output_way(blocker / "out.tsv")
