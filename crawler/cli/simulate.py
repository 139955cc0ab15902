"""``webcrawl simulate random-web``: Bennouas and de Montgolfier's random web crawls.

Generates a crawl with :func:`webcrawl.analysis.ordering.randomweb.random_web_crawl` (in- and
out-degrees preset from Zipf laws 2.1 and 2.72, links drawn from the list L at crawl
time, the Unvisited set a queue, stack, heap or uniform), measures it along the crawl
with :func:`webcrawl.analysis.ordering.along.measure_along` and prints each figure of the paper
beside the range the paper reports.  ``--out DIR`` writes ``random_web_along.png``,
``random_web_along.json`` and the crawl's edge list (``random_web.edges``: one
``src<TAB>dst`` line per link, nodes in discovery order), which ``webcrawl fixture
--model randomweb`` serves live.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import (
    add_json_option,
    float_range,
    int_at_least,
    positive_int,
    print_json,
    print_table,
    seed_int,
)
from webcrawl.crawler.cli._help import add_deprecated_alias


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "simulate", help="simulate crawls of random graph models (random-web)",
        description="Simulated crawls of random web models.")
    models = parser.add_subparsers(dest="model", metavar="MODEL")
    rw = models.add_parser(
        "random-web", help="Bennouas and de Montgolfier's random web crawls",
        description="Crawl a random web model as it grows (Bennouas and de Montgolfier): "
                    "pages and links appear as the crawl discovers them, and the crawled "
                    "graph is measured at log-spaced checkpoints.")
    rw.add_argument("--pages", type=int_at_least(2), default=1_000_000, metavar="N",
                    help="model size n, the largest possible crawl (default 1000000)")
    rw.add_argument("--crawl", type=positive_int, default=10_000, metavar="K",
                    help="pages to crawl (default 10000: 1%% of n; the paper finds results "
                         "most realistic below 30%%)")
    rw.add_argument("--strategy", choices=("BFS", "DFS", "DEG", "RND"), default="BFS",
                    help="the Unvisited set: queue, stack, heap by in-degree, uniform "
                         "(default BFS)")
    rw.add_argument("--seeds", type=positive_int, default=1, metavar="S",
                    help="start pages (default 1)")
    rw.add_argument("--gamma-in", type=float_range(1.0, 100.0, low_open=True), default=2.1,
                    metavar="G",
                    help="in-degree Zipf exponent (default 2.1, Broder et al.)")
    rw.add_argument("--gamma-out", type=float_range(1.0, 100.0, low_open=True), default=2.72,
                    metavar="G",
                    help="out-degree Zipf exponent (default 2.72)")
    rw.add_argument("--min-out-degree", type=positive_int, default=3, metavar="D",
                    help="smallest preset out-degree (default 3; 1 is the literal law, "
                         "whose crawls die out)")
    rw.add_argument("--degree-law", choices=("sampled", "counts"), default="sampled",
                    help="degrees drawn independently from the Zipf law (sampled, default) "
                         "or exactly k/d^gamma pages of degree d, the paper's definition "
                         "(counts, section 2.2)")
    rw.add_argument("--checkpoints", type=int_at_least(2), default=8, metavar="C",
                    help="log-spaced measurement points (default 8)")
    rw.add_argument("--measures", default="all", metavar="LIST",
                    help="comma-separated subset of degrees,sinks,discovery,bowtie,cores,"
                         "clustering,pagerank (default all)")
    rw.add_argument("--random-seed", dest="seed", type=seed_int, default=0, metavar="N",
                    help="random seed (default 0)")
    add_deprecated_alias(rw, "--seed", "--random-seed")
    rw.add_argument("--out", type=Path, metavar="DIR",
                    help="write the figure, the JSON and the crawl's edge list here")
    add_json_option(rw)
    rw.set_defaults(func=run_random_web)

    def usage(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=usage)


def parse_measures(text: str) -> tuple[str, ...]:
    """``"all"`` or a comma-separated list of :data:`analysis.ordering.along.ALONG_MEASURES`."""
    from webcrawl.analysis.ordering.along import ALONG_MEASURES
    from webcrawl.storage.errors import ConfigError

    if text == "all":
        return ALONG_MEASURES
    names = tuple(m.strip() for m in text.split(",") if m.strip())
    unknown = [m for m in names if m not in ALONG_MEASURES]
    if unknown or not names:
        raise ConfigError(f"unknown measure(s) {', '.join(unknown) or text!r}; choose from "
                          f"{', '.join(ALONG_MEASURES)}")
    return names


def run_random_web(args: argparse.Namespace) -> int:
    import sys

    import numpy as np
    from webcrawl.analysis.ordering.along import measure_along
    from webcrawl.analysis.ordering.randomweb import (
        PAPER_CURVES,
        PAPER_RANGES,
        paper_curve,
        random_web_crawl,
    )
    from webcrawl.crawler.cli._common import check_output
    from webcrawl.storage.errors import ConfigError

    measures = parse_measures(args.measures)
    if args.out is not None:
        check_output(args.out, folder=True)
    if args.crawl > args.pages:
        raise ConfigError(f"--crawl {args.crawl} exceeds --pages {args.pages}")
    print(f"random web: n = {args.pages}, {args.strategy} crawl of {args.crawl} pages, "
          f"gamma_in {args.gamma_in}, gamma_out {args.gamma_out}, {args.degree_law} degrees",
          file=sys.stderr)
    web = random_web_crawl(args.pages, args.strategy, max_pages=args.crawl,
                           n_seeds=args.seeds, gamma_in=args.gamma_in,
                           gamma_out=args.gamma_out, min_out_degree=args.min_out_degree,
                           degree_law=args.degree_law, seed=args.seed)
    along = measure_along(web.graph, args.checkpoints, measures)
    result = {"model": {"pages": args.pages, "crawled": int(web.graph.crawled.sum()),
                        "discovered": web.graph.n, "strategy": args.strategy,
                        "gamma_in": args.gamma_in, "gamma_out": args.gamma_out,
                        "min_out_degree": args.min_out_degree, "degree_law": args.degree_law,
                        "seeds": args.seeds,
                        "seed": args.seed},
              "along": along.to_dict(),
              "paper": {k: {"low": lo, "high": hi, "source": src}
                        for k, (lo, hi, src) in PAPER_RANGES.items()},
              "paper_curves": {k: {"source": src,
                                   "at_pages": paper_curve(k, along.pages).tolist()}
                               for k, (_, _, src) in PAPER_CURVES.items()
                               if k in along.values}}
    written: list[Path] = []
    if args.out is not None:
        written = _write(args.out, web, along, result)
    if args.json:
        print_json({**result, "written": [str(p) for p in written]})
        return 0
    print_along(along, PAPER_RANGES,
                title=f"Along the crawl (columns: pages crawled; model n = {args.pages}, "
                      f"{int(np.sum(web.graph.crawled))} crawled, {web.graph.n} discovered)")
    curves = [[f"{k}: paper fit", *(_fmt(v) for v in c["at_pages"]), c["source"], ""]
              for k, c in result["paper_curves"].items()]
    if curves:
        print_table(["paper's fitted law", *(str(p) for p in along.pages.tolist()), "source",
                     ""], curves, title="The paper's fitted laws at the same crawl sizes "
                                        "(extrapolated below about 1e5 pages)")
    for path in written:
        print(f"wrote {path}")
    return 0


def print_along(along: Any, ranges: dict[str, tuple[float, float, str]], *,
                title: str) -> None:
    """One row per measured quantity, one column per checkpoint, then the paper's range."""
    rows = [[k, *(_fmt(v) for v in values.tolist()), _range_text(k, ranges),
             _verdict(values[-1], k, ranges)] for k, values in along.values.items()]
    print_table(["quantity", *(str(p) for p in along.pages.tolist()), "Bennouas",
                 "last in range"], rows, title=title)


def _write(out: Path, web: Any, along: Any, result: dict[str, Any]) -> list[Path]:
    import numpy as np
    from webcrawl.analysis.ordering.randomweb import PAPER_RANGES
    from webcrawl.analysis.report.along_figures import along_figure
    from webcrawl.analysis.report.plots import save_png

    out.mkdir(parents=True, exist_ok=True)
    fits = {k: np.asarray(c["at_pages"]) for k, c in result["paper_curves"].items()}
    png = save_png(along_figure(along, PAPER_RANGES, curves_at=fits,
                                title=f"Random web crawl, n = {result['model']['pages']}, "
                                      f"{result['model']['strategy']}"),
                   out / "random_web_along.png")
    js = out / "random_web_along.json"
    js.write_text(json.dumps(result, indent=2) + "\n")
    coo = web.graph.adjacency.tocoo()
    edges = out / "random_web.edges"
    np.savetxt(edges, np.column_stack([coo.row, coo.col]), fmt="%d", delimiter="\t",
               header=f"random web crawl: {web.graph.n} nodes in discovery order, node 0 the "
                      "first seed", comments="# ")
    return [png, js, edges]


def _fmt(value: float) -> str:
    return "-" if value != value else f"{value:.3g}"


def _range_text(key: str, ranges: dict[str, tuple[float, float, str]]) -> str:
    if key not in ranges:
        return ""
    lo, hi, _ = ranges[key]
    return f"{lo:g}-{hi:g}"


def _verdict(value: float, key: str, ranges: dict[str, tuple[float, float, str]]) -> str:
    if key not in ranges or value != value:
        return ""
    lo, hi, _ = ranges[key]
    return "yes" if lo <= value <= hi else "no"
