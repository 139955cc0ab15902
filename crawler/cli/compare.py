"""``webcrawl compare``: which crawl ordering finds the important pages first?

A thin layer over :func:`webcrawl.analysis.ordering.compare.compare_crawl`: prints the summary table
(or ``--json``), writes one PNG per metric and ``comparison.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import (
    add_graph_option,
    add_json_option,
    existing_db,
    int_range,
    nonneg_float,
    positive_float,
    positive_int,
    print_json,
    print_table,
    seed_int,
)
from webcrawl.crawler.cli._help import add_deprecated_alias
from webcrawl.crawler.cli._output import end_stages, stage_display
from webcrawl.storage.errors import ConfigError

DEFAULT_STRATEGIES = "bfs,dfs,random,backlink,pagerank,opic"


#: The simulated politeness options of ``--timed``: flag, type, metavar, meaning.
_POLITENESS = [
    ("--connections", positive_int, "C", "requests in flight, one per host"),
    ("--min-delay", nonneg_float, "S", "minimum wait between two requests to a host"),
    ("--delay-factor", nonneg_float, "F", "wait of F times the fetch time"),
    ("--max-delay", nonneg_float, "S", "cap of the wait"),
]


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "compare", help="compare crawl orderings (quality over time, plots)",
        description="Compare how fast crawl orderings capture PageRank and find the top "
                    "pages: replay strategies over one crawl (--virtual) or compare the "
                    "recorded orders of one crawl database per strategy.")
    parser.add_argument("--db", required=True, type=Path, action="append", metavar="PATH",
                        help="crawl database (must exist); repeat it, one per strategy, "
                             "to compare recorded crawls")
    parser.add_argument("--strategies", default=DEFAULT_STRATEGIES, metavar="LIST",
                        help=f"comma-separated strategy names (default {DEFAULT_STRATEGIES})")
    parser.add_argument("--virtual", action="store_true",
                        help="replay each strategy over the graph captured in the one --db "
                             "(no network); its recorded order is added as 'recorded', "
                             "and the ceiling 'ideal' (the fetchable pages by final "
                             "PageRank, which no crawler can run) as a reference line")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="write one PNG per metric and comparison.json here")
    parser.add_argument("--slices", type=int_range(1, 10**6), default=20, metavar="K",
                        help="cut each crawl into K slices of equal page counts (default 20)")
    parser.add_argument("--checkpoints", type=int_range(0, 10**6), default=10, metavar="C",
                        help="partial-graph PageRank checkpoints for the top-N overlap "
                             "(default 10; 0 skips it)")
    parser.add_argument("--remote-only", action="store_true",
                        help="PageRank over links between different hosts only")
    parser.add_argument("--max-fetches", "--max-pages", dest="max_pages", type=positive_int,
                        metavar="N",
                        help="stop virtual crawls after N URLs fetched, as crawl's "
                             "--max-fetches counts them (default: the whole fetchable set, "
                             "the URLs the recorded crawl got an answer for)")
    parser.add_argument("--random-seed", dest="seed", type=seed_int, default=0, metavar="N",
                        help="random seed of randomised strategies (default 0)")
    parser.add_argument("--strategy-opt", action="append", default=[],
                        metavar="[NAME.]KEY=VALUE",
                        help="an option of the strategies that take KEY (or of strategy NAME "
                             "only), e.g. batch-pagerank.every=500; repeatable")
    parser.add_argument("--history", type=Path, metavar="DB",
                        help="the previous crawl database the historical ordering ranks by")
    parser.add_argument("--timed", action="store_true",
                        help="replay in simulated time under politeness: per-time capture "
                             "and each ordering's simulated duration (--virtual)")
    for flag, kind, metavar, what in _POLITENESS:
        parser.add_argument(flag, type=kind, metavar=metavar,
                            help=f"simulated {what} (default: the recorded crawl's)")
    add_transfer_options(parser)
    add_deprecated_alias(parser, "--seed", "--random-seed")
    add_graph_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run)


#: The transfer-time model's options of ``--timed``: flag, type, metavar, default, meaning.
_TRANSFER = [
    ("--bandwidth", positive_float, "B", 50_000.0,
     "bandwidth: the sites' (median) bandwidth in bytes/s"),
    ("--bandwidth-spread", nonneg_float, "SIGMA", 0.0,
     "bandwidth: draw each site's bandwidth from a log-normal law of that median and "
     "SIGMA (0: every site the median)"),
    ("--latency", nonneg_float, "S", 0.05, "bandwidth: the sites' (median) latency"),
    ("--latency-spread", nonneg_float, "SIGMA", 0.0,
     "bandwidth: log-normal SIGMA of the sites' latencies"),
    ("--page-size", positive_float, "BYTES", 20_000.0,
     "bandwidth: size of pages without a recorded one (after their site's median)"),
    ("--crawler-time", nonneg_float, "S", 0.0,
     "the crawler's own seconds per page, added to every fetch (any model)"),
]


def add_transfer_options(parser: argparse.ArgumentParser, *, model: str = "recorded",
                         **defaults: float) -> None:
    """``--transfer`` and its parameters (:class:`TransferModel`); ``defaults`` by
    destination (``bandwidth_spread=1.0``) replace the usual ones."""
    parser.add_argument("--transfer", choices=("recorded", "constant", "bandwidth"),
                        default=model,
                        help="simulated fetch time of a page: its recorded time "
                             "(milliseconds on loopback), --fetch-time for every page "
                             "(constant), or its site's latency + its size over its "
                             f"site's bandwidth (bandwidth); default {model}")
    parser.add_argument("--fetch-time", type=nonneg_float, default=0.5, metavar="S",
                        help="constant: every page's fetch seconds; recorded: the time of "
                             "pages nothing was measured for (an imported graph; "
                             "default 0.5)")
    for flag, kind, metavar, default, what in _TRANSFER:
        default = defaults.get(flag[2:].replace("-", "_"), default)
        parser.add_argument(flag, type=kind, default=default, metavar=metavar,
                            help=f"{what} (default {default:g})")
    parser.add_argument("--transfer-seed", type=seed_int, default=0, metavar="N",
                        help="seed of the per-site draws (default 0)")


def transfer_model(args: argparse.Namespace) -> Any:
    """The :class:`TransferModel` the options name."""
    from webcrawl.analysis.ordering.transfer import TransferModel

    return TransferModel(args.transfer, seconds=args.fetch_time, bandwidth=args.bandwidth,
                         bandwidth_spread=args.bandwidth_spread, latency=args.latency,
                         latency_spread=args.latency_spread, page_size=args.page_size,
                         crawler_time=args.crawler_time, seed=args.transfer_seed)


def run(args: argparse.Namespace) -> int:
    from webcrawl.analysis.ordering.compare import CompareSettings, compare_crawl
    from webcrawl.analysis.ordering.quality import QualitySettings

    paths = [existing_db(p) for p in args.db]
    if args.timed and not args.virtual:
        raise ConfigError("--timed simulates replays: use it with --virtual")
    settings = CompareSettings(
        quality=QualitySettings(slices=args.slices, checkpoints=args.checkpoints,
                                remote_only=args.remote_only),
        virtual=args.virtual, max_pages=args.max_pages, seed=args.seed, graph=args.graph,
        duplicates=args.duplicates,
        timed=args.timed, connections=args.connections, min_delay=args.min_delay,
        delay_factor=args.delay_factor, max_delay=args.max_delay,
        fetch_seconds=args.fetch_time, transfer=transfer_model(args))
    strategies = strategy_specs(args.strategies.split(","), args.strategy_opt, args.history)
    show = stage_display(args)
    comparison = compare_crawl(paths, strategies, settings=settings, progress=show)
    end_stages(show)
    written = []
    if args.out:  # the report package (plots, scipy.stats): about 2 CPU-seconds to import
        from webcrawl.analysis.report.comparison_files import write_comparison

        written = write_comparison(comparison, args.out)
    if args.json:
        print_json(comparison.to_dict())
    else:
        if comparison.reach is not None:
            print("\n".join(comparison.reach.lines()))
            print()
        headers, rows = comparison.summary_table()
        print_table(headers, rows, title=f"Crawl orderings compared: {comparison.method}")
        print_verdict(comparison)
        for title, nw_headers, nw_rows in comparison.najork_wiener_tables():
            print()
            print_table(nw_headers, nw_rows, title=title)
        for path in written:
            print(f"wrote {path}")
    return 0


def print_verdict(comparison: Any) -> None:
    """The best ordering a crawler can run at 10% of the pages, and the ceilings
    (reference lines, never contestants), each defined."""
    best = comparison.best_ordering()
    if best is not None:
        print(f"best ordering a crawler can run, by PR@10%: {best[0]} ({best[1]:.3f})")
    ceilings = comparison.ceilings()
    if ceilings:
        print("ceilings (reference lines, not orderings a crawler can run):")
        for label, definition in ceilings.items():
            print(f"  {label}: {definition}")


def strategy_specs(names: list[str], opts: list[str], history: Path | None) -> list[str]:
    """Each strategy's spec with the ``--strategy-opt`` options that apply to it.

    ``NAME.KEY=VALUE`` applies to strategy NAME; ``KEY=VALUE`` to every listed strategy
    that has option KEY (one must).  ``--history DB`` is ``historical.history=DB``.
    """
    import webcrawl.analysis.ordering.strategies  # noqa: F401  (registers the built-in ones)
    from webcrawl.analysis.ordering.strategies import get_strategy, parse_spec, strategy_spec

    names = [n.strip() for n in names if n.strip()]
    options: dict[str, dict[str, str]] = {n: {} for n in names}
    given = [*opts, *([f"historical.history={history}"] if history is not None else [])]
    for opt in given:
        key, eq, value = opt.partition("=")
        if not eq or not key:
            raise ConfigError(f"--strategy-opt {opt!r}: [NAME.]KEY=VALUE expected")
        target, dot, key = key.rpartition(".") if "." in key else ("", "", key)
        if dot and target not in options:
            raise ConfigError(f"--strategy-opt {opt!r}: {target!r} is not among the "
                              "strategies compared")
        takers = [n for n in names if (not dot or n == target)
                  and key in get_strategy(parse_spec(n)[0]).OPTIONS]
        if not takers:
            raise ConfigError(f"--strategy-opt {opt!r}: no strategy compared has option "
                              f"{key!r}")
        for name in takers:
            options[name][key] = value
    return [strategy_spec(n, options[n]) for n in names]

