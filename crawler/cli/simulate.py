"""``webcrawl simulate random-web|copying``: random web models beside their papers.

``random-web``: Bennouas and de Montgolfier's random web crawls.

Generates a crawl with :func:`webcrawl.analysis.ordering.randomweb.random_web_crawl` (in- and
out-degrees preset from Zipf laws 2.1 and 2.72, links drawn from the list L at crawl
time, the Unvisited set a queue, stack, heap or uniform), measures it along the crawl
with :func:`webcrawl.analysis.ordering.along.measure_along` and prints each figure of the paper
beside the range the paper reports.  ``--out DIR`` writes ``random_web_along.png``,
``random_web_along.json`` and the crawl's edge list (``random_web.edges``: one
``src<TAB>dst`` line per link, nodes in discovery order), which ``webcrawl fixture
--model randomweb`` serves live.  The figures use the paper's definitions: measures
on the crawled pages (section 4.1; sinks "among crawled pages", figure 13) and (4, 4)
cores of at least four hubs and four authorities (section 5.4).  Labelled
diagnostics follow: sinks and the SCC with the frontier counted in, and the (4, 4)
cores by exact size.

``copying``: Kleinberg, Kumar et al.'s linear-growth copying model (the fixture web's
``copying`` graph): prints the fitted in-degree exponent beside the paper's
(2 - a) / (1 - a), and with ``--cores`` trawls the graph for C(i, j) cores.
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
from webcrawl.crawler.cli.analyze_structure import add_core_options, core_config


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
    _register_copying(models)

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
    from webcrawl.analysis.ordering.randomweb import random_web_crawl
    from webcrawl.analysis.ordering.randomweb_figures import (
        PAPER_CURVES,
        PAPER_RANGES,
        paper_curve,
        sink_readings,
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
    readings = None
    if "sinks" in measures or "bowtie" in measures:
        readings = sink_readings(web.graph, along.pages.tolist())
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
    if readings is not None:
        result["readings"] = readings.to_dict()
    written: list[Path] = []
    if args.out is not None:
        written = _write(args.out, web, along, result)
    if args.json:
        print_json({**result, "written": [str(p) for p in written]})
        return 0
    print_along(along, PAPER_RANGES,
                title=f"Along the crawl, by the paper's definitions (columns: pages "
                      f"crawled; model n = {args.pages}, {int(np.sum(web.graph.crawled))} "
                      f"crawled, {web.graph.n} discovered)")
    curves = [[f"{k}: paper fit", *(_fmt(v) for v in c["at_pages"]), c["source"], ""]
              for k, c in result["paper_curves"].items()]
    if curves:
        print_table(["paper's fitted law", *(str(p) for p in along.pages.tolist()), "source",
                     ""], curves, title="The paper's fitted laws at the same crawl sizes "
                                        "(extrapolated below about 1e5 pages)")
    if readings is not None:
        print_readings(readings, PAPER_RANGES, along.values.get("cores44_exact"))
    for path in written:
        print(f"wrote {path}")
    return 0


def print_readings(readings: Any, ranges: dict[str, tuple[float, float, str]],
                   exact_cores: Any = None) -> None:
    """Diagnostics beside the paper's figures: sinks and SCC with the frontier counted
    in, and the (4, 4) cores by exact size (``exact_cores``, per checkpoint)."""
    rows = []
    for key, label in (("sinks", "sinks"), ("scc", "SCC")):
        values = getattr(readings, f"{key}_frontier").tolist()
        rows.append([f"{label}, crawled + frontier", *(_fmt(v) for v in values),
                     _range_text(key, ranges)])
    rows.append(["frontier pages", *(str(v) for v in readings.frontier.tolist()), ""])
    if exact_cores is not None:
        rows.append(["cores44, exactly 4 and 4", *(_fmt(v) for v in exact_cores.tolist()),
                     _range_text("cores44", ranges)])
    print()
    print_table(["diagnostic", *(str(p) for p in readings.pages.tolist()), "Bennouas"],
                rows, title="Diagnostics, not the paper's definitions (columns: pages "
                            "crawled): sinks and SCC with the frontier (discovered, not "
                            "crawled) counted in, and (4,4) cores of exactly 4 fans and 4 "
                            "centers; the table above is the reproduction (crawled pages "
                            "only, section 4.1; cores of at least 4 and 4, section 5.4)")


#: Diagnostics of :func:`measure_along` shown apart from the paper's figures.
DIAGNOSTICS = ("cores44_exact",)


def print_along(along: Any, ranges: dict[str, tuple[float, float, str]], *,
                title: str) -> None:
    """One row per measured quantity, one column per checkpoint, then the paper's range
    (the paper's definitions only; :data:`DIAGNOSTICS` are printed apart)."""
    rows = [[k, *(_fmt(v) for v in values.tolist()), _range_text(k, ranges),
             _verdict(values[-1], k, ranges)] for k, values in along.values.items()
            if k not in DIAGNOSTICS]
    print_table(["quantity", *(str(p) for p in along.pages.tolist()), "Bennouas",
                 "last in range"], rows, title=title)


def _write(out: Path, web: Any, along: Any, result: dict[str, Any]) -> list[Path]:
    import numpy as np
    from webcrawl.analysis.ordering.randomweb_figures import PAPER_RANGES
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


def _register_copying(models: Any) -> None:
    cp = models.add_parser(
        "copying", help="Kumar et al.'s copying model: in-degree law and cores",
        description="Grow Kleinberg, Kumar et al.'s linear copying model ('The Web as a "
                    "graph'): each new page picks a uniform older prototype; each of its "
                    "D links is, with probability a, a uniform older page, else the "
                    "prototype's link in the same position (D = 1 is the paper's simple "
                    "model).  Prints the fitted in-degree exponent beside the predicted "
                    "(2 - a) / (1 - a); --cores also trawls it for C(i, j) cores.")
    cp.add_argument("--pages", type=int_at_least(2), default=1_000_000, metavar="N",
                    help="pages (default 1000000)")
    cp.add_argument("--alpha", type=float_range(0.0, 1.0, low_open=True, high_open=True),
                    default=0.1, metavar="A",
                    help="probability a that a link is uniform rather than copied "
                         "(default 0.1: predicted exponent 2.11)")
    cp.add_argument("--out-degree", type=positive_int, default=7, metavar="D",
                    help="links per new page (default 7; 1: the paper's simple model)")
    cp.add_argument("--cores", action="store_true",
                    help="also count C(i, j) cores (webcrawl analyze cores on this graph)")
    add_core_options(cp, smallest=3, largest=6, prefix="with --cores: ")
    cp.add_argument("--random-seed", dest="seed", type=seed_int, default=0, metavar="N",
                    help="random seed (default 0)")
    cp.add_argument("--out", type=Path, metavar="DIR",
                    help="write the graph's edge list (copying.edges) here")
    add_json_option(cp)
    cp.set_defaults(func=run_copying)


def run_copying(args: argparse.Namespace) -> int:
    import sys
    import time

    import numpy as np
    import scipy.sparse as sp
    from webcrawl.analysis.graph.cores import bipartite_cores
    from webcrawl.analysis.graph.degree_dist import fit_power_law
    from webcrawl.crawler.cli._common import check_output
    from webcrawl.fixtures.config import FixtureConfig
    from webcrawl.fixtures.models import assign_hosts, generate_edges

    config_of_cores = core_config(args) if args.cores else None
    if args.out is not None:
        check_output(args.out, folder=True)
    n, a = args.pages, args.alpha
    config = FixtureConfig(model="copying", pages=n, hosts=1, seed=args.seed,
                           copy_alpha=a, copy_out_degree=args.out_degree)
    rng = np.random.default_rng(args.seed)
    print(f"copying model: n = {n}, a = {a}, {args.out_degree} links per page",
          file=sys.stderr)
    src, dst = generate_edges(config, assign_hosts(config, rng), rng)
    in_deg = np.bincount(dst, minlength=n)
    fit = fit_power_law(in_deg)
    predicted = (2.0 - a) / (1.0 - a)
    result: dict[str, Any] = {
        "model": {"pages": n, "links": int(src.size), "alpha": a,
                  "out_degree": args.out_degree, "seed": args.seed},
        "in_degree": {"exponent": fit.alpha, "sigma": fit.sigma, "x_min": fit.x_min,
                      "tail": fit.n_tail, "ks": fit.ks, "predicted": predicted,
                      "source": "Kleinberg, Kumar et al., 'The Web as a graph', "
                                "copying model: in-degree law i^-(2-a)/(1-a)"}}
    cores = None
    if config_of_cores is not None:
        t0 = time.perf_counter()
        adj = sp.csr_array((np.ones(src.size), (src, dst)), shape=(n, n))
        cores = bipartite_cores(adj, config_of_cores)
        result["cores"] = {"i": cores.i_values, "j": cores.j_values, "counts": cores.counts,
                           "maximal": cores.maximal, "cores": cores.cores,
                           "generated": cores.generated, "links": cores.links,
                           "pruned_links": cores.pruned_links,
                           "residual_links": cores.residual_links,
                           "seconds": time.perf_counter() - t0}
    written: list[Path] = []
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        edges = args.out / "copying.edges"
        np.savetxt(edges, np.column_stack([src, dst]), fmt="%d", delimiter="\t",
                   header=f"copying model: {n} nodes, a = {a}, node 0 the oldest page",
                   comments="# ")
        written.append(edges)
    if args.json:
        print_json({**result, "written": [str(p) for p in written]})
        return 0
    print_table(["quantity", "ours", "paper"],
                [["in-degree exponent", f"{fit.alpha:.3f} +- {fit.sigma:.3f} "
                  f"(x_min {fit.x_min}, {fit.n_tail} pages)", f"{predicted:.3f}"]],
                title=f"Copying model, n = {n}, a = {a}, {args.out_degree} links per page "
                      f"({src.size} links): in-degree law against (2 - a) / (1 - a)")
    if cores is not None:
        from webcrawl.crawler.cli.analyze_structure import print_core_tables

        print()
        print_core_tables(cores, f"the copying graph ({result['cores']['seconds']:.0f} s)")
    for path in written:
        print(f"wrote {path}")
    return 0
