"""Reading edge and vertex files into Arrow or numpy arrays (private: see
:mod:`webcrawl.storage.edgelist` for the formats and the contract).

Plain integer lines go to the compiled byte parser (:mod:`webcrawl.storage._edgeparse`,
with numba) straight into int32 arrays; every other file (gzip, names, ids past int32,
quoted fields) and every file without numba goes to pyarrow's multi-threaded CSV reader,
in parts as the parser hands them over.  Damaged gzip data is an
:class:`~webcrawl.storage.errors.InputFormatError` naming the file; a file of another
shape a :class:`~webcrawl.storage.errors.ConfigError`.
"""

from __future__ import annotations

import functools
import gzip
import re
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np
from webcrawl.storage._edgeparse import parse_int_edges
from webcrawl.storage.errors import ConfigError, InputFormatError

__all__ = ["BLOCK_SIZE", "HEADERS", "existing_file", "file_head", "parse_ids",
           "read_edge_arrays", "read_edge_table", "read_vertices"]

#: Bytes pyarrow hands each parsing thread at once.
BLOCK_SIZE = 16 << 20
_P = ParamSpec("_P")
_T = TypeVar("_T")


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _open_binary(path: Path) -> Any:
    return gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")


def _gzip_checked(read: Callable[Concatenate[Path, _P], _T]) -> Callable[Concatenate[Path, _P], _T]:
    """Make damaged gzip data (cut short, garbage) of ``read(path, ...)``'s file an
    :class:`InputFormatError` naming it: ``gzip`` raises EOFError, zlib.error or
    BadGzipFile, pyarrow an OSError without errno (a real I/O error has one)."""
    @functools.wraps(read)
    def checked(path: Path, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return read(path, *args, **kwargs)
        except (EOFError, zlib.error, OSError) as exc:
            if isinstance(exc, OSError) and (exc.errno is not None or not _is_gzip(path)):
                raise
            cut = isinstance(exc, EOFError) or "runcated" in str(exc)
            raise InputFormatError(f"{path}: {'truncated' if cut else 'damaged'} gzip data "
                                   f"({exc})") from exc
    return checked


#: First lines taken for a header row and skipped: the first two fields of
#: ``webcrawl export edges`` TSV (``src dst nofollow``) and of common edge tables.
HEADERS = frozenset({(b"src", b"dst"), (b"source", b"target"), (b"from", b"to")})


def _is_header(line: bytes) -> bool:
    return tuple(t.lower() for t in re.split(rb"[ \t]+", line)[:2]) in HEADERS


@_gzip_checked
def file_head(path: Path, size: int = 1 << 16) -> tuple[int, bytes, bool]:
    """Leading comment/blank/header line count, the first data line (empty if none),
    and whether a header row was among them (then fields may be quoted CSV-style, as
    ``webcrawl export edges`` quotes a URL holding a tab or a double quote)."""
    with _open_binary(path) as f:
        head = f.read(size)
    skip = 0
    header = False
    for line in head.split(b"\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith(b"#"):
            if header or not _is_header(stripped):
                return skip, stripped, header
            header = True
        skip += 1
    return skip, b"", header


def _arrow_source(path: Path) -> Any:
    import pyarrow as pa

    # Read, not memory-mapped: the parser's blocks are recycled buffers, where a map
    # faults in every page of the file (on a virtual machine the faults cost more than
    # the copy) and counts the whole file in the resident set (777 MB for 50M links).
    stream = pa.OSFile(str(path))
    return pa.CompressedInputStream(stream, "gzip") if _is_gzip(path) else stream


@_gzip_checked
def _read_table(path: Path, columns: int, candidates: Sequence[dict[str, Any]]) -> Any:
    """Read ``path`` with pyarrow; returns a table of its first ``columns`` columns.

    ``candidates`` are column-type maps tried in turn (narrowest first: int32 before
    int64).  Fast path: one delimiter (tab if the first data line has one, else space),
    each candidate on the file as it is.  If every candidate fails, the file is read
    again after normalising runs of blanks and dropping comment lines anywhere (a regex
    over the bytes), which costs a copy of the file in memory but accepts every
    whitespace layout.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    skip, first, header = file_head(path)
    if not first:
        return None
    delimiter = "\t" if b"\t" in first else " "
    names = [f"c{i}" for i in range(max(columns, len(re.split(rb"[ \t]+", first))))]
    read = pacsv.ReadOptions(column_names=names, skip_rows=skip, block_size=BLOCK_SIZE)
    parse = pacsv.ParseOptions(delimiter=delimiter, quote_char='"' if header else False,
                               double_quote=header, ignore_empty_lines=True)
    for types in candidates:
        convert = pacsv.ConvertOptions(include_columns=names[:columns], column_types=types,
                                       strings_can_be_null=False,
                                       quoted_strings_can_be_null=False)
        try:
            return pacsv.read_csv(_arrow_source(path), read_options=read, parse_options=parse,
                                  convert_options=convert)
        except pa.ArrowInvalid:
            continue
    with _open_binary(path) as f:
        data = f.read()
    data = re.sub(rb"[ \t\r\f\v]+", b" ", data)
    data = re.sub(rb"(?m)^ | $", b"", data)
    data = re.sub(rb"(?m)^(#[^\n]*)?\n", b"", data)
    if header:  # the first line left is the header row
        data = data.partition(b"\n")[2]
    width = max((len(line.split(b" ")) for line in data[:1 << 16].split(b"\n") if line),
                default=columns)
    names = [f"c{i}" for i in range(max(columns, width))]
    read = pacsv.ReadOptions(column_names=names, block_size=BLOCK_SIZE)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                               ignore_empty_lines=True)
    error = ""
    for types in candidates:
        convert = pacsv.ConvertOptions(include_columns=names[:columns], column_types=types,
                                       strings_can_be_null=False)
        try:
            return pacsv.read_csv(pa.py_buffer(data), read_options=read, parse_options=parse,
                                  convert_options=convert)
        except pa.ArrowInvalid as exc:
            error = str(exc).splitlines()[0]
    raise ConfigError(f"{path}: cannot parse as {columns}-column lines: {error}")


def _integer_token(token: bytes) -> bool:
    return token.lstrip(b"+-").isdigit()


def read_edge_table(path: Path) -> Any:
    """The first two columns of an edge file as an Arrow table (``c0``, ``c1``, in the
    parser's chunks): int32 if every token is an integer that fits (int64 if one does
    not), else strings."""
    import pyarrow as pa

    _, first, _ = file_head(path)
    if not first:
        return pa.table({"c0": pa.array([], pa.int32()), "c1": pa.array([], pa.int32())})
    tokens = re.split(rb"[ \t]+", first)
    if len(tokens) >= 2 and all(_integer_token(t) for t in tokens[:2]):
        try:
            return _read_table(path, 2, [{"c0": t, "c1": t} for t in (pa.int32(), pa.int64())])
        except ConfigError:
            pass
    return _read_table(path, 2, [{"c0": pa.string(), "c1": pa.string()}])


def parse_ids(path: Path) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    """The two id columns (int32 parts) by the compiled byte parser, when the file is
    plain text of integer lines it accepts (else None: read it with pyarrow)."""
    if _is_gzip(path):
        return None
    skip, first, header = file_head(path)
    tokens = re.split(rb"[ \t]+", first)
    if len(tokens) < 2 or not all(_integer_token(t) for t in tokens[:2]):
        return None
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    start = 0
    for _ in range(skip):  # the leading comment, blank and header lines
        start = head.index(b"\n", start) + 1
    return parse_int_edges(path, start, len(tokens), header)


def read_edge_arrays(path: str | Path) -> tuple[Any, Any]:
    """The two columns of an edge file as Arrow arrays: int32 if every token is an
    integer that fits (int64 if one does not), else strings."""
    table = read_edge_table(existing_file(path))
    # One column at a time, the table's copy of it dropped at once: the peak is one
    # column's chunks plus the two contiguous arrays (12 bytes a link for int32).
    a = table["c0"].combine_chunks()
    table = table.drop_columns(["c0"])
    b = table["c1"].combine_chunks()
    return a, b


def existing_file(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no such file: {path}")
    return path


def read_vertices(path: str | Path) -> tuple[np.ndarray, list[str]]:
    """Vertex ids (int64) and names from ``id name`` lines, or names by line number."""
    import pyarrow as pa

    path = existing_file(path)
    _, first, _ = file_head(path)
    if not first:
        return np.zeros(0, np.int64), []
    if len(re.split(rb"[ \t]+", first)) == 1:
        table = _read_table(path, 1, [{"c0": pa.string()}])
        names = table["c0"].to_pylist()
        return np.arange(len(names), dtype=np.int64), names
    table = _read_table(path, 2, [{"c0": pa.int64(), "c1": pa.string()}])
    return table["c0"].to_numpy(), table["c1"].to_pylist()
