"""One read-only connection's queries, as numpy columns, with its errors mapped (internal).

The reader's methods and the link arrays (:mod:`webcrawl.storage._linkread`) query
through one :class:`Query`: every ``sqlite3`` error becomes the matching
:class:`~webcrawl.storage.errors.StoreError` (:func:`webcrawl.storage._sqlite.map_error`),
and a value that does not parse as what its column must hold (text in an integer column,
a column missing values) becomes a :class:`~webcrawl.storage.errors.StoreCorruptError`
naming the file, never a numpy ``ValueError``: SQLite stores any value in any column, so
a damaged or hand-edited file can hold anything.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from webcrawl.storage._sqlite import map_error
from webcrawl.storage.errors import StoreCorruptError
from webcrawl.storage.urlstrings import UrlStrings

__all__ = ["Query", "cursor_rows", "id_order"]


class Query:
    """Queries on the read-only connection ``conn`` to the database ``path``."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    def damaged(self, what: str) -> StoreCorruptError:
        """The error for a file whose content is not what its schema says."""
        return StoreCorruptError(f"{self.path} is damaged: {what}")

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise map_error(exc, self.path, "reading") from exc

    def all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise map_error(exc, self.path, "reading") from exc

    def has_table(self, name: str) -> bool:
        # A version 1 file (webcrawl.storage._sqlite.MIGRATABLE) lacks the tables version 2 added.
        return bool(self.all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                             (name,)))

    def encoding(self) -> str:
        return str(self.all("PRAGMA encoding")[0][0])

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Read one consistent state: every query inside sees the same commits."""
        # Re-entrant: only the outermost snapshot opens and ends the read transaction.
        outer = self.conn.in_transaction is False
        if outer:
            self.run("BEGIN")
        try:
            yield
        finally:
            if outer:
                with contextlib.suppress(sqlite3.Error):
                    self.conn.execute("COMMIT")

    @contextlib.contextmanager
    def raw_text(self) -> Iterator[None]:
        """Within the block, text and BLOB results come as ``bytes`` (no decoding)."""
        self.conn.text_factory = bytes
        try:
            yield
        finally:
            self.conn.text_factory = str

    def columns(self, exprs: list[str], source: str,
                text: str | None = None) -> tuple[list[np.ndarray], list[str]]:
        """Integer columns (and one text column) of ONE scan, each as one ``group_concat``.

        Parsing one comma-separated string per column with numpy is 2-3x faster than
        building a Python tuple per row.  Every expression must be non-NULL
        (``group_concat`` skips NULLs); all columns come from the same scan, so they
        stay aligned (``source`` says ``NOT INDEXED`` to scan in rowid order; callers
        still check the order).  The text column is joined with NUL; if a value
        holds a NUL, it is read again row by row.
        """
        parts = [f"group_concat({e})" for e in exprs]
        if text is not None:
            parts.append(f"group_concat({text}, char(0))")
        row = self.all(f"SELECT {', '.join(parts)} FROM {source}")[0]
        ints = self._integers(exprs, source, row)
        if text is None:
            return ints, []
        joined = row[-1]
        values = [] if joined is None else str(joined).split("\x00")
        if len(values) != (ints[0].size if ints else len(values)):
            values = [v for (v,) in self.run(f"SELECT {text} FROM {source}")]
        return ints, values

    def url_strings(self, exprs: list[str],
                    source: str) -> tuple[list[np.ndarray], UrlStrings]:
        """:meth:`columns` with the ``url`` column as :class:`UrlStrings`."""
        parts = [f"group_concat({e})" for e in exprs] + ["group_concat(url, char(0))"]
        row = self.all(f"SELECT {', '.join(parts)} FROM {source}")[0]
        ints = self._integers(exprs, source, row)
        joined = row[-1]
        del row
        urls = UrlStrings.from_joined("" if joined is None else str(joined),
                                      int(ints[0].size))
        if urls is None:  # a URL holds a NUL (never from the crawler): row by row
            urls = UrlStrings.from_list([str(v) for (v,) in
                                         self.run(f"SELECT url FROM {source}")])
        return ints, urls

    def _integers(self, exprs: list[str], source: str, row: Any) -> list[np.ndarray]:
        """The integer columns of a :meth:`columns` row, each checked to parse and all of
        one length (a NULL where the schema forbids one, text in an integer column)."""
        ints = []
        for expr, joined in zip(exprs, row, strict=False):
            try:
                ints.append(_parse_numbers(joined, np.int64))
            except ValueError:
                raise self.damaged(f"{_table(source)}.{expr} holds a value that is not an "
                                   "integer") from None
        if len({a.size for a in ints}) > 1:
            raise self.damaged(f"{_table(source)} holds a NULL or a value of the wrong type "
                               "where its schema forbids one")
        return ints


def _table(source: str) -> str:
    return source.split()[0]


def _parse_numbers(joined: str | None, dtype: type[np.generic]) -> np.ndarray:
    """Parse a comma-separated ``group_concat`` result (None: no rows)."""
    if not joined:
        return np.zeros(0, dtype=dtype)
    return np.fromstring(joined, dtype=dtype, sep=",")


def id_order(ids: np.ndarray) -> np.ndarray | None:
    """None if ``ids`` ascend strictly (scan order = id order), else the sorting order."""
    if ids.size < 2 or bool(np.all(ids[1:] > ids[:-1])):
        return None
    return np.argsort(ids, kind="stable")


def cursor_rows(cursor: sqlite3.Cursor) -> Iterator[Any]:
    """The rows of ``cursor`` without its ``close``: ``yield from cursor`` would close it
    when the generator is dropped, which fails once the reader is closed (a reader of
    ``export ... | head`` gone: "Exception ignored ... closed database")."""
    return iter(cursor.fetchone, None)
