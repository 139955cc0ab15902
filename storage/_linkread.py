"""A crawl's links as :class:`~webcrawl.storage.tables.LinkArrays`, checked (internal).

Three sources (``schema.sql``): the per-page int32 BLOBs of ``links`` (the latest link
set of each page), ``link_versions`` (earlier sets, for a past state of the crawl) and the
blocks of ``link_blocks`` (an imported graph).  SQLite concatenates the BLOBs a range at
a time into one array: no Python loop over links.

Contract: what comes out is valid or a :class:`~webcrawl.storage.errors.StoreCorruptError`
naming the file: every BLOB is a BLOB whose length is a multiple of 4, every source and
destination id names a node (``0 <= id < nodes``: a URL row, or a node of
``id_ranges``).  The checks are vectorised passes over arrays the reader builds anyway
(their cost is a min and a max per array); a damaged id would otherwise size an array
(2**31 entries from one flipped byte) or index past one, deep inside an analysis.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
from webcrawl.storage._query import Query, id_order
from webcrawl.storage.tables import LINK_DTYPE, LinkArrays

__all__ = ["BLOB_CHUNK", "block_csr", "block_total", "links_csr", "no_links", "out_degrees",
           "versions_csr"]

#: Bytes of link arrays SQLite concatenates at once.
BLOB_CHUNK = 1 << 27


def no_links() -> LinkArrays:
    return LinkArrays(src=np.zeros(0, dtype=np.int64), indptr=np.zeros(1, dtype=np.int64),
                      dst=np.zeros(0, dtype=LINK_DTYPE))


def links_csr(q: Query, column: str, nodes: int) -> LinkArrays:
    """Every page's ``links.<column>`` array (``dst`` or ``nofollow``), by page id."""
    source = f"links NOT INDEXED WHERE {column} IS NOT NULL"
    with q.snapshot():
        # A value that is no BLOB reads as length -1: checked with no column more.
        (src, nbytes), _ = q.columns(
            ["src", f"CASE typeof({column}) WHEN 'blob' THEN length({column}) ELSE -1 END"],
            source)
        _check_blobs(q, f"links.{column}", src, nbytes)
        dst = _joined_blobs(q, column, src, nbytes)
    if id_order(src) is not None or dst is None:
        # Fallback (never expected): one row per page, joined in Python.
        rows = q.all(f"SELECT src, {column} FROM {source} ORDER BY src")
        src = np.array([r[0] for r in rows], dtype=np.int64)
        nbytes = np.array([len(r[1]) for r in rows], dtype=np.int64)
        dst = np.frombuffer(b"".join([r[1] for r in rows]), dtype=LINK_DTYPE)
    return _checked(q, f"links.{column}", src, nbytes, dst, nodes)


def versions_csr(q: Query, column: str, as_of_seq: int, nodes: int) -> LinkArrays:
    """Per page, the newest link version whose fetch has ``seq <= as_of_seq``."""
    if not q.has_table("link_versions"):  # a version-1 file: one version per page
        sql = (f"SELECT l.src, l.{column} FROM links l WHERE l.{column} IS NOT NULL"
               " ORDER BY l.src")
        params: tuple[Any, ...] = ()
    else:
        # Versions without a fetch (imported graphs) count as seq -1.
        sql = (
            f"SELECT src, {column}, max(s) FROM ("
            f" SELECT l.src, l.{column}, ifnull(f.seq, -1) AS s FROM links l"
            "  LEFT JOIN fetches f ON f.id = l.fetch_id"
            " UNION ALL"
            f" SELECT v.src, v.{column}, ifnull(f.seq, -1) FROM link_versions v"
            "  LEFT JOIN fetches f ON f.id = v.fetch_id)"
            " WHERE s <= ? GROUP BY src ORDER BY src")
        params = (as_of_seq,)
    # SQLite's bare columns of a max() aggregate come from the row of the maximum.
    rows = [r for r in q.all(sql, params) if r[1] is not None]
    what = f"links.{column} or link_versions.{column}"
    try:
        src = np.array([r[0] for r in rows], dtype=np.int64)
    except (TypeError, ValueError):
        raise q.damaged(f"{what}: a page id is not an integer") from None
    nbytes = np.array([len(r[1]) if isinstance(r[1], bytes) else -1 for r in rows],
                      dtype=np.int64)
    _check_blobs(q, what, src, nbytes)
    dst = np.frombuffer(b"".join(r[1] for r in rows), dtype=LINK_DTYPE)
    return _checked(q, what, src, nbytes, dst, nodes)


def block_csr(q: Query, nodes: int) -> LinkArrays | None:
    """The links of ``link_blocks`` (None if the file has none: its links are rows).

    The destinations are concatenated by SQLite :data:`BLOB_CHUNK` bytes at a time
    into one array; the sources only counted, range by range (no array of them).
    """
    total = block_total(q)
    if total is None:
        return None
    dst = np.empty(total, dtype=LINK_DTYPE)
    counts = out_degrees(q, nodes, dst)
    _check_range(q, "link_blocks.dst", dst, nodes)
    pages = np.flatnonzero(counts)
    indptr = np.zeros(pages.size + 1, dtype=np.int64)
    np.cumsum(counts[pages], out=indptr[1:])
    return LinkArrays(src=pages.astype(np.int64), indptr=indptr, dst=dst)


def block_total(q: Query) -> int | None:
    """The number of links in ``link_blocks`` (None: the file has no blocks)."""
    if not q.has_table("link_blocks"):
        return None
    bad = q.all("SELECT first FROM link_blocks WHERE typeof(src) != 'blob'"
                " OR typeof(dst) != 'blob'"
                " OR length(src) != length(dst) OR length(dst) % 4 != 0 LIMIT 1")
    if bad:
        raise q.damaged(f"the link block at {bad[0][0]!r} is not two int32 arrays of one "
                        "length (link_blocks)")
    last = q.all("SELECT first + length(dst) / 4 FROM link_blocks"
                 " ORDER BY first DESC LIMIT 1")
    return int(last[0][0]) if last else None


def out_degrees(q: Query, nodes: int, dst: np.ndarray | None = None) -> np.ndarray:
    """Out-link count of each of ``nodes`` nodes in ``link_blocks`` (int64), the
    sources only counted, range by range (no array of them); with ``dst`` (as long
    as the blocks' links), their destinations are copied into it."""
    counts = np.zeros(nodes, dtype=np.int64)
    total = block_total(q) or 0
    step = BLOB_CHUNK // LINK_DTYPE.itemsize
    column = "''" if dst is None else "group_concat(dst, '')"
    sql = (f"SELECT group_concat(src, ''), {column} FROM link_blocks"
           " WHERE first >= ? AND first < ?")
    pos = 0
    with q.raw_text():
        for lo in range(0, total, step):
            src_bytes, dst_bytes = q.run(sql, (lo, lo + step)).fetchone()
            src = np.frombuffer(src_bytes or b"", dtype=LINK_DTYPE)
            if pos + src.size > total:
                break
            if dst is not None:
                part = np.frombuffer(dst_bytes or b"", dtype=LINK_DTYPE)
                dst[pos:pos + part.size] = part
                del part
            if src.size:
                _check_range(q, "link_blocks.src", src, nodes)
                if bool(np.any(src[1:] < src[:-1])):
                    raise q.damaged("the sources of link_blocks are not in ascending order")
                low = int(src[0])  # ascending: count within the range only
                counts[low:int(src[-1]) + 1] += np.bincount(src - low)
            pos += src.size
            del src_bytes, dst_bytes, src
    if pos != total:
        raise q.damaged(f"link_blocks holds {pos} links, not {total}")
    return counts


def _check_blobs(q: Query, what: str, src: np.ndarray, nbytes: np.ndarray) -> None:
    """Each row's value must be a BLOB of whole int32 ids (``nbytes`` -1: no BLOB)."""
    bad = np.flatnonzero((nbytes < 0) | (nbytes % LINK_DTYPE.itemsize != 0))
    if bad.size:
        raise q.damaged(f"the {what} value of page {int(src[bad[0]])} is not an int32 "
                        f"array ({bad.size:,} such pages)")


def _check_range(q: Query, what: str, ids: np.ndarray, nodes: int) -> None:
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= nodes):
        bad = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
        raise q.damaged(f"{what} holds the id {bad}, which names no URL (ids 0 to "
                        f"{nodes - 1})")


def _checked(q: Query, what: str, src: np.ndarray, nbytes: np.ndarray, dst: np.ndarray,
             nodes: int) -> LinkArrays:
    _check_range(q, f"{what} (its pages)", src, nodes)
    _check_range(q, what, dst, nodes)
    indptr = np.zeros(src.size + 1, dtype=np.int64)
    np.cumsum(nbytes // LINK_DTYPE.itemsize, out=indptr[1:])
    return LinkArrays(src=src, indptr=indptr, dst=dst)


def _joined_blobs(q: Query, column: str, src: np.ndarray,
                  nbytes: np.ndarray) -> np.ndarray | None:
    """All BLOBs of ``column`` concatenated, as one int32 array; None on a mismatch.

    SQLite concatenates the BLOBs of a range of pages at a time (``group_concat``
    with an empty separator: in a UTF-8 database no transcoding happens, and no
    Python object per page), each range at most :data:`BLOB_CHUNK` bytes (SQLite
    refuses a value over 1 GB), copied into the array allocated once: the peak is
    the array plus one range, twice.  None when the lengths do not add up (the
    caller falls back).
    """
    if q.encoding() != "UTF-8" or (src.size > 1 and bool(np.any(src[1:] <= src[:-1]))):
        return None
    total = int(nbytes.sum())
    out = np.empty(total // LINK_DTYPE.itemsize, dtype=LINK_DTYPE)
    view = out.view(np.uint8)
    ends = np.cumsum(nbytes)
    cuts = np.searchsorted(ends, np.arange(BLOB_CHUNK, total, BLOB_CHUNK), side="right")
    bounds = np.unique(np.concatenate([[0], np.maximum(cuts, 1), [src.size]]))
    sql = (f"SELECT group_concat({column}, '') FROM links"
           f" WHERE src BETWEEN ? AND ? AND {column} IS NOT NULL")
    pos = 0
    with q.raw_text():
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            if lo >= hi:
                continue
            try:
                value = q.conn.execute(sql, (int(src[lo]), int(src[hi - 1]))).fetchone()[0]
            except sqlite3.Error:
                return None  # the caller's fallback reports what persists
            size = 0 if value is None else len(value)
            if pos + size > total:
                return None
            view[pos:pos + size] = np.frombuffer(value or b"", dtype=np.uint8)
            pos += size
            del value
    return out if pos == total else None
