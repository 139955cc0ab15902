"""Import a published web graph (an edge list) into a crawl database.

The formats researchers publish graphs in, all read by one vectorised path:

* **Edge lines** ``src dst`` separated by spaces or a tab (more columns are ignored,
  so weighted lists work), ``#`` comment lines (SNAP's header), blank lines, plain or
  gzip (by content, not by name).
* **Integer ids** with an optional **vertices file** of ``id name`` lines (space or
  tab; Common Crawl's ``id<TAB>reversed.host`` form, e.g. ``3<TAB>com.example.www``,
  is recognised and turned back into ``http://www.example.com/``), or a one-column
  file of names whose line number is the id (LAW/WebGraph ``.urls`` files).
* **Names directly**: ``http://a/ http://b/`` lines (any non-integer token).
* **A header row** first (``src dst``, ``source target`` or ``from to``, any case:
  :data:`~webcrawl.storage._edgeread.HEADERS`) is skipped, and fields may then be
  quoted CSV-style: the TSV of ``webcrawl export edges`` (with ``--ids``, its nodes
  file is a vertices file) imports back as it was.

Reading is :mod:`webcrawl.storage._edgeread` (a compiled byte parser for plain
integer lines, :mod:`webcrawl.storage._edgeparse` with numba: ``webcrawl[fast]``; pyarrow's
multi-threaded CSV reader for everything else), the graph in memory
:mod:`webcrawl.storage._edgegraph` (numpy and Arrow compute over whole arrays, taken part
by part as the parser hands them over: no Python object per edge, and none per node for
integer ids), writing :mod:`webcrawl.storage._edgewrite` (SQLite receives JSON integer
arrays built by Arrow through ``json_each`` and int32 blobs sliced by ``substr``).

A graph whose nodes are integer ids or plain names (nothing can crawl it: no URLs)
keeps its links in ``link_blocks`` (``schema.sql``), 1,024 links a row; its nodes are
a row per run of consecutive ids in ``id_ranges`` for integer ids (no ``urls`` rows:
the reader implies them), else ``urls`` rows without an index on ``url``.  A graph of
URLs or reversed hosts, which a crawl may resume, has the crawl's layout, a ``links``
row a page.  The database is written with no journal into a temporary file beside the
target and renamed into place when complete, so a failed or killed import never leaves
a partial database.

The database it writes is what every analysis reads (see ``schema.sql``): one node
per distinct name (ids dense from 0, in the order of the input ids, or first appearance
for names; a ``urls`` row each, or implied by ``id_ranges``), each node's out-links
in ``link_blocks`` or ``links`` in file order, duplicates and self-loops kept (the
loader drops or collapses them).

Which nodes are pages (outcome ``fetched``, the nodes of the ``pages`` graph every
analysis measures by default) is ``pages``:

* ``"all"`` (the default): every node.  A published graph lists pages, and a page
  without out-links in it is a page without out-links, not a URL nobody fetched: the
  default PageRank of any edge list is then networkx's on the same file.  A crawl's
  ``export edges`` (its ``pages`` graph, the default) holds only fetched pages, so it
  imports back with the same pages.
* ``"sources"``: only the nodes with out-links in the file; the others stay discovered
  (outcome NULL), the frontier of a crawl that stopped there.  For an edge list whose
  destinations were not all fetched (``export edges --graph all``, a frontier dump).

There is no fetch order (``urls.seq`` NULL, no ``fetches`` rows): the graph was not
crawled by us.  Depth is -1 (unknown).  Seeds (``discovered_seq = -1``) are the names
given, else the first source node of the file.  ``meta`` records ``source = edges``,
the file names, the counts and ``pages`` (for integer ids the reader implies each
node's outcome from it: ``schema.sql``).  A file with no links (empty, only comments)
is refused: an empty database measures nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webcrawl.storage.errors import ConfigError, InputFormatError

# The modules that read, build and write (numpy, pyarrow, and sqlite3 through the lock)
# load on the first call of import_edges, so that the CLI can name PAGE_RULES without
# loading them.

__all__ = ["PAGE_RULES", "EdgeImport", "import_edges", "read_edge_arrays"]

#: Which nodes of an imported graph are pages (see the module docstring).
PAGE_RULES = ("all", "sources")


@dataclass(frozen=True, slots=True)
class EdgeImport:
    """What :func:`import_edges` wrote."""

    nodes: int
    edges: int
    #: nodes that are pages (outcome ``fetched``): every node, or those with out-links
    pages: int
    pages_with_links: int
    hosts: int
    seconds: float
    names: str           # 'ids', 'urls', 'reversed-hosts' or 'names'

    @property
    def edges_per_second(self) -> float:
        return self.edges / self.seconds if self.seconds > 0 else float("inf")

    def as_dict(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "edges": self.edges, "pages": self.pages,
                "pages_with_links": self.pages_with_links, "hosts": self.hosts,
                "seconds": round(self.seconds, 3), "names": self.names,
                "edges_per_second": round(self.edges_per_second)}


def import_edges(
    edges: str | Path,
    db: str | Path,
    *,
    vertices: str | Path | None = None,
    seeds: Sequence[str] = (),
    pages: str = "all",
    progress: Callable[[str], None] | None = None,
) -> EdgeImport:
    """Import an edge list (and its vertices file) into a new crawl database.

    The database is written to a temporary file beside ``db`` (``.NAME.importing``)
    and renamed to ``db`` when complete, so an import that fails or is killed never
    leaves a partial database at ``db``, nor its temporary file
    (:func:`webcrawl.storage.lock.new_database`).

    Parameters
    ----------
    edges : str or Path
        The edge file (see the module docstring for the formats).
    db : str or Path
        The crawl database to create (it must not exist).
    vertices : str or Path, optional
        ``id name`` lines naming the integer ids of ``edges``.
    seeds : sequence of str
        Names (as in the files; ids as text) of the seed nodes; default: the first
        source node of the edge file.
    pages : {"all", "sources"}, default "all"
        Which nodes are pages (outcome ``fetched``): every node, or only those with
        out-links in the file (the others are discovered URLs nobody fetched; see the
        module docstring).
    progress : callable, optional
        Called with a short line after each phase.

    Returns
    -------
    EdgeImport

    Raises
    ------
    InputFormatError
        The edge file holds no links (empty, or only comments); nothing is written.
    ConfigError
        ``pages`` is not one of :data:`PAGE_RULES`, a file is missing or unparsable,
        an edge names a vertex not in ``vertices``, a seed is not a node, the graph
        has 2**31 - 1 nodes or more.
    StoreError
        ``db`` exists or cannot be written (nothing is left behind on failure).
    """
    from webcrawl.storage._edgegraph import build_graph, seed_nodes
    from webcrawl.storage._edgeread import existing_file
    from webcrawl.storage._edgewrite import write_graph
    from webcrawl.storage.lock import new_database

    t0 = time.perf_counter()
    if pages not in PAGE_RULES:
        raise ConfigError(f"pages must be one of {', '.join(PAGE_RULES)}, not {pages!r}")
    db = Path(db)
    edges = existing_file(edges)
    say = progress or (lambda _line: None)
    # One writer per database (not beside a crawl or another import), written whole.
    with new_database(db) as temp:
        graph = build_graph(edges, None if vertices is None else Path(vertices))
        if graph.m == 0:
            raise InputFormatError(f"{edges}: no links to import (the file is empty or "
                                   "holds only comments); no database was written")
        say(f"parsed {graph.m:,} links between {graph.n:,} nodes "
            f"({time.perf_counter() - t0:.1f} s)")
        seed_ids = seed_nodes(graph, seeds)
        written = write_graph(temp, db, graph, seed_ids, edges, vertices, pages == "all", say)
    return EdgeImport(nodes=graph.n, edges=graph.m, pages=written.pages,
                      pages_with_links=written.pages_with_links, hosts=written.hosts,
                      seconds=time.perf_counter() - t0, names=graph.kind)


def read_edge_arrays(path: str | Path) -> tuple[Any, Any]:
    """The two columns of an edge file as Arrow arrays: int32 if every token is an
    integer that fits (int64 if one does not), else strings."""
    from webcrawl.storage._edgeread import read_edge_arrays as read

    return read(path)
