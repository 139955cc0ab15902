"""Everything a crawl needs to continue where it stopped, read from its database.

:func:`load_state` reads the committed state (hosts, URLs, the fetched pages' links in
fetch order) with a plain read-only ``sqlite3`` connection, in one read transaction;
:meth:`webcrawl.storage.store.CrawlStore.load_state` calls it after flushing its queue.

Contract: a damaged file (a value of the wrong type, a link array that does not decode
or names no URL) raises :class:`~webcrawl.storage.errors.StoreCorruptError` naming the
file, before the crawl takes a single URL: resuming on it would fetch again, or lose,
what it misreads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from webcrawl.storage._sqlite import decode_ids, map_error, sqlite_uri
from webcrawl.storage.errors import StoreCorruptError
from webcrawl.storage.records import HostRow, Outcome, UrlRow

__all__ = ["ResumeState", "load_state"]

_OUTCOMES: dict[str | None, Outcome] = {o.value: o for o in Outcome}
#: Pages whose link ids are range-checked at once.
_CHECK_ROWS = 1 << 16


@dataclass(slots=True)
class ResumeState:
    """Everything a crawl needs to continue where it stopped."""

    meta: dict[str, str]
    hosts: list[HostRow]
    urls: list[UrlRow]                # in id order
    next_seq: int                     # 1 + the highest seq recorded
    # Fetched pages' out-links in fetch (seq) order, for replaying strategy state:
    fetched_links: list[tuple[int, Sequence[int]]]
    #: pages recorded as cut at links_max_per_page (the link_cuts table)
    link_cuts: int = 0

    @property
    def next_url_id(self) -> int:
        """1 + the highest URL id (0 for an empty crawl)."""
        return self.urls[-1].id + 1 if self.urls else 0

    @property
    def next_host_id(self) -> int:
        """1 + the highest host id (0 for an empty crawl)."""
        return max((h.id for h in self.hosts), default=-1) + 1


def load_state(path: Path) -> ResumeState:
    """Read the resume state of the database ``path`` (blocking: run it in a thread)."""
    try:
        conn = sqlite3.connect(sqlite_uri(path, "ro"), uri=True)
    except sqlite3.Error as exc:
        raise map_error(exc, path, "reading") from exc
    try:
        with conn:  # one read transaction: hosts, URLs and links of the same commits
            conn.execute("BEGIN")
            return _read(conn, path)
    except sqlite3.Error as exc:
        raise map_error(exc, path, "reading") from exc
    finally:
        conn.close()


def _read(conn: sqlite3.Connection, path: Path) -> ResumeState:
    meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
    hosts = [HostRow(*row) for row in conn.execute(
        "SELECT id, name, robots_status, robots_body, robots_fetched_at, crawl_delay"
        " FROM hosts ORDER BY id")]
    _check_integers(conn, path)
    oc = _OUTCOMES
    urls = [UrlRow(i, u, h, d, ds, oc.get(o), s) for i, u, h, d, ds, o, s in conn.execute(
        "SELECT id, url, host_id, depth, discovered_seq, outcome, seq FROM urls ORDER BY id")]
    top = conn.execute("SELECT max(m) FROM (SELECT max(seq) AS m FROM fetches"
                       " UNION ALL SELECT max(seq) FROM urls)").fetchone()[0]
    link_rows = conn.execute("SELECT src, dst FROM links").fetchall()
    cuts = conn.execute("SELECT count(*) FROM link_cuts").fetchone()[0]
    return ResumeState(meta=meta, hosts=hosts, urls=urls,
                       next_seq=0 if top is None else int(top) + 1,
                       fetched_links=_links_in_seq_order(urls, link_rows, path),
                       link_cuts=cuts)


#: Integer columns the resume reads into Python ints, by table: (column, may be NULL).
_INTEGER_COLUMNS = {"urls": (("host_id", False), ("depth", False), ("discovered_seq", False),
                             ("seq", True)),
                    "fetches": (("seq", False),)}


def _check_integers(conn: sqlite3.Connection, path: Path) -> None:
    """SQLite stores any value in any column: text where the schema says INTEGER would
    reach the crawl's arrays as a Python error.  One scan per table."""
    for table, columns in _INTEGER_COLUMNS.items():
        tests = " OR ".join(f"(typeof({c}) != 'integer'" + (f" AND {c} IS NOT NULL)" if null
                                                           else ")") for c, null in columns)
        # Table and column names are the constants above, never data.
        bad = conn.execute(f"SELECT 1 FROM {table} WHERE {tests} LIMIT 1").fetchone()
        if bad:
            raise StoreCorruptError(f"{path} is damaged: a column of {table} ("
                                    f"{', '.join(c for c, _ in columns)}) holds a value that "
                                    "is not an integer")


def _links_in_seq_order(urls: list[UrlRow], link_rows: list[tuple[int, bytes]],
                        path: Path) -> list[tuple[int, Sequence[int]]]:
    if not link_rows:
        return []
    import numpy as np  # only here: keep `import storage` light

    ids = np.fromiter((u.id for u in urls), dtype=np.int64, count=len(urls))
    seqs = np.fromiter((-1 if u.seq is None else u.seq for u in urls), dtype=np.int64,
                       count=len(urls))
    src = np.fromiter((r[0] for r in link_rows), dtype=np.int64, count=len(link_rows))
    if not ids.size:
        raise StoreCorruptError(f"{path} is damaged: it has links but no URLs")
    pos = np.searchsorted(ids, src)  # urls are in id order
    pos = np.minimum(pos, ids.size - 1)
    src_seq = np.where(ids[pos] == src, seqs[pos], -1)
    order = np.argsort(src_seq, kind="stable")
    out: list[tuple[int, Sequence[int]]] = []
    for i in order.tolist():
        try:  # decode_ids checks each array: a BLOB of whole int32 ids
            out.append((link_rows[i][0], decode_ids(link_rows[i][1])))
        except ValueError:
            raise StoreCorruptError(f"{path} is damaged: the links of page {link_rows[i][0]} "
                                    "are not an int32 array") from None
    for lo in range(0, len(link_rows), _CHECK_ROWS):  # a slice at a time: no second copy
        ids_now = np.frombuffer(b"".join(r[1] for r in link_rows[lo:lo + _CHECK_ROWS]),
                                dtype="<i4")
        if ids_now.size and (int(ids_now.min()) < 0 or int(ids_now.max()) > int(ids[-1])):
            raise StoreCorruptError(f"{path} is damaged: its links name ids that no URL has")
    return out
