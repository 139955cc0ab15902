"""Every command on a damaged or foreign database file: one line naming it, never a
traceback.

The files are a small crawl (and an imported graph of integer ids) damaged the ways a
disk, a hand edit or another program damages them: cut short, bytes flipped, a link
array of the wrong length, type or ids, a table or a column missing, text where the
schema says INTEGER, meta values that are not the JSON they must be, another program's
SQLite file.  Every command that takes ``--db`` (read from the parser, so a new one is
covered without editing this file) runs on each: a non-zero exit, exactly one error line
on stderr, naming the file, nothing on stdout, no traceback (a traceback fails the test
by escaping ``main``).  ``crawl --resume`` and ``revisit`` point every host at a closed
port: a damage they missed would show as a crawl, not as a request to the network.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from clirun import run_cli as _run
from crawldb import write_crawl
from webcrawl.crawler.cli import build_parser, main

pytestmark = pytest.mark.timeout(300)

N = 12
LINKS = {i: [(i + 1) % N, (i * 5) % N] for i in range(N // 2)}


def _sql(*statements: str) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        conn = sqlite3.connect(path)
        try:
            for statement in statements:
                conn.execute(statement)
            conn.commit()
        finally:
            conn.close()
    return damage


def _bytes(change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        path.write_bytes(change(path.read_bytes()))
    return damage


def _flip(data: bytes) -> bytes:
    # Flip a run of bytes in the middle of the file: the pages of the tables there.
    mid = len(data) // 2
    return data[:mid] + bytes(b ^ 0xFF for b in data[mid:mid + 4096]) + data[mid + 4096:]


def _foreign(*statements: str) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        path.unlink()
        _sql(*statements)(path)
    return damage


#: Damage -> (what it does to a copy of the crawl, the base it applies to).
DAMAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (_bytes(lambda d: d[: len(d) // 2]), "crawl"),
    "flipped-bytes": (_bytes(_flip), "crawl"),
    "zero-bytes": (_bytes(lambda d: b""), "crawl"),
    "not-sqlite": (_bytes(lambda d: b"not a database at all" * 50), "crawl"),
    # (A || of BLOBs is TEXT in SQLite: the CASTs keep them BLOBs.)
    "links-odd-length": (_sql("UPDATE links SET dst = CAST(dst || X'01' AS BLOB)"
                              " WHERE src = 3"), "crawl"),
    "links-text": (_sql("UPDATE links SET dst = 'hello' WHERE src = 3"), "crawl"),
    "links-integer": (_sql("UPDATE links SET dst = 42 WHERE src = 3"), "crawl"),
    "links-id-too-large": (_sql("UPDATE links SET dst = X'FFFFFF7F' WHERE src = 3"), "crawl"),
    "links-id-negative": (_sql("UPDATE links SET dst = X'FEFFFFFF' WHERE src = 3"), "crawl"),
    "nofollow-odd-length": (_sql("UPDATE links SET nofollow = X'010203' WHERE src = 3"),
                            "crawl"),
    "no-fetches": (_sql("DROP TABLE fetches"), "crawl"),
    "no-links": (_sql("DROP VIEW edges", "DROP TABLE links"), "crawl"),
    "no-urls": (_sql("DROP VIEW edges", "DROP TABLE urls"), "crawl"),
    "no-hosts": (_sql("DROP TABLE hosts"), "crawl"),
    "no-meta": (_sql("DROP TABLE meta"), "crawl"),
    "no-fetches-column": (_sql("ALTER TABLE fetches DROP COLUMN kind"), "crawl"),
    "no-schema-version": (_sql("DELETE FROM meta WHERE key = 'schema_version'"), "crawl"),
    "depth-text": (_sql("UPDATE urls SET depth = 'deep' WHERE id = 4"), "crawl"),
    "host-id-text": (_sql("UPDATE urls SET host_id = 'h' WHERE id = 4"), "crawl"),
    "fetch-seq-text": (_sql("UPDATE fetches SET seq = 'x' WHERE id = 2"), "crawl"),
    "fetch-time-text": (_sql("UPDATE fetches SET ended_at = 'noon' WHERE id = 2"), "crawl"),
    "duplicate-of-nowhere": (_sql("UPDATE urls SET duplicate_of = 999999 WHERE id = 4"),
                             "crawl"),
    "seeds-not-json": (_sql("UPDATE meta SET value = '[oops' WHERE key = 'seeds'"), "crawl"),
    "settings-not-an-object": (_sql("INSERT OR REPLACE INTO meta VALUES ('settings', '[1]')"),
                               "crawl"),
    "foreign-sqlite": (_foreign("CREATE TABLE t (x)", "INSERT INTO t VALUES (1)"), "crawl"),
    "foreign-with-meta": (_foreign("CREATE TABLE meta (key, value)",
                                   "INSERT INTO meta VALUES ('schema_version', '7')"), "crawl"),
    "empty-sqlite": (_foreign("CREATE TABLE t (x)", "DROP TABLE t"), "crawl"),
    "blocks-unequal": (_sql("UPDATE link_blocks SET src = CAST(src || X'00000000' AS BLOB)"),
                       "graph"),
    "blocks-id-too-large": (_sql("UPDATE link_blocks SET dst = CAST(X'FFFFFF7F'"
                                 " || substr(dst, 5) AS BLOB)"), "graph"),
    "blocks-text": (_sql("UPDATE link_blocks SET dst = 'text'"), "graph"),
    "id-ranges-text": (_sql("UPDATE id_ranges SET count = 'many'"), "graph"),
}


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("bases")
    crawl = write_crawl(tmp / "crawl.db", [f"http://a.test/{i}" for i in range(N)], LINKS)
    edges = tmp / "edges.txt"
    edges.write_text("".join(f"{s} {d}\n" for s, ds in LINKS.items() for d in ds))
    graph = tmp / "graph.db"
    assert main(["import", "edges", str(edges), "--db", str(graph), "--quiet"]) == 0
    return {"crawl": crawl, "graph": graph}


@pytest.fixture(scope="module")
def damaged(bases: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
            ) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("damaged")
    files = {}
    for name, (damage, base) in DAMAGES.items():
        files[name] = tmp / f"{name}.db"
        shutil.copy(bases[base], files[name])
        damage(files[name])
    return files


def _commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))
        if any(a.dest == "db" for a in parser._actions) and path[0] != "import":
            found.append((path, parser))  # import writes a new --db: not one to read
    walk(build_parser(), ())
    return list(dict((p, (p, s)) for p, s in found).values())


COMMANDS = _commands()
#: Arguments a command needs besides --db (a plausible value; the damage is what fails).
EXTRA = {
    ("crawl",): ["--resume", "--resolve", "*:80=127.0.0.1:1", "--max-pages", "3"],
    ("revisit",): ["--budget", "50/s", "--max-visits", "2", "--duration", "1",
                   "--resolve", "*:80=127.0.0.1:1"],
    ("export",): ["edges", "--graph", "stored"],
    ("compare",): ["--virtual", "--strategies", "bfs"],
    ("analyze", "sample"): ["--size", "3"],
}


#: Damage -> the only commands that read the damaged part (nofollow arrays: the export
#: of every stored link; the analyses follow nofollow links by default); the others
#: would run as on a sound file, so they are not run on it (a report costs seconds).
READERS: dict[str, set[str]] = {"nofollow-odd-length": {"export"}}
#: Damage -> the commands that may run on it (those that never read the damaged part).
#: Every other command must refuse the file.
MAY_PASS: dict[str, set[str]] = {
    "depth-text": {"export"}, "host-id-text": {"export"}, "fetch-seq-text": {"export"},
    "fetch-time-text": {"export", "crawl"},     # a resume needs no fetch times
    "duplicate-of-nowhere": {"export", "crawl", "revisit"},
}


def test_the_walk_found_every_reading_command() -> None:
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"crawl", "revisit", "report", "export", "compare", "analyze pagerank",
            "analyze sample", "analyze quality", "analyze changes"} <= names
    assert len(names) >= 14


@pytest.mark.parametrize("command", [p for p, _ in COMMANDS], ids=" ".join)
def test_every_damage_is_one_line_naming_the_file(command: tuple[str, ...],
                                                  damaged: dict[str, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    failures = []
    for name, original in damaged.items():
        if command[0] not in READERS.get(name, {command[0]}):
            continue
        db = tmp_path / f"{name}.db"  # a fresh copy: a writer may upgrade what it opens
        shutil.copy(original, db)
        out_file = tmp_path / f"{name}.out"
        argv = [*command, *EXTRA.get(command, []), "--db", str(db), "--quiet"]
        if command in (("export",), ("report",)):
            argv = [*command, *EXTRA.get(command, []), "--db", str(db), "-o", str(out_file),
                    "--quiet"]
        code, out, err = _run(argv, capsys)
        errors = [line for line in err.splitlines() if not line.startswith("webcrawl: note:")]
        if "Traceback" in err or (code != 0 and out):
            failures.append((name, code, err[-300:], out[:100]))
        elif code == 0:
            if command[0] not in MAY_PASS.get(name, set()):
                failures.append((name, "accepted", err[-300:]))
        elif not (len(errors) == 1 and errors[0].startswith("webcrawl") and " error: " in
                  errors[0] and str(db) in errors[0]):
            failures.append((name, code, err[-300:]))
        if code != 0:
            assert not out_file.exists(), "a failed command left its output"
    assert failures == []
