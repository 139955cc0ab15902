"""``webcrawl simulate national-web``: the two papers' ordering experiments on a web
shaped like a national crawl.

Generates the web with :func:`webcrawl.analysis.ordering.nationalweb.national_web`,
then runs Baeza-Yates et al.'s comparison in simulated time under politeness
(:func:`webcrawl.analysis.ordering.country.country_comparison`) and Cho,
Garcia-Molina and Page's hot-page comparison
(:func:`webcrawl.analysis.ordering.country.hot_page_comparison`), and prints both
with the transfer-time model and the politeness they ran under.  ``--out DIR`` writes
``national_web.json`` and ``national_web_time.png`` (capture over simulated time).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import (
    add_json_option,
    float_at_least,
    float_range,
    int_at_least,
    nonneg_float,
    positive_int,
    print_json,
    print_table,
    seed_int,
)

#: Baeza-Yates et al.'s orderings (omniscient: a ceiling).
COUNTRY_STRATEGIES = ("bfs,backlink,batch-pagerank,partial-pagerank,opic,"
                      "larger-sites-first,historical,omniscient")
#: Cho, Garcia-Molina and Page's orderings.
CHO_STRATEGIES = "bfs,backlink,pagerank,random"


def register(models: Any) -> None:
    nw = models.add_parser(
        "national-web", help="Baeza-Yates et al.'s and Cho et al.'s ordering experiments "
                             "on a generated national-scale web",
        description="Generate a web shaped like a national crawl (sites of heavy-tailed "
                    "sizes, most links inside a site, log-normal page sizes), replay "
                    "crawl orderings over it in simulated time under politeness "
                    "(Baeza-Yates et al., 'Crawling a country') and one page at a time "
                    "for the hot pages (Cho, Garcia-Molina and Page).")
    nw.add_argument("--sites", type=positive_int, default=5_000, metavar="S",
                    help="sites (default 5000)")
    nw.add_argument("--pages", type=int_at_least(1), default=1_000_000, metavar="N",
                    help="pages (default 1000000)")
    nw.add_argument("--site-exponent", type=float_range(0.0, 100.0, low_open=True),
                    default=1.1, metavar="A",
                    help="Pareto tail index of the site sizes (default 1.1)")
    nw.add_argument("--locality", type=float_range(0.0, 1.0), default=0.9, metavar="F",
                    help="share of the further links that stay inside their site "
                         "(default 0.9)")
    nw.add_argument("--strategies", default=COUNTRY_STRATEGIES, metavar="LIST",
                    help=f"orderings compared in time (default {COUNTRY_STRATEGIES})")
    nw.add_argument("--every", type=positive_int, metavar="K",
                    help="batch- and partial-pagerank recompute every K pages "
                         "(default a tenth of the pages)")
    nw.add_argument("--connections", type=positive_int, default=100, metavar="C",
                    help="simultaneous connections, one per site (default 100)")
    nw.add_argument("--wait", type=nonneg_float, default=15.0, metavar="S",
                    help="seconds between two requests to one site (default 15, the "
                         "WIRE crawler's)")
    nw.add_argument("--horizon", type=float_at_least(0.0, strict=True), metavar="S",
                    help="read the time fractions at shares of S simulated seconds "
                         "(default the longest duration among --strategies; give one "
                         "horizon to runs of different orderings to compare them)")
    nw.add_argument("--cho-strategies", default=CHO_STRATEGIES, metavar="LIST",
                    help=f"orderings of the hot-page comparison (default {CHO_STRATEGIES}; "
                         "'' skips it)")
    nw.add_argument("--hot", type=positive_int, default=100, metavar="G",
                    help="a page is hot when at least G pages link to it (default 100, "
                         "Cho et al.'s)")
    from webcrawl.crawler.cli.compare import add_transfer_options

    add_transfer_options(nw, model="bandwidth", bandwidth_spread=1.0, latency_spread=0.5)
    nw.add_argument("--random-seed", dest="seed", type=seed_int, default=0, metavar="N",
                    help="random seed of the web (default 0)")
    nw.add_argument("--out", type=Path, metavar="DIR",
                    help="write national_web.json and national_web_time.png here")
    add_json_option(nw)
    nw.set_defaults(func=run_national_web)


def run_national_web(args: argparse.Namespace) -> int:
    import numpy as np
    from webcrawl.analysis.graph.pagerank_alg import pagerank
    from webcrawl.analysis.ordering.ceilings import display_label
    from webcrawl.analysis.ordering.country import (
        PAGE_FRACTIONS,
        country_comparison,
        hot_page_comparison,
    )
    from webcrawl.analysis.ordering.nationalweb import NationalWebSettings, national_web
    from webcrawl.analysis.ordering.strategies.oracles import HistoricalPageRank
    from webcrawl.analysis.ordering.timed import SimulatedPoliteness
    from webcrawl.crawler.cli._common import check_output
    from webcrawl.crawler.cli.compare import strategy_specs, transfer_model
    from webcrawl.storage.errors import ConfigError

    if args.out is not None:
        check_output(args.out, folder=True)
    if args.sites > args.pages:
        raise ConfigError(f"--sites {args.sites} exceeds --pages {args.pages}")
    if args.transfer == "recorded":
        raise ConfigError("a generated web has no recorded fetch times: --transfer "
                          "constant or bandwidth")
    settings = NationalWebSettings(sites=args.sites, pages=args.pages,
                                   site_exponent=args.site_exponent,
                                   locality=args.locality, seed=args.seed)
    say = _stderr
    say(f"generating {args.pages:,} pages on {args.sites:,} sites (seed {args.seed})")
    web = national_web(settings)
    graph = web.graph
    scores = np.asarray(pagerank(graph.adjacency, 0.85).scores, dtype=np.float64)
    model = transfer_model(args)
    durations = model.durations(graph, sizes=web.sizes)
    polite = SimulatedPoliteness(args.connections, min_delay=args.wait)
    every = args.every or max(1, args.pages // 10)
    names = [n.strip() for n in args.strategies.split(",") if n.strip()]
    opts = [f"{n}.every={every}" for n in ("batch-pagerank", "partial-pagerank")
            if n in names]
    # historical ranks by the previous snapshot's PageRank, which has no database
    specs = iter(strategy_specs([n for n in names if n != "historical"], opts, None))
    strategies: list[Any] = [HistoricalPageRank.from_scores(web.history)
                             if n == "historical" else next(specs) for n in names]
    runs = country_comparison(graph, strategies, polite, durations, scores,
                              horizon=args.horizon, progress=say)
    cho_names = [n.strip() for n in args.cho_strategies.split(",") if n.strip()]
    largest_home = int(graph.seeds[0])  # the most popular site's home page
    cho = None
    if cho_names:
        from dataclasses import replace

        single = replace(graph, seeds=np.asarray([largest_home], dtype=np.int64))
        cho = hot_page_comparison(single, cho_names, args.hot, progress=say)
    result = {"web": web.to_dict(), "politeness": polite.describe(),
              "transfer": model.to_dict(), "every": every,
              "fractions": list(PAGE_FRACTIONS), "horizon": args.horizon,
              "orderings": {display_label(k): v for k, v in runs.items()},
              "hot_pages": cho}
    written = _write(args.out, result) if args.out is not None else []
    if args.json:
        print_json({**result, "written": [str(p) for p in written]})
        return 0
    _print(result)
    for path in written:
        print(f"wrote {path}")
    return 0


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _print(result: dict[str, Any]) -> None:
    pct = [f"{f:.0%}" for f in result["fractions"]]
    print(result["web"]["description"])
    print(f"politeness: {result['politeness']}; {result['transfer']['description']}")
    rows = [[label, *(f"{v:.3f}" for v in run["pages"]),
             *([f"{v:.3f}" for v in run["time"]] or ["-"] * len(pct)),
             "-" if run["seconds"] != run["seconds"] else f"{run['seconds'] / 86400:.2f}"]
            for label, run in result["orderings"].items()]
    horizon = ("the longest simulated duration" if result["horizon"] is None
               else f"{result['horizon']:,g} simulated seconds")
    print_table(["ordering", *(f"PR@{p} pages" for p in pct),
                 *(f"PR@{p} time" for p in pct), "days"], rows,
                title="Baeza-Yates et al.: PageRank captured after a share of the pages "
                      f"and of {horizon}")
    cho = result["hot_pages"]
    if cho:
        rows = [[label, *(f"{v:.3f}" for v in values)]
                for label, values in [*cho["orderings"].items(),
                                      ("ideal (ceiling)", cho["ideal (ceiling)"])]]
        print()
        print_table(["ordering", *(f"hot@{p}" for p in pct)], rows,
                    title=f"Cho, Garcia-Molina and Page: share of the {cho['hot']:,} hot "
                          f"pages (at least {cho['threshold']} pages link in) crawled "
                          "after a share of the pages, from the most popular site's "
                          "home page, one page at a time")


def _write(out: Path, result: dict[str, Any]) -> list[Path]:
    from webcrawl.analysis.report.plots import Panel, line_figure, save_png

    out.mkdir(parents=True, exist_ok=True)
    js = out / "national_web.json"
    js.write_text(json.dumps(result, indent=2) + "\n")
    curves = {label: (run["hours"], run["capture"])
              for label, run in result["orderings"].items() if run["hours"]}
    fig = line_figure([Panel("PageRank captured over simulated time", "simulated hours",
                             "share of PageRank", curves, ylim=(0.0, 1.0))],
                      title=f"{result['web']['description']}\n{result['politeness']}; "
                            f"{result['transfer']['description']}")
    return [save_png(fig, out / "national_web_time.png"), js]
