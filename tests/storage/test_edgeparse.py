"""The compiled edge-list parser (webcrawl.storage._edgeparse) against pyarrow's reading
of the same file (the import's other path, itself checked against networkx in
test_edgelist.py): the same ids, or a refusal (None) that sends the file to pyarrow."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import webcrawl.storage._edgeparse as edgeparse
import webcrawl.storage._edgeread as edgeread
import webcrawl.storage._edgewrite as edgewrite
from webcrawl.storage.edgelist import import_edges
from webcrawl.storage.reader import CrawlReader

pytest.importorskip("numba")


def arrow_ids(path: Path) -> tuple[np.ndarray, np.ndarray]:
    table = edgeread.read_edge_table(path)
    return table["c0"].to_numpy(), table["c1"].to_numpy()


def parsed(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    got = edgeread.parse_ids(path)
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


@pytest.mark.parametrize("block", [1 << 24, 8], ids=["one-block", "8-byte-blocks"])
@pytest.mark.parametrize("tail", ["", "\n"], ids=["no-final-newline", "final-newline"])
def test_header_row_and_last_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  tail: str, block: int) -> None:
    monkeypatch.setattr(edgeparse, "BLOCK_BYTES", block)  # 8: the last line read alone
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


@pytest.mark.parametrize("dense", [False, True], ids=["gaps", "dense"])
@pytest.mark.parametrize("by_source", [False, True], ids=["unsorted", "sorted"])
def test_import_same_database_either_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          by_source: bool, dense: bool) -> None:
    """Compiled (parser, id counting, remapping, sources) or numpy and pyarrow only:
    the same rows, in many statements too (small LINK_CHUNK and LINK_BLOCK)."""
    import sqlite3

    edges = [(abs(a), b) for a, b in lines(5000, seed=3, top=2000)]  # ids with gaps
    edges += [(7, v) for v in range(2000)] if dense else []  # every id 0..1999 a node
    edges = sorted(edges, key=lambda e: e[0]) if by_source else edges
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in edges))
    monkeypatch.setattr(edgewrite, "LINK_CHUNK", 700)
    monkeypatch.setattr(edgewrite, "LINK_BLOCK", 64)
    fast = import_edges(path, tmp_path / "fast.db")
    monkeypatch.setattr(edgeparse, "compiled", lambda *_: None)
    assert edgeread.parse_ids(path) is None
    slow = import_edges(path, tmp_path / "slow.db")
    assert (fast.nodes, fast.edges, fast.pages_with_links) == \
        (slow.nodes, slow.edges, slow.pages_with_links)
    rows = {}
    for name in ("fast", "slow"):
        with sqlite3.connect(tmp_path / f"{name}.db") as conn:
            rows[name] = [conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                          for table in ("urls", "id_ranges", "link_blocks", "links", "meta")
                          ][:4]
        conn.close()
    assert rows["fast"] == rows["slow"]
    assert rows["fast"][1] and rows["fast"][2]  # id ranges and blocks
    with CrawlReader(tmp_path / "fast.db") as reader:
        got = [(int(a), int(b)) for a, b, _ in reader.iter_edges()]
    assert got == sorted(edges, key=lambda e: e[0])  # grouped by source, file order kept


def reference(text: str) -> tuple[list[int], list[int]] | None:
    """A plain-Python reading of what the parser accepts (see its module docstring);
    None where it must refuse."""
    a: list[int] = []
    b: list[int] = []
    width = None
    for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if "\r" in line:
            return None
        body = line.lstrip(" \t")
        if not body or body.startswith("#"):
            continue
        fields = body.replace("\t", " ").split()
        width = width or len(fields)
        if len(fields) != width or len(fields) < 2:
            return None
        for value, out in zip(fields[:2], (a, b), strict=True):
            digits = value[1:] if value.startswith("-") else value
            if not digits.isdigit() or not digits.isascii() or len(digits) > 10 \
                    or not -2**31 <= int(value) < 2**31:
                return None
            out.append(int(value))
    return a, b


@pytest.mark.parametrize("seed", range(100))
def test_random_lines_against_a_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          seed: int) -> None:
    rng = random.Random(seed)
    # Blocks longer than any line made here (at most 39 bytes): a line longer than a
    # block is refused, which the reference does not model.
    monkeypatch.setattr(edgeparse, "BLOCK_BYTES", rng.choice([48, 64, 1 << 20]))
    tokens = ["0", "7", "42", "-3", "2147483647", "2147483648", "x", "1x", "00012"]
    width = rng.choice([2, 2, 3])
    rows = ["1\t2" + "\t9" * (width - 2)]  # a first data line of integers
    for _ in range(rng.randrange(1, 60)):
        kind = rng.random()
        if kind < 0.08:
            rows.append(rng.choice(["", "# note", "  ", "\r"]))
            continue
        count = width if rng.random() < 0.95 else rng.choice([1, width + 1])
        good = rng.random() < 0.9
        fields = [rng.choice(tokens[:4] if good else tokens) for _ in range(count)]
        row = rng.choice([" ", "\t", " \t "]).join(fields)
        rows.append(rng.choice(["", " "]) + row + rng.choice(["", " ", "\r"]))
    text = "\n".join(rows) + rng.choice(["\n", ""])
    path = tmp_path / "g.txt"
    path.write_bytes(text.encode())
    got = parsed(path)
    truth = reference(text)
    if truth is None:
        assert got is None
    else:
        assert got is not None, text
        assert (got[0].tolist(), got[1].tolist()) == truth
