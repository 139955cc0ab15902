"""The ``id_ranges`` table of ``schema.sql`` (private): the names of an imported graph
of integer ids, a row per run of consecutive ids instead of a ``urls`` row per node.

Contract: nodes are the file's distinct ids in ascending order, numbered from 0;
:meth:`IdRanges.from_ids` cuts them into runs (what the importer writes),
:meth:`IdRanges.names` gives every node's id back and :meth:`IdRanges.nodes` the node of
given ids (what the reader needs), each a few numpy operations over the runs, never a
Python loop over nodes.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import numpy as np

__all__ = ["IdRanges"]


@dataclass(frozen=True, slots=True)
class IdRanges:
    """Runs of consecutive ids: nodes ``first[r] .. first[r] + count[r] - 1`` are the ids
    ``id[r] ..``, runs in node order (int64 arrays)."""

    first: np.ndarray
    id: np.ndarray
    count: np.ndarray

    @classmethod
    def from_ids(cls, ids: np.ndarray) -> IdRanges:
        """The runs of ``ids`` (ascending, distinct): node ``i`` is ``ids[i]``."""
        ids = np.asarray(ids, dtype=np.int64)
        first = np.flatnonzero(np.diff(ids) != 1) + 1 if ids.size else np.zeros(0, np.int64)
        first = np.concatenate([[0], first]).astype(np.int64) if ids.size else first
        count = np.diff(np.append(first, ids.size))
        return cls(first, ids[first], count.astype(np.int64))

    @classmethod
    def read(cls, conn: sqlite3.Connection) -> IdRanges | None:
        """The file's runs; None if it has none (its nodes are ``urls`` rows)."""
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                            " AND name = 'id_ranges'").fetchall():
            return None
        rows = conn.execute("SELECT first, id, count FROM id_ranges ORDER BY first").fetchall()
        if not rows:
            return None
        table = np.array(rows, dtype=np.int64).reshape(-1, 3)
        return cls(table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy())

    def write(self, conn: sqlite3.Connection) -> None:
        conn.executemany("INSERT INTO id_ranges (first, id, count) VALUES (?, ?, ?)",
                         zip(self.first.tolist(), self.id.tolist(), self.count.tolist(),
                             strict=True))

    @property
    def n(self) -> int:
        """The number of nodes."""
        return int(self.first[-1] + self.count[-1]) if self.first.size else 0

    def names(self) -> np.ndarray:
        """Every node's id in the file (int64, node order)."""
        names: np.ndarray = np.arange(self.n, dtype=np.int64) + np.repeat(self.id - self.first,
                                                                           self.count)
        return names

    def nodes(self, ids: np.ndarray) -> np.ndarray:
        """The node of each of ``ids`` (int64; -1 where an id is no node)."""
        ids = np.asarray(ids, dtype=np.int64)
        if not self.first.size:
            return np.full(ids.size, -1, np.int64)
        run = np.maximum(np.searchsorted(self.id, ids, side="right") - 1, 0)
        offset = ids - self.id[run]
        found = (offset >= 0) & (offset < self.count[run])
        return np.where(found, self.first[run] + offset, -1)

    def names_of(self, nodes: np.ndarray) -> np.ndarray:
        """The id of each of ``nodes`` (int64; each in ``0 .. n - 1``)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        run = np.searchsorted(self.first, nodes, side="right") - 1
        names: np.ndarray = self.id[run] + nodes - self.first[run]
        return names
