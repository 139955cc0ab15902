"""All SQL is parameterised: URLs and page content are data, never code.

A real crawl stores URLs, a robots.txt body and response headers full of SQL
metacharacters (quotes, ``; DROP TABLE``, comments, NUL) and reads them back intact;
a source scan proves that no SQL text in ``storage/`` is built from anything but
reviewed constants (the allow-list below: column names, enum values, integers).
"""

from __future__ import annotations

import ast
import re
import sqlite3
from html import escape
from pathlib import Path

import pytest
import webcrawl.storage
from miniweb import MiniWeb, Page, html, read_db
from webcrawl.crawler.engine import Crawler
from webcrawl.crawler.urls import normalize_url

EVIL = [
    "/it's';DROP TABLE urls;--",
    '/q?x=1";DROP TABLE links;--&y=\'',
    "/p?name=Robert'); DROP TABLE fetches;--",
    "/nul%00byte/x",
    "/semi;colon/'||(SELECT 1)||'",
    "/%27%3B%20DELETE%20FROM%20urls%3B",
]
ROBOTS = ("User-agent: *\nDisallow: /private/'); DROP TABLE hosts; --\n"
          "# \" ' ` ; -- /* */ \x00 NUL and quotes\n")
ETAG = "\"x'; DROP TABLE fetches; --\""
LAST_MODIFIED = "Mon, 01 Jan 2024 00:00:00 GMT'; DELETE FROM urls; --"


async def test_metacharacters_round_trip_through_a_real_crawl(mini_web: MiniWeb,
                                                             tmp_path: Path) -> None:
    base = mini_web.url("site.test", "/")
    mini_web.add("site.test", "/robots.txt", Page(body=ROBOTS, content_type="text/plain"))
    mini_web.add("site.test", "/", Page(body=html(*map(escape, EVIL)), headers={
        "ETag": ETAG, "Last-Modified": LAST_MODIFIED}))
    db = tmp_path / "c.db"
    stats = await Crawler(db, [base], mini_web.settings()).run()
    assert stats.stopped == "done"
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"meta", "hosts", "urls", "fetches", "links"} <= tables
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        (body,) = conn.execute("SELECT robots_body FROM hosts").fetchone()
        etag, last_modified = conn.execute(
            "SELECT etag, last_modified FROM fetches f JOIN urls u ON u.id = f.url_id"
            " WHERE u.url = ?", (base,)).fetchone()
    assert body == ROBOTS
    assert (etag, last_modified) == (ETAG, LAST_MODIFIED)
    data = read_db(db)
    want = {normalize_url(h, base) for h in EVIL}
    assert None not in want
    assert {dst for src, dst in data["edges"] if src == base} == want
    assert want <= {u for u, *_ in data["fetches"]}  # fetched (404) with their rows


# -- source scan --------------------------------------------------------------------

_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|PRAGMA|CREATE|DROP|FROM|WHERE|BEGIN|"
                  r"CASE|WHEN|VALUES)\b")
#: Every expression formatted into SQL text in storage/, reviewed: each is a column
#: name or SQL fragment from our own constants, an enum value, or an int.
ALLOWED = {
    "reader.py": {"column", "where", "source", "text", "', '.join(parts)", "e", "v", "i", "whens",
                  "_code_sql('outcome', tuple((o.value for o in OUTCOMES)))",
                  "_code_sql('kind', tuple((k.value for k in FETCH_KINDS)))"},
    # The schema upgrade: our table names (ADDED_COLUMNS), our script, a constant fragment.
    "store.py": {"CACHE_KIB", "BUSY_TIMEOUT_MS", "schema_sql()", "SCHEMA_VERSION", "created",
                 "int(limit)", "cols", "name", "table", "_LINK_FETCH",
                 "upgrade_script(int(row[0]), columns)"},
    "_sqlite.py": {"SCHEMA_VERSION", "view"},
    # Our schema file, a constant page size and literal column expressions chosen by
    # the kind of names (integer ids, names, URLs with hosts).
    "_edgewrite.py": {"_schema(blocked)", "PAGE_SIZE", "CACHE_KB", "XFER_CACHE_KB", "url_sql",
                      "host_sql"},
}


def _formatted_sql(path: Path) -> list[str]:
    """Expressions formatted into SQL-looking strings (f-strings, %, .format)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.JoinedStr):
            literal = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            if _SQL.search(literal):
                found += [ast.unparse(v.value) for v in node.values
                          if isinstance(v, ast.FormattedValue)]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            if isinstance(node.left, ast.Constant) and _SQL.search(str(node.left.value)):
                found.append(f"% {ast.unparse(node.right)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "format" and isinstance(node.func.value, ast.Constant)
              and _SQL.search(str(node.func.value.value))):
            found.append(f".format {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", sorted(Path(webcrawl.storage.__file__).parent.glob("*.py")),
                         ids=lambda p: p.name)
def test_no_sql_is_built_from_data(path: Path) -> None:
    formatted = set(_formatted_sql(path))
    assert formatted <= ALLOWED.get(path.name, set()), formatted - ALLOWED.get(path.name, set())


def test_the_scan_finds_formatted_sql(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('def f(db, url):\n    db.execute(f"SELECT id FROM urls WHERE url = \'{url}\'")\n'
                   '    db.execute("DELETE FROM urls WHERE url = \'%s\'" % url)\n')
    assert _formatted_sql(bad) == ["url", "% url"]
