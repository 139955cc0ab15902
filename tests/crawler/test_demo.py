"""``webcrawl demo`` end to end at a small size, in a temporary folder."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from loopspy import expected_loop
from webcrawl.analysis.change import resolve_day_seconds
from webcrawl.analysis.report.document import SECTIONS
from webcrawl.crawler.cli import main
from webcrawl.crawler.cli.demo_job import DemoSettings, run_demo
from webcrawl.storage.errors import ConfigError
from webcrawl.storage.reader import CrawlReader


def test_demo_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                         loops: list[str]) -> None:
    out = tmp_path / "demo"
    code = main(["demo", "--pages", "300", "--hosts", "5", "--random-seed", "2",
                 "--revisit-seconds", "2", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    # Every step announced on stderr, in order.
    steps = re.findall(r"^\[(\d)/(\d)\] ", captured.err, flags=re.MULTILINE)
    assert [int(k) for k, _ in steps] == list(range(1, 10))
    assert "politeness audit by the server: 0 violations" in captured.err
    # The crawl database: a finished bfs crawl of the fixture web, revisited.
    with CrawlReader(out / "crawl.db") as reader:
        urls = reader.urls()
        kinds = reader.fetches()["kind"]
        meta = reader.meta()
    fetched = int(urls.has_outcome("fetched").sum())
    assert meta["strategy"] == "bfs" and fetched > 200 and not urls.in_frontier.any()
    assert (kinds == 1).sum() > 0  # revisit rows
    # The demo's 1 s days are stored, so every analysis reads them back.
    assert resolve_day_seconds(meta) == (1.0, "stored")
    # The summary on stdout names what was found and where the report is.
    lines = captured.out.strip().splitlines()
    said = re.match(rf"crawled {fetched:,} HTML pages \((\d[\d,]*) URLs fetched\) on 5 hosts ",
                    lines[0])
    assert said, lines[0]
    # The URLs fetched: the HTML pages and any other answers.
    assert int(said.group(1).replace(",", "")) >= fetched, lines[0]
    assert lines[0].endswith("politeness audit: 0 violations")
    for needle in ("top page by PageRank", "bow-tie: SCC", "degree laws: in alpha",
                   "PageRank captured after 10%", "median relative error",
                   "freshness over the revisit window"):
        assert any(needle in line for line in lines), needle
    assert lines[-1].startswith(f"report: {out / 'report.html'}")
    html = (out / "report.html").read_text()
    for key in SECTIONS:
        assert f'<section id="{key}">' in html
    # Degree laws against the fixture's configured exponents (the "expected alpha" column).
    assert "<td>2.1</td></tr>" in html and "<td>2.72</td></tr>" in html
    assert "median relative error vs truth" in html
    assert html.count("data:image/png;base64,") >= 14
    # The demo's crawl and revisit ran on the loop every entry point uses.
    assert loops == [expected_loop()] * 2


def test_demo_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "crawl.db").write_bytes(b"precious")
    assert main(["demo", "--pages", "50", "--hosts", "2", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "already exists" in err[0] and "--force" in err[0]
    assert (tmp_path / "crawl.db").read_bytes() == b"precious"


@pytest.mark.parametrize("bad", [{"pages": 0}, {"hosts": 9, "pages": 5}, {"day_seconds": 0.0},
                                 {"audit_gap_fraction": 1.5}],
                         ids=["no-pages", "more-hosts-than-pages", "no-day", "gap-fraction"])
def test_settings_validate_themselves(bad: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        DemoSettings(**bad)  # type: ignore[arg-type]


def test_bad_cli_values_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--pages", "0"])
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_run_demo_library_call_with_force(tmp_path: Path) -> None:
    (tmp_path / "crawl.db").write_bytes(b"old")
    log = io.StringIO()
    result = run_demo(tmp_path, pages=60, hosts=2, revisit_seconds=0, force=True, stream=log)
    assert result.ok and result.db.stat().st_size > 1000
    assert result.report_summary is not None
    assert result.report_summary.missing == ["changes"]
    assert "[8/9] revisiting" in log.getvalue() and "skipped" in log.getvalue()
