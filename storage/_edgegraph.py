"""The imported graph in memory: nodes numbered 0..n-1, links grouped by source page
(private: see :mod:`webcrawl.storage.edgelist` for the contract).

Integer ids are remapped to dense nodes in ascending id order (through a table indexed
by id when the ids are near 0, else ``np.unique``); names get nodes in order of first
appearance (Arrow's dictionary encoding).  A file already grouped by source page (as
published files are) is not permuted; another gets a stable argsort.  No Python object
per edge, and none per node for integer ids.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from webcrawl.storage._edgeparse import count_ids
from webcrawl.storage._edgeread import parse_ids, read_edge_table, read_vertices
from webcrawl.storage.errors import ConfigError

__all__ = ["NO_HOST", "Graph", "build_graph", "seed_nodes", "urls_and_hosts"]

#: Links counted by one ``np.bincount`` call (its intp copy of the ids stays small).
_COUNT_CHUNK = 1 << 23
#: Names that are hosts written reversed (``com.example.www``), Common Crawl style.
_REVERSED_HOST = re.compile(r"^[a-z0-9-]+(\.[a-z0-9_-]+)+$")
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
#: The host name of a node that is no URL (integer ids, plain names).
NO_HOST = ""


def _name_kind(names: Sequence[str]) -> str:
    sample = [n for n in names[:1000] if n]
    if sample and all(_URL.match(n) for n in sample):
        return "urls"
    if sample and all(_REVERSED_HOST.match(n) for n in sample):
        return "reversed-hosts"
    return "names"


def urls_and_hosts(names: list[str], kind: str) -> tuple[list[str], list[str]]:
    """Stored URL and host name of each node."""
    if kind == "reversed-hosts":
        hosts = [".".join(reversed(n.split("."))) for n in names]
        return [f"http://{h}/" for h in hosts], hosts
    if kind == "urls":
        from urllib.parse import urlsplit

        hosts = []
        for n in names:
            try:
                hosts.append(urlsplit(n).netloc.rpartition("@")[2].lower())
            except ValueError:
                hosts.append(NO_HOST)
        return names, hosts
    return names, [NO_HOST] * len(names)



_INT32_MAX = int(np.iinfo(np.int32).max)


@dataclass(slots=True)
class Graph:
    dst: list[np.ndarray]            # destination column, in parts as parsed
    counts: np.ndarray               # int64 out-links of each node
    first: int                       # the file's first source node (-1: no links)
    kind: str                        # 'ids', 'urls', 'reversed-hosts' or 'names'
    ids: np.ndarray | None = None    # kind 'ids': node -> its integer id in the file
    names: list[str] | None = None   # other kinds: node -> name as given
    remap: np.ndarray | None = None  # id -> node (int32) for ``dst``; None: ids are nodes
    order: np.ndarray | None = None  # links by source page, if the file is not so sorted

    @property
    def n(self) -> int:
        return int(self.counts.size)

    @property
    def m(self) -> int:
        return sum(p.size for p in self.dst)

    def name(self, node: int) -> str:
        if self.ids is not None:
            return str(int(self.ids[node]))
        assert self.names is not None
        return self.names[node]

    def grouped_dst(self) -> np.ndarray:
        """Destination nodes (int32) grouped by source page, file order within a page
        (computed when the links are written, by the thread that writes them)."""
        if self.remap is not None:
            out = np.empty(self.m, np.int32)
            pos = 0
            for p in self.dst:
                out[pos:pos + p.size] = _gather(self.remap, p)
                pos += p.size
        elif len(self.dst) == 1:
            out = self.dst[0].astype(np.int32, copy=False)
        else:
            out = np.concatenate(self.dst).astype(np.int32, copy=False)
        return out if self.order is None else _gather(out, self.order)


def _check_size(n: int) -> None:
    if n >= _INT32_MAX:
        raise ConfigError(f"{n} nodes: more than the int32 link arrays hold")


def _is_sorted(parts: Sequence[np.ndarray]) -> bool:
    """Whether the concatenation of ``parts`` is non-decreasing (checked part by part:
    no array of the whole size)."""
    last = None
    for p in parts:
        if p.size == 0:
            continue
        if (last is not None and p[0] < last) or not bool(np.all(p[1:] >= p[:-1])):
            return False
        last = p[-1]
    return True


def _group(src: Sequence[np.ndarray], space: int,
           ids: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray]:
    """The permutation that groups links by source page, file order kept within a page
    (None if the file is so sorted already, as published files are); and each node's
    out-link count.

    ``src`` is the source column (in parts, as parsed) in an id space of ``space``
    values whose order is the node order; ``ids`` maps nodes to that space (None: the
    identity).  For a sorted file the counts come part by part, with no array of the
    whole size.
    """
    counts = np.zeros(space, np.int64)
    order = None
    if _is_sorted(src):
        for p in src:
            if p.size:
                low = int(p[0])
                counts[low:int(p[-1]) + 1] += np.bincount(p - low)
    else:
        whole = np.concatenate(src) if len(src) != 1 else src[0]
        order = np.argsort(whole, kind="stable")
        for lo in range(0, whole.size, _COUNT_CHUNK):  # bincount's intp copy stays small
            counts += np.bincount(whole[lo:lo + _COUNT_CHUNK], minlength=space)
    return order, (counts if ids is None else counts[ids])


def _gather(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``table[index]`` through Arrow's take: a quarter of numpy's time for an int32
    index (numpy converts the index to intp first, 8 bytes a link), without the GIL."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out: np.ndarray = pc.take(pa.array(table), pa.array(index)).to_numpy()
    return out


def _int_graph(a: list[np.ndarray], b: list[np.ndarray]) -> Graph:
    """Integer ids (the columns in parts) remapped to nodes 0..n-1 in ascending id order.

    Ids within a few times the link count of 0 (the usual numbering) are remapped
    through a table indexed by id, part by part: the parsed columns are the only
    arrays of the whole size besides the remapped destinations.  Other ids go through
    ``np.unique``.  The source parts are released (``a`` emptied) once the links are
    counted: 4 bytes a link less while the links are written.
    """
    m = sum(p.size for p in a)
    if m == 0:
        return Graph([np.zeros(0, np.int32)], np.zeros(0, np.int64), -1, "ids",
                      ids=np.zeros(0, np.int64))
    low = min(int(p.min()) for p in (*a, *b) if p.size)
    high = max(int(p.max()) for p in (*a, *b) if p.size)
    first_id = int(next(p[0] for p in a if p.size))
    if low >= 0 and high < 16 * m + 1024:
        counted = count_ids(a, b, high)  # one compiled pass, or None
        if counted is not None:
            present, counts, ascending = counted
        else:
            present = np.zeros(high + 1, dtype=np.uint8)
            for p in (*a, *b):
                present[p] = 1
        ids = np.flatnonzero(present)
        _check_size(ids.size)
        dense = ids.size == high + 1  # ids are nodes already
        remap = None if dense else np.cumsum(present, dtype=np.int32) - 1
        del present
        if counted is None:
            order, counts = _group(a, high + 1, None if dense else ids)
        else:
            counts = counts if dense else counts[ids]
            order = None if ascending else np.argsort(np.concatenate(a), kind="stable")
        a.clear()
        return Graph(list(b), counts, first_id if remap is None else int(remap[first_id]),
                      "ids", ids=ids, remap=remap, order=order)
    ids, inverse = np.unique(np.concatenate([*a, *b]), return_inverse=True)
    _check_size(ids.size)
    inverse = inverse.astype(np.int32)
    order, counts = _group([inverse[:m]], ids.size, None)
    return Graph([inverse[m:]], counts, int(inverse[0]), "ids", ids=ids.astype(np.int64),
                  order=order)


def _named_graph(src: np.ndarray, dst: np.ndarray, names: list[str]) -> Graph:
    """Dense node ids ``src``, ``dst`` (int32) and each node's name."""
    order, counts = _group([src], len(names), None)
    return Graph([dst], counts, int(src[0]) if src.size else -1, _name_kind(names),
                  names=names, order=order)


def build_graph(edges: Path, vertices: Path | None) -> Graph:
    import pyarrow as pa
    import pyarrow.compute as pc

    if vertices is None:
        parsed = parse_ids(edges)
        if parsed is not None:
            return _int_graph(*parsed)
    table = read_edge_table(edges)
    integer = pa.types.is_integer(table.schema.field("c0").type)
    if vertices is not None:
        if not integer:
            raise ConfigError(f"{edges}: --vertices needs integer ids in the edge file")
        a, b = (table[c].combine_chunks() for c in ("c0", "c1"))
        vid, vnames = read_vertices(vertices)
        order = None if np.all(vid[1:] > vid[:-1]) else np.argsort(vid, kind="stable")
        if order is not None:
            vid = vid[order]
            vnames = [vnames[i] for i in order.tolist()]
            if np.any(vid[1:] == vid[:-1]):
                dup = int(vid[1:][vid[1:] == vid[:-1]][0])
                raise ConfigError(f"{vertices}: vertex id {dup} appears twice")
        _check_size(vid.size)
        src, dst = a.to_numpy(), b.to_numpy()
        if vid.size and vid[0] == 0 and vid[-1] == vid.size - 1:
            pos_src, pos_dst = src, dst  # dense 0..n-1: ids are positions
            bad = (src < 0) | (src >= vid.size) | (dst < 0) | (dst >= vid.size)
        else:
            pos_src = np.minimum(np.searchsorted(vid, src), max(vid.size - 1, 0))
            pos_dst = np.minimum(np.searchsorted(vid, dst), max(vid.size - 1, 0))
            bad = (vid[pos_src] != src) | (vid[pos_dst] != dst) if vid.size else \
                np.ones(src.size, bool)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ConfigError(f"{edges}: edge {int(src[k])} -> {int(dst[k])} names a vertex "
                              f"missing from {vertices}")
        return _named_graph(pos_src.astype(np.int32, copy=False),
                            pos_dst.astype(np.int32, copy=False), vnames)
    if integer:
        a, b = ([c.to_numpy() for c in table[col].chunks] for col in ("c0", "c1"))
        del table  # the parts are views of its buffers: _int_graph frees the sources
        return _int_graph(a, b)
    a, b = (table[c].combine_chunks() for c in ("c0", "c1"))
    del table
    encoded = pc.dictionary_encode(pa.concat_arrays([a, b]))
    index = encoded.indices.to_numpy().astype(np.int32, copy=False)
    names = encoded.dictionary.to_pylist()
    _check_size(len(names))
    return _named_graph(index[: len(a)], index[len(a):], names)


def seed_nodes(graph: Graph, seeds: Sequence[str]) -> np.ndarray:
    if not seeds:
        return np.array([graph.first] if graph.first >= 0 else [], np.int64)
    out: set[int] = set()
    index = None if graph.ids is not None else \
        {name: i for i, name in enumerate(graph.names or [])}
    for name in seeds:
        node = -1
        if index is not None:
            node = index.get(name, -1)
        elif graph.ids is not None and re.fullmatch(r"-?[0-9]+", name) \
                and str(int(name)) == name:
            pos = int(np.searchsorted(graph.ids, int(name)))
            if pos < graph.ids.size and int(graph.ids[pos]) == int(name):
                node = pos
        if node < 0:
            raise ConfigError(f"seed {name!r} is not a node of the graph")
        out.add(node)
    return np.array(sorted(out), dtype=np.int64)
