"""The compiled edge-list parser (webcrawl.storage._edgeparse) against pyarrow's reading
of the same file (the import's other path, itself checked against networkx in
test_edgelist.py): the same ids, or a refusal (None) that sends the file to pyarrow."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import webcrawl.storage._edgeparse as edgeparse
from webcrawl.storage import edgelist
from webcrawl.storage.edgelist import import_edges

pytest.importorskip("numba")


def arrow_ids(path: Path) -> tuple[np.ndarray, np.ndarray]:
    table = edgelist._read_edge_table(path)
    return table["c0"].to_numpy(), table["c1"].to_numpy()


def parsed(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    got = edgelist._parse_ids(path)
    if got is None:
        return None
    return np.concatenate(got[0]), np.concatenate(got[1])


def lines(n: int, seed: int, top: int = 10**6) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    return [(rng.randrange(-5, top), rng.randrange(0, top)) for _ in range(n)]


LAYOUTS = {
    "tab": lambda a, b, k: f"{a}\t{b}\n",
    "space": lambda a, b, k: f"{a} {b}\n",
    "crlf": lambda a, b, k: f"{a}\t{b}\r\n",
    "blank-runs-comments": lambda a, b, k: (f" {a} \t {b}  \n" if k % 3 else f"{a} {b}\n")
    + ("# a comment\n\n" if k % 17 == 0 else ""),
    "weighted": lambda a, b, k: f"{a}\t{b}\t0.{k % 10}\n",
}


@pytest.mark.parametrize("block", [1 << 24, 64], ids=["one-block", "64-byte-blocks"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_same_ids_as_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             layout: str, block: int) -> None:
    monkeypatch.setattr(edgeparse, "BLOCK_BYTES", block)
    edges = lines(3000, seed=len(layout))
    text = "# SNAP header\n# FromNodeId\tToNodeId\n" + "".join(
        LAYOUTS[layout](a, b, k) for k, (a, b) in enumerate(edges))
    path = tmp_path / "g.txt"
    path.write_text(text, newline="")
    got = parsed(path)
    assert got is not None
    assert got[0].dtype == np.int32
    expected = (np.array([a for a, _ in edges]), np.array([b for _, b in edges]))
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    if layout in ("tab", "space", "crlf", "weighted"):  # pyarrow's fast path reads these
        arrow = arrow_ids(path)
        np.testing.assert_array_equal(got[0], arrow[0])
        np.testing.assert_array_equal(got[1], arrow[1])


@pytest.mark.parametrize("tail", ["", "\n"], ids=["no-final-newline", "final-newline"])
def test_header_row_and_last_line(tmp_path: Path, tail: str) -> None:
    path = tmp_path / "g.tsv"
    path.write_text("src\tdst\tnofollow\n3\t4\t0\n4\t3\t1\n5\t3\t0" + tail)
    got = parsed(path)
    assert got is not None
    assert got[0].tolist() == [3, 4, 5] and got[1].tolist() == [4, 3, 3]


@pytest.mark.parametrize("body", [
    "1\t2\n3\t2147483648\n",          # past int32: pyarrow reads int64
    "1\t2\n3\tx\n",                   # not an integer: names
    "1\t2\n3\t4x\n",                  # digits run into letters
    "1\t2\n3\n",                      # one field
    "1\t2\n3\t4\t5\n",                # a field more than the first line
    "1\t2\n+3\t4\n",                  # a sign pyarrow may read otherwise
    "1\t2\n3\r4\n",                   # a lone carriage return
    "1\t2\n" + "12345678901\t3\n",    # too many digits
], ids=["int64", "name", "digits-then-letters", "one-field", "extra-field", "plus",
        "lone-cr", "long-number"])
def test_refuses_what_it_does_not_read(tmp_path: Path, body: str) -> None:
    path = tmp_path / "g.txt"
    path.write_text(body, newline="")
    assert parsed(path) is None


def test_quoted_fields_after_a_header_go_to_pyarrow(tmp_path: Path) -> None:
    path = tmp_path / "g.tsv"
    path.write_text('src\tdst\tnote\n1\t2\t"a\tb"\n')
    assert parsed(path) is None
    path.write_text('1\t2\t"a"\n')  # no header row: quotes are plain characters
    got = parsed(path)
    assert got is not None and got[0].tolist() == [1]


@pytest.mark.parametrize("body", ["1\t2\n3\tx\n", "0\t1\n1\t2147483648\n"],
                         ids=["names", "int64"])
def test_import_falls_back_to_pyarrow(tmp_path: Path, body: str) -> None:
    path = tmp_path / "g.txt"
    path.write_text(body)
    result = import_edges(path, tmp_path / "g.db")
    assert result.edges == 2
    assert result.names == ("names" if "x" in body else "ids")


def test_import_same_database_either_path(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    edges = lines(5000, seed=3, top=2000)
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in edges))
    fast = import_edges(path, tmp_path / "fast.db")
    monkeypatch.setattr(edgeparse, "compiled", lambda *_: None)
    assert edgelist._parse_ids(path) is None
    slow = import_edges(path, tmp_path / "slow.db")
    assert (fast.nodes, fast.edges, fast.pages_with_links) == \
        (slow.nodes, slow.edges, slow.pages_with_links)
    import sqlite3
    rows = {}
    for name in ("fast", "slow"):
        with sqlite3.connect(tmp_path / f"{name}.db") as conn:
            rows[name] = (conn.execute("SELECT id, url, outcome FROM urls ORDER BY id").fetchall(),
                          conn.execute("SELECT src, dst FROM links ORDER BY src").fetchall())
        conn.close()
    assert rows["fast"] == rows["slow"]
