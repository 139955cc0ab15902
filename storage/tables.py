"""The typed columns a crawl database is read as (what :class:`~webcrawl.storage.reader.CrawlReader`
returns): :class:`UrlTable`, :class:`LinkArrays`, :class:`FetchTable`, and the int8 codes of
outcomes and fetch kinds.

Conventions: ids are int64; SQL ``NULL`` becomes ``-1`` in integer columns and ``nan`` in
float columns; outcomes are int8 codes into :data:`OUTCOMES` (``-1``: in the frontier, no
outcome yet); link destinations are int32 (:data:`LINK_DTYPE`, the layout of the
``links`` BLOBs in ``schema.sql``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from webcrawl.storage.arrays import FloatArray, Int8Array, IntArray, ObjectArray
from webcrawl.storage.records import FetchKind, Outcome
from webcrawl.storage.urlstrings import UrlStrings

__all__ = ["FETCH_KINDS", "LINK_DTYPE", "OUTCOMES", "PAGE_COLUMNS", "FetchTable", "LinkArrays",
           "UrlTable", "code_sql", "outcome_code"]

#: Outcome of each int8 outcome code (code ``i`` is ``OUTCOMES[i]``; ``-1``: none).
OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)
#: Fetch kind of each int8 kind code.
FETCH_KINDS: tuple[FetchKind, ...] = tuple(FetchKind)

#: The int32 array layout of the ``links`` and ``link_blocks`` BLOBs (``schema.sql``).
LINK_DTYPE = np.dtype("<i4")


def code_sql(column: str, values: tuple[str, ...]) -> str:
    """SQL mapping ``column``'s text values onto their index in ``values`` (else -1)."""
    # The values are our enum constants, never user data.
    whens = " ".join(f"WHEN '{v}' THEN {i}" for i, v in enumerate(values))
    return f"CASE {column} {whens} ELSE -1 END"


def outcome_code(outcome: Outcome | str) -> int:
    """The int8 code of an outcome in the arrays of this module."""
    return OUTCOMES.index(Outcome(outcome))


@dataclass(frozen=True, slots=True, eq=False)
class UrlTable:
    """The ``urls`` table as columns, in id order."""

    ids: np.ndarray             # int64
    urls: UrlStrings            # empty when read with ``text=False``
    host_ids: np.ndarray        # int64
    depth: np.ndarray           # int32
    discovered_seq: np.ndarray  # int64; -1 for seeds
    outcome: np.ndarray         # int8 code into OUTCOMES; -1 in the frontier
    seq: np.ndarray             # int64 seq of the final fetch; -1 if never taken

    def __len__(self) -> int:
        return int(self.ids.size)

    def has_outcome(self, outcome: Outcome | str) -> np.ndarray:
        """Boolean mask of the URLs whose outcome is ``outcome``."""
        return np.asarray(self.outcome == outcome_code(outcome))

    @property
    def in_frontier(self) -> np.ndarray:
        """Boolean mask of the URLs without an outcome yet."""
        return np.asarray(self.outcome < 0)


@dataclass(frozen=True, slots=True, eq=False)
class LinkArrays:
    """Per-page id arrays in CSR form: page ``src[k]`` has ``dst[indptr[k]:indptr[k+1]]``."""

    src: np.ndarray     # int64 page ids, ascending
    indptr: np.ndarray  # int64, len(src) + 1
    dst: np.ndarray     # int32 destination ids

    @property
    def edge_src(self) -> np.ndarray:
        """The source id of every entry of ``dst`` (int64)."""
        return np.repeat(self.src, np.diff(self.indptr))


@dataclass(frozen=True, slots=True)
class FetchTable:
    """The ``fetches`` table as columns, one array per column, in insertion order.

    Integer columns use -1 for NULL (``changed``: -1 unknown, 0, 1), floats nan;
    ``outcome`` and ``kind`` are int8 codes into :data:`OUTCOMES` and
    :data:`FETCH_KINDS`; text columns are object arrays (None for NULL).  Columns are
    attributes; ``table["name"]`` reads one by name too.
    """

    url_id: IntArray
    seq: IntArray
    started_at: FloatArray
    ended_at: FloatArray
    status: IntArray
    size: IntArray
    attempt: IntArray
    priority: FloatArray
    rank: IntArray
    changed: Int8Array
    outcome: Int8Array
    kind: Int8Array
    content_type: ObjectArray
    digest: ObjectArray
    etag: ObjectArray
    last_modified: ObjectArray
    error: ObjectArray
    strategy: ObjectArray

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.__dataclass_fields__:
            raise KeyError(name)
        value: np.ndarray = getattr(self, name)
        return value

    def __len__(self) -> int:
        return int(self.url_id.size)


#: Column names of :meth:`~webcrawl.storage.reader.CrawlReader.iter_pages` rows.
PAGE_COLUMNS = ("url", "status", "seq", "fetched_at", "depth", "outcome", "host",
                "content_type", "size", "digest", "etag", "last_modified", "error",
                "attempts", "discovered_seq", "id")
