"""Writing an output file without destroying what its path names.

Every file a command writes (exports, the report, plots, JSON, the demo's files, the
pending records of a stopped crawl) goes through :func:`open_output` or
:func:`output_path`, which pick one of two ways by what the path names *now*:

* **replaced whole** (atomic): a regular file, or nothing yet (a dangling symbolic
  link names nothing yet: its target is created).  The content is written beside the
  target (``.NAME.partial``, same folder), synced, and renamed over it only when
  complete: a failure (a full disk, Ctrl-C, a crash) leaves the old file or nothing,
  never half a file.  Missing folders are created.  A replaced file keeps its
  permission bits (other hard links to it keep the old content).  A symbolic link to
  a regular file stays a link: its target is replaced.
* **written through**: a character device (``/dev/null``, a terminal), a FIFO, and a
  link through ``/proc`` or ``/dev/fd`` (``/dev/stdout``): the path is opened and
  written as it is, as ``cat > PATH`` would; renaming a file over it would destroy the
  device node, the FIFO or the link (for a device, for the whole machine).

Refused with :class:`~webcrawl.storage.errors.ConfigError` (one line, before anything is
written): a directory, a block device or a socket (writing a report over a disk or into
a socket is never what was meant), and a path whose folder cannot be written.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

from webcrawl.storage.errors import ConfigError

__all__ = ["Way", "check_output_path", "open_output", "output_path", "output_way",
           "sync_file", "write_output"]

#: Folders whose symbolic links are the kernel's views of open files, not paths to
#: replace: ``/dev/stdout`` -> ``/proc/self/fd/1`` -> a pipe or a terminal.
_MAGIC_LINK_FOLDERS = ("/proc/", "/dev/fd/")


class Way(Enum):
    """How a path is written (see the module docstring)."""

    REPLACE = "replace"
    THROUGH = "through"


def output_way(path: str | Path) -> tuple[Way, Path]:
    """How ``path`` is written and the path to replace or write through (the target of a
    symbolic link to a regular file), or :class:`ConfigError` if it cannot be."""
    path = Path(path)
    target = _final_target(path)
    if target is None:  # a link through /proc or /dev/fd: the kernel's view of a file
        return Way.THROUGH, path
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return Way.REPLACE, _check_folder(path, target)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISREG(mode):
        return Way.REPLACE, _check_folder(path, target)
    if stat.S_ISDIR(mode):
        raise ConfigError(f"cannot write {path}: it is a directory")
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return Way.THROUGH, path
    kind = "a block device" if stat.S_ISBLK(mode) else "a socket"
    raise ConfigError(f"refusing to write {path}: it is {kind}, not a file")


def check_output_path(path: str | Path, *, folder: bool = False) -> Path:
    """Refuse an output path that cannot be written, before any work (one line).

    ``folder``: the path is a directory to create or fill (else a file to write, as
    :func:`output_way` decides).  The nearest existing ancestor must be a writable
    directory.
    """
    path = Path(path)
    if not folder:
        output_way(path)
        return path
    if path.exists() and not path.is_dir():
        raise ConfigError(f"cannot write into {path}: it is not a directory")
    ancestor = path.absolute() if path.is_dir() else path.absolute().parent
    _writable_ancestor(path, ancestor)
    return path


@contextlib.contextmanager
def output_path(path: str | Path, *, durable: bool = True) -> Iterator[Path]:
    """The path to write ``path``'s content to (for writers that take a path: Parquet,
    matplotlib, numpy); on a normal exit from the block it becomes ``path``'s content
    as the module docstring says, on an exception nothing changes (a written-through
    device or FIFO has seen what was written).

    ``durable=False`` skips the sync before the rename (a tree of many small files, as
    the fixture web's export writes: an OS crash may then leave a file empty, never a
    process's failure)."""
    way, target = output_way(path)
    if way is Way.THROUGH:
        with _named(path):
            yield target
        return
    partial = target.with_name(f".{target.name}.partial")
    try:
        with _named(path):
            partial.parent.mkdir(parents=True, exist_ok=True)
            yield partial
            if durable:
                sync_file(partial)
            _keep_mode(target, partial)
            os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


@overload
def open_output(path: str | Path, mode: Literal["w"] = "w", *, encoding: str | None = "utf-8",
                newline: str | None = None,
                durable: bool = True) -> contextlib.AbstractContextManager[TextIO]: ...


@overload
def open_output(path: str | Path, mode: Literal["wb"], *, encoding: str | None = "utf-8",
                newline: str | None = None,
                durable: bool = True) -> contextlib.AbstractContextManager[BinaryIO]: ...


def open_output(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8",
                newline: str | None = None,
                durable: bool = True) -> contextlib.AbstractContextManager[IO[Any]]:
    """``open(path, mode)`` for writing, as :func:`output_path` says (``mode`` ``"w"`` or
    ``"wb"``)."""
    return _open_output(path, mode, encoding=encoding, newline=newline, durable=durable)


@contextlib.contextmanager
def _open_output(path: str | Path, mode: str, *, encoding: str | None,
                 newline: str | None, durable: bool) -> Iterator[IO[Any]]:
    if mode not in ("w", "wb"):
        raise ValueError(f"open_output writes a file whole: mode 'w' or 'wb', not {mode!r}")
    binary = mode == "wb"
    # The file closes before output_path renames it (contexts end in reverse order).
    with output_path(path, durable=durable) as target, open(
            target, mode, encoding=None if binary else encoding,
            newline=None if binary else newline) as out:
        yield out


def write_output(path: str | Path, data: bytes | str, *, durable: bool = True) -> Path:
    """Write ``data`` to ``path`` (text as UTF-8) as :func:`output_path` says; return
    ``path``."""
    with open_output(path, "wb", durable=durable) as out:
        out.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


@contextlib.contextmanager
def _named(path: str | Path) -> Iterator[None]:
    """An OSError without a file name (a write on a full disk) gets ``path``'s, so that
    its one-line message says which file (its class kept: a broken pipe stays one)."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise type(exc)(exc.errno, exc.strerror, str(path)) from exc


def _final_target(path: Path) -> Path | None:
    """The path a chain of symbolic links at ``path`` ends at (``path`` itself if it is
    no link); None if the chain passes through ``/proc`` or ``/dev/fd``."""
    seen = 0
    current = path
    while current.is_symlink():
        seen += 1
        if seen > 40:  # the kernel's own limit on a chain (ELOOP)
            raise ConfigError(f"cannot write {path}: too many levels of symbolic links")
        link = Path(os.readlink(current))
        current = link if link.is_absolute() else current.parent / link
        folder = str(Path(os.path.realpath(current.parent))) + "/"
        if folder.startswith(_MAGIC_LINK_FOLDERS) or str(current).startswith(
                _MAGIC_LINK_FOLDERS):
            return None
    return current


def _check_folder(path: Path, target: Path) -> Path:
    """``target`` if its folder (where the partial file goes) can be written."""
    _writable_ancestor(path, target.absolute().parent)
    return target


def _writable_ancestor(path: Path, ancestor: Path) -> None:
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ConfigError(f"cannot write {path}: {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK):
        raise ConfigError(f"cannot write {path}: {ancestor} is not writable")


def sync_file(path: Path) -> None:
    """Flush ``path`` to disk (before its rename: after an OS crash the target holds the
    old content or the new, never an empty file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _keep_mode(target: Path, partial: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.chmod(partial, stat.S_IMODE(os.stat(target).st_mode))
