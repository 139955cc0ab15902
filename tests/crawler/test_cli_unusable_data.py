"""Commands on data they cannot use: one clear line on stderr, exit 1, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from crawldb import write_crawl
from webcrawl.crawler.cli import main


@pytest.fixture
def never_revisited(tmp_path: Path) -> Path:
    urls = [f"http://a.test/p{i}.html" for i in range(4)]
    return write_crawl(tmp_path / "crawl.db", urls, {0: [1, 2], 1: [3], 2: [0], 3: [0]})


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    edges = tmp_path / "e.txt"
    edges.write_text("1 2\n2 3\n3 1\n")
    db = tmp_path / "imported.db"
    assert main(["import", "edges", str(edges), "--db", str(db), "--json"]) == 0
    return db


@pytest.mark.parametrize(("db_name", "argv", "needle"), [
    ("never_revisited", ["analyze", "changes"], "was never revisited"),
    ("never_revisited", ["export", "rates"], None),
    ("imported", ["analyze", "changes"], "no fetch with an HTTP answer"),
    ("imported", ["revisit", "--budget", "10", "--duration", "1"], "nothing to revisit"),
], ids=["changes-without-revisits", "rates-without-revisits", "changes-of-imported-graph",
        "revisit-imported-graph"])
def test_one_line_and_exit_1(db_name: str, argv: list[str], needle: str | None,
                             request: pytest.FixtureRequest,
                             capsys: pytest.CaptureFixture[str]) -> None:
    db: Path = request.getfixturevalue(db_name)
    capsys.readouterr()
    code = main([*argv, "--db", str(db)])
    err = capsys.readouterr().err
    if needle is None:  # rates of a crawl without revisits: a table of unknown rates is fine
        assert code == 0 and "Traceback" not in err
        return
    errors = [line for line in err.splitlines() if line.startswith("webcrawl: error:")]
    assert code == 1 and len(errors) == 1 and needle in errors[0], err
    assert "Traceback" not in err
