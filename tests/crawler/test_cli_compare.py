"""``webcrawl compare`` and ``webcrawl analyze quality`` on small crawl databases."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from webcrawl.analysis.ordering.virtual import virtual_crawl
from webcrawl.crawler.cli import main
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb
from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow

HOSTS = 3


def write_crawl_db(path, src, dst, n, order, hosts):
    """Write a crawl database as a crawler would: URL ids in discovery order, seed 0.

    Node i of the graph is URL id i; ``order`` lists the fetched nodes.  URLs never
    fetched stay in the frontier.
    """
    out = {u: dst[src == u].tolist() for u in range(n)}

    async def write():
        async with await CrawlStore.open(path) as store:
            for h in range(HOSTS):
                store.add_host(HostRow(id=h, name=f"site{h}.test"))
            seen = {0: -1}
            for seq, u in enumerate(order):
                for v in out[u]:
                    seen.setdefault(v, seq)
            for v, disc in seen.items():
                store.add_url(UrlRow(id=v, url=f"http://site{hosts[v]}.test/p{v}.html",
                                     host_id=int(hosts[v]), depth=0, discovered_seq=disc))
            for seq, u in enumerate(order):
                store.add_fetch(FetchRecord(url_id=u, seq=seq, started_at=1000.0 + seq,
                                            ended_at=1000.5 + seq, outcome=Outcome.FETCHED,
                                            status=200, strategy="bfs"))
                store.add_links(u, out[u])
                store.set_outcome(u, Outcome.FETCHED, seq)

    asyncio.run(write())
    return path


@pytest.fixture(scope="module")
def crawl_db(tmp_path_factory):
    """A bfs crawl of the first 300 pages of a 600-page zipf fixture web."""
    web = FixtureWeb.build(FixtureConfig(model="zipf", pages=600, hosts=HOSTS, seed=3))
    from webcrawl.analysis.graph.captured import CapturedGraph

    full = CapturedGraph.from_edges(web.src, web.dst, web.pages, seeds=[0])
    # Renumber nodes in bfs discovery order, like a crawler assigning URL ids.
    crawl = virtual_crawl(full, "bfs", max_pages=300)
    ids = np.full(web.pages, -1)
    ids[crawl.discovery] = np.arange(crawl.discovery.size)
    keep = ids[web.src] >= 0
    src, dst = ids[web.src[keep]], ids[web.dst[keep]]
    known = ids >= 0
    hosts = np.empty(crawl.discovery.size, dtype=np.int64)
    hosts[ids[known]] = web.host_of[known]
    order = ids[crawl.order]
    path = tmp_path_factory.mktemp("db") / "crawl.db"
    return write_crawl_db(path, src, dst, int(known.sum()), order.tolist(), hosts)


def test_compare_virtual_prints_table_and_writes_plots(crawl_db, tmp_path, capsys):
    out = tmp_path / "plots"
    code = main(["compare", "--db", str(crawl_db), "--strategies", "bfs,dfs,random",
                 "--virtual", "--out", str(out), "--slices", "5"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = captured.out.splitlines()
    assert lines[0].startswith("fetchable set: 300 of ")  # the crawl's reach, then why not
    assert lines[1].startswith("  excluded: ") and "never reached" in lines[1]
    at = lines.index("") + 1
    assert lines[at].startswith("Crawl orderings compared: virtual crawls")
    assert "graph of fetched pages: 300 pages" in lines[at]
    assert lines[at + 1].split()[:4] == ["strategy", "pages", "PR@1%", "PR@10%"]
    # The orderings a crawler can run, then the ceiling, labelled, defined and never
    # named best.
    assert [line.split()[0] for line in lines[at + 3:at + 8]] == ["recorded", "bfs", "dfs",
                                                                   "random", "ideal"]
    assert lines[at + 7].startswith("ideal (ceiling) ")
    summary = {line.split()[0]: float(line.split()[3]) for line in lines[at + 3:at + 7]}
    best = max(summary, key=summary.__getitem__)
    assert lines[at + 8] == (f"best ordering a crawler can run, by PR@10%: {best} "
                             f"({summary[best]:.3f})")
    assert lines[at + 9] == "ceilings (reference lines, not orderings a crawler can run):"
    assert lines[at + 10].startswith("  ideal: the fetchable pages in decreasing final PageRank")
    assert "Average slice on which the top-N pages were fetched" in captured.out
    assert sorted(p.name for p in out.iterdir()) == sorted([
        "comparison.json", "discovery_rate.png", "mean_pagerank.png",
        "pagerank_capture.png", "sink_fraction.png", "top_n_fetched.png",
        "top_n_overlap.png"])
    assert "virtual crawl: dfs" in captured.err  # progress on stderr
    data = json.loads((out / "comparison.json").read_text())
    assert list(data["ceilings"]) == ["ideal"]
    assert data["best_ordering"]["name"] == best
    # Over the crawled graph, a virtual bfs replays the recorded bfs crawl.
    assert data["summary"]["bfs"] == data["summary"]["recorded"]
    assert len(data["reports"]["bfs"]["slice_ends"]) == 5


def test_compare_json(crawl_db, capsys):
    code = main(["compare", "--db", str(crawl_db), "--strategies", "bfs,backlink",
                 "--virtual", "--json", "--checkpoints", "2", "--remote-only"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["summary"]) == ["recorded", "ideal", "bfs", "backlink"]
    report = data["reports"]["backlink"]
    assert report["remote_only"] is True
    assert len(report["checkpoint_pages"]) == 2
    assert 0 < data["summary"]["backlink"]["captured_at_50pct"] <= 1


def test_compare_recorded_needs_one_db_per_strategy(crawl_db, capsys):
    code = main(["compare", "--db", str(crawl_db), "--strategies", "bfs,dfs"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and "one --db per strategy" in err
    code = main(["compare", "--db", str(crawl_db), "--db", str(crawl_db),
                 "--strategies", "bfs,dfs"])
    out = capsys.readouterr().out
    assert code == 0 and "recorded crawl orders" in out


def test_compare_bad_numbers_are_one_line_usage_errors(crawl_db, capsys):
    for argv in (["--slices", "0"], ["--checkpoints", "-1"]):
        with pytest.raises(SystemExit) as exc:
            main(["compare", "--db", str(crawl_db), "--virtual", *argv])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and argv[0] in err and err.count("\n") == 1


@pytest.mark.parametrize(("argv", "message"), [
    (["--db", "missing.db", "--virtual"], "no crawl database at missing.db"),
    (["--strategies", "bfs,nosuch", "--virtual"], "unknown strategy 'nosuch'"),
], ids=["missing-db", "unknown-strategy"])
def test_compare_errors_are_one_line(crawl_db, capsys, argv, message):
    if "--db" not in argv:
        argv = ["--db", str(crawl_db), *argv]
    code = main(["compare", *argv])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("webcrawl: error: ") and message in err and err.count("\n") == 1


def test_analyze_quality_table_and_files(crawl_db, tmp_path, capsys):
    out = tmp_path / "q"
    code = main(["analyze", "quality", "--db", str(crawl_db), "--out", str(out),
                 "--slices", "4"])
    text = capsys.readouterr().out
    assert code == 0
    assert text.startswith("Crawl quality of the recorded order, 300 fetches (PageRank of "
                           "the graph of fetched pages: 300 pages")
    assert "Average slice on which the top-N pages were fetched" in text
    assert "PR@10%" in text and "disc.known" in text
    assert (out / "pagerank_capture.png").read_bytes().startswith(b"\x89PNG")
    data = json.loads((out / "quality.json").read_text())
    assert data["pages"] == 300 and len(data["mean_pagerank"]) == 4


def test_analyze_quality_json_by_time(crawl_db, capsys):
    code = main(["analyze", "quality", "--db", str(crawl_db), "--json", "--by", "time",
                 "--slices", "3", "--checkpoints", "0"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    # Fetches end 1 s apart: 300 pages over 299 s in three equal slices.
    assert data["slice_end_seconds"] == pytest.approx([299 / 3, 2 * 299 / 3, 299])
    assert data["slice_ends"] == [100, 200, 300]
    assert data["overlap"] == {}


def test_analyze_quality_missing_db(capsys):
    assert main(["analyze", "quality", "--db", "nope.db"]) == 1
    assert capsys.readouterr().err == "webcrawl: error: no crawl database at nope.db\n"


BAEZA_YATES = "bfs,larger-sites-first,opic,batch-pagerank,partial-pagerank,omniscient"


def _check_ceilings(summary: dict) -> None:
    """Every ordering at or below ideal at every checkpoint; omniscient above bfs at 10%."""
    for name, figures in summary.items():
        for key, value in figures.items():
            if key.startswith("captured_at_") and not key.endswith("_time"):
                assert value <= summary["ideal"][key] + 1e-12, (name, key)
    assert summary["omniscient"]["captured_at_10pct"] > summary["bfs"]["captured_at_10pct"]


def test_compare_the_orderings_of_baeza_yates_on_a_crawl(crawl_db, capsys):
    code = main(["compare", "--db", str(crawl_db), "--virtual", "--strategies", BAEZA_YATES,
                 "--strategy-opt", "every=50", "--json", "--checkpoints", "0"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert list(data["summary"]) == ["recorded", "ideal", "bfs", "larger-sites-first", "opic",
                                     "batch-pagerank?every=50", "partial-pagerank?every=50",
                                     "omniscient"]
    _check_ceilings(data["summary"])
    # Both ceilings are labelled and defined; the best is one a crawler can run.
    assert list(data["ceilings"]) == ["ideal", "omniscient"]
    assert data["ceilings"]["omniscient"].startswith("the frontier ordered by the final")
    runnable = {k: v["captured_at_10pct"] for k, v in data["summary"].items()
                if k not in data["ceilings"]}
    assert data["best_ordering"] == {"metric": "PR@10%", "name": max(runnable, key=runnable.get),
                                     "value": max(runnable.values())}


def test_compare_the_orderings_on_an_imported_edge_list(tmp_path, capsys):
    web = FixtureWeb.build(FixtureConfig(model="zipf", pages=800, hosts=6, seed=5))
    edges = tmp_path / "edges.tsv"
    edges.write_text("".join(f"{a}\t{b}\n" for a, b in zip(web.src, web.dst, strict=True)))
    names = tmp_path / "vertices.tsv"
    names.write_text("".join(f"{p}\thttp://h{web.host_of[p]}.test/p{p}\n"
                             for p in range(web.pages)))
    db = tmp_path / "g.db"
    assert main(["import", "edges", str(edges), "--vertices", str(names), "--db", str(db),
                 "--seed", "http://h0.test/p0"]) == 0
    capsys.readouterr()
    code = main(["compare", "--db", str(db), "--virtual", "--strategies", BAEZA_YATES,
                 "--strategy-opt", "batch-pagerank.every=100", "--json", "--checkpoints", "0",
                 "--timed", "--connections", "4", "--min-delay", "2", "--fetch-time", "0.25"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert "batch-pagerank?every=100" in data["summary"]
    assert "partial-pagerank" in data["summary"]  # the option named batch-pagerank only
    _check_ceilings(data["summary"])
    clock = data["clock"]
    for name in ("bfs", "larger-sites-first", "omniscient"):
        # 4 connections, 0.25 s a fetch, 2 s between two fetches of one host
        pages = data["summary"][name]["pages"]
        assert clock[name]["seconds"] >= pages * 0.25 / 4
        assert 0 < data["summary"][name]["captured_at_10pct_time"] <= 1


def test_compare_timed_with_one_connection_and_no_waits(crawl_db, capsys):
    # The crawl database timed every fetch at 0.5 s: one connection and no waits take
    # 0.5 s per page, in the untimed order.
    code = main(["compare", "--db", str(crawl_db), "--virtual", "--timed", "--strategies",
                 "bfs,opic", "--connections", "1", "--min-delay", "0", "--delay-factor", "0",
                 "--json", "--checkpoints", "0"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert "1 connection, wait max(0 s, 0 x fetch time) up to 30 s" in data["method"]
    for name in ("bfs", "opic"):
        assert data["clock"][name]["seconds"] == pytest.approx(300 * 0.5)
    code = main(["compare", "--db", str(crawl_db), "--virtual", "--strategies", "bfs,opic",
                 "--json", "--checkpoints", "0"])
    untimed = json.loads(capsys.readouterr().out)
    for name in ("bfs", "opic"):
        assert untimed["reports"][name]["capture"] == data["reports"][name]["capture"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--strategies", "bfs", "--strategy-opt", "every=5"], "no strategy compared has option"),
    (["--strategies", "bfs,batch-pagerank", "--strategy-opt", "dfs.every=5"],
     "'dfs' is not among the strategies compared"),
    (["--strategies", "batch-pagerank", "--strategy-opt", "every=x"], "int expected"),
    (["--strategies", "historical"], "needs a previous crawl"),
    (["--strategies", "bfs", "--timed", "--no-virtual"], "use it with --virtual"),
    (["--strategies", "historical", "--history", "nope.db"], "no previous crawl database"),
], ids=["no-taker", "not-compared", "bad-value", "no-history", "timed-recorded", "missing"])
def test_compare_strategy_option_errors_are_one_line(crawl_db, capsys, argv, message):
    virtual = [] if "--no-virtual" in argv else ["--virtual"]
    argv = [a for a in argv if a != "--no-virtual"]
    code = main(["compare", "--db", str(crawl_db), *virtual, *argv])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("webcrawl: error: ") and message in err and err.count("\n") == 1
