"""``webcrawl analyze sample|smallworld|cores``: structure measurements of a crawl's graph.

Thin layers over :func:`webcrawl.analysis.sampling.walks.sample_pages` (with
:func:`analysis.sampling.walks.bias_report`), :func:`analysis.graph.smallworld_alg.smallworld` (and
:func:`webcrawl.analysis.graph.smallworld_alg.smallworld_along_order`) and
:func:`webcrawl.analysis.graph.cores.bipartite_cores`, on the graph loaded by
:func:`webcrawl.analysis.graph.loader.load_graph`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from webcrawl.crawler.cli._common import (
    add_db_option,
    add_graph_option,
    add_json_option,
    add_sites_option,
    existing_db,
    nonneg_int,
    positive_int,
    print_json,
    print_sites,
    print_table,
    seed_int,
)
from webcrawl.crawler.cli._help import add_deprecated_alias
from webcrawl.storage.errors import ConfigError

SAMPLE_METHODS = ("directed", "directed-jump", "undirected", "pagerank", "regular", "plain")


def register(sub: Any) -> None:
    _register_sample(sub)
    _register_smallworld(sub)
    _register_cores(sub)


def _load(args: argparse.Namespace) -> Any:
    from webcrawl.analysis.graph.loader import load_graph

    graph = load_graph(existing_db(args.db), graph=args.graph, duplicates=args.duplicates,
                       sites=args.sites)
    if graph.n == 0:
        raise ConfigError(f"the crawl database {args.db} holds no pages")
    print(f"measuring the {graph.describe()}", file=sys.stderr)
    print_sites(graph)
    return graph


# ------------------------------------------------------------------------ sample


def _register_sample(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "sample", help="sample pages uniformly by random walks, with a bias report",
        description="Draw pages by a random walk on the captured graph (Rusmevichientong "
                    "et al.: directed (links and self-loops, no jumps), directed-jump, "
                    "undirected; Henzinger et al.: pagerank; Bar-Yossef "
                    "et al.: regular; plain: the uncorrected walk) and compare the "
                    "sample's in- and out-degree distributions with the true ones.")
    add_db_option(parser)
    parser.add_argument("--method", choices=SAMPLE_METHODS, default="undirected",
                        help="sampler (default undirected)")
    parser.add_argument("--size", type=positive_int, required=True, metavar="K",
                        help="number of pages to sample")
    parser.add_argument("--burn-in", type=nonneg_int, default=200, metavar="B",
                        help="link traversals per walker before recording (default 200)")
    parser.add_argument("--walk-length", type=positive_int, default=200, metavar="L",
                        help="recorded traversals per walker per round (default 200)")
    parser.add_argument("--walkers", type=positive_int, default=32, metavar="W",
                        help="independent walks run together (default 32)")
    parser.add_argument("--max-rounds", type=positive_int, default=500, metavar="R",
                        help="give up after R rounds of walk-length steps without the "
                             "sample (default 500)")
    parser.add_argument("--visit-estimate", choices=("expected", "counts"),
                        default="expected",
                        help="directed, directed-jump: estimate each page's visit rate "
                             "by expected visits (default: the walk's step "
                             "probabilities from the pages it stood on) or by the "
                             "paper's raw visit counts")
    parser.add_argument("--walk-lengths", metavar="L1,L2,...",
                        help="instead of one sample: the degree bias of a sample at each "
                             "walk length L (link traversals per walker before recording)")
    parser.add_argument("--random-seed", dest="seed", type=seed_int, default=0, metavar="N",
                        help="seed of the random walks (default 0)")
    add_deprecated_alias(parser, "--seed", "--random-seed")
    parser.add_argument("--whole-graph", action="store_true",
                        help="directed: walk the whole graph even when it is not strongly "
                             "connected (the sample is then biased); by default the walk "
                             "runs on the largest strongly connected component")
    parser.add_argument("--show", type=nonneg_int, default=20, metavar="N",
                        help="sampled pages to list (default 20; JSON lists all)")
    add_graph_option(parser)
    add_sites_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run_sample)


def run_sample(args: argparse.Namespace) -> int:
    import numpy as np
    from webcrawl.analysis.sampling.walks import SamplerConfig, bias_report, sample_pages

    config = SamplerConfig(walkers=args.walkers, burn_in=args.burn_in,
                           walk_length=args.walk_length, max_rounds=args.max_rounds,
                           visit_estimate=args.visit_estimate)
    graph = _load(args)
    if args.walk_lengths is not None:
        return _run_walk_lengths(graph, config, args)
    print(f"sampling {args.size} of {graph.n} nodes ({args.method})", file=sys.stderr)
    sample = sample_pages(graph, args.size, args.method, config, seed=args.seed,
                          largest_scc=not args.whole_graph)
    report = bias_report(graph, sample)
    ran_on = {"graph": sample.scope, "pages": int(sample.population.sum()),
              "why": sample.scope_reason}
    in_deg = np.bincount(graph.adjacency.indices, minlength=graph.n)
    out_deg = np.diff(graph.adjacency.indptr)
    if args.json:
        print_json({
            "graph": graph.info(),
            "method": sample.method, "ran_on": ran_on, "size": int(sample.nodes.size),
            "distinct": sample.distinct, "candidates": sample.candidates,
            "traversals": sample.traversals, "visited": sample.visited,
            "sample": [graph.urls[i] for i in sample.nodes.tolist()],
            "bias": dataclasses.asdict(report),
        })
        return 0
    nodes, first, counts = np.unique(sample.nodes, return_index=True, return_counts=True)
    shown = nodes[np.argsort(first)][:args.show]
    times = dict(zip(nodes.tolist(), counts.tolist(), strict=True))
    print_table(["url", "times", "in", "out"],
                [[graph.urls[i], times[i], int(in_deg[i]), int(out_deg[i])]
                 for i in shown.tolist()],
                title=f"{sample.method} sample of the {graph.describe()}, walked on "
                      f"{sample.scope}"
                      + (f" ({sample.scope_reason})" if sample.scope_reason else "")
                      + f": {sample.nodes.size} drawn, {sample.distinct} "
                      f"distinct, {sample.traversals} link traversals"
                      + (f" (first {len(shown)} listed)" if len(shown) < len(nodes) else ""))
    for name, bias in (("in-degree", report.in_degree), ("out-degree", report.out_degree)):
        print()
        _print_bias(name, bias)
    if report.sites is not None:
        print()
        _print_site_bias(report.sites)
    return 0


def _print_site_bias(bias: Any) -> None:
    print_table(["site", "true", "sample", "ratio"],
                [[name, float(t), float(d), float(r)]
                 for name, t, d, r in zip(bias.names, bias.true_fraction,
                                          bias.sample_fraction, bias.ratio, strict=True)],
                title=f"sites: share of the pages against share of the sample; chi2 "
                      f"{bias.chi2_statistic:.3g} (p={bias.chi2_pvalue:.3g})")


def _run_walk_lengths(graph: Any, config: Any, args: argparse.Namespace) -> int:
    from webcrawl.analysis.sampling.walk_length import bias_by_walk_length

    try:
        lengths = [int(v) for v in args.walk_lengths.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"--walk-lengths must be integers, got {args.walk_lengths!r}") \
            from None
    reports = bias_by_walk_length(graph, args.size, lengths, args.method, config,
                                  seed=args.seed, largest_scc=not args.whole_graph)
    if args.json:
        print_json({"method": args.method, "size": args.size,
                    "by_walk_length": [{"walk_length": n, "bias": dataclasses.asdict(r)}
                                       for n, r in reports]})
        return 0
    rows = [[n, r.distinct, r.in_degree.sample_mean / max(r.in_degree.true_mean, 1e-300),
             r.in_degree.ks_statistic, r.in_degree.chi2_pvalue,
             r.out_degree.sample_mean / max(r.out_degree.true_mean, 1e-300),
             r.out_degree.ks_statistic] for n, r in reports]
    print_table(["walk length", "distinct", "in mean ratio", "in KS", "in chi2 p",
                 "out mean ratio", "out KS"], rows,
                title=f"{args.method} sampler: degree bias of {args.size} pages against "
                      f"walk length (ratio 1 and KS 0 for a uniform sample)")
    return 0


def _print_bias(name: str, bias: Any) -> None:
    edges = bias.bucket_edges
    rows = []
    for b in range(edges.size - 1):
        if bias.true_fraction[b] == 0 and bias.sample_fraction[b] == 0:
            continue
        label = str(edges[b]) if edges[b + 1] - edges[b] == 1 else \
            f"{edges[b]}-{edges[b + 1] - 1}"
        rows.append([label, float(bias.true_fraction[b]), float(bias.sample_fraction[b]),
                     float(bias.ratio[b])])
    print_table([name, "true", "sample", "ratio"], rows,
                title=f"{name}: mean {bias.sample_mean:.4g} in the sample vs "
                      f"{bias.true_mean:.4g} true; KS {bias.ks_statistic:.3g} "
                      f"(p={bias.ks_pvalue:.3g}); chi2 {bias.chi2_statistic:.3g} "
                      f"(p={bias.chi2_pvalue:.3g})")


# -------------------------------------------------------------------- smallworld


def _register_smallworld(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "smallworld", help="clustering, path lengths and diameter",
        description="Clustering coefficient (graph taken as undirected), characteristic "
                    "path length, diameter and distance distribution (directed and "
                    "undirected) from sampled BFS sources; optionally along the crawl "
                    "order.")
    add_db_option(parser)
    parser.add_argument("--sources", type=nonneg_int, default=100, metavar="K",
                        help="BFS sources (default 100; 0: every page, exact)")
    parser.add_argument("--along-order", type=nonneg_int, default=0, metavar="C",
                        help="also measure the first k crawled pages at C checkpoints")
    parser.add_argument("--random-seed", dest="seed", type=seed_int, default=0, metavar="N",
                        help="seed of the BFS source sample (default 0)")
    add_deprecated_alias(parser, "--seed", "--random-seed")
    add_graph_option(parser)
    add_sites_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run_smallworld)


def run_smallworld(args: argparse.Namespace) -> int:
    from webcrawl.analysis.graph.smallworld_alg import smallworld, smallworld_along_order

    graph = _load(args)
    sources = args.sources or None
    sw = smallworld(graph, sources=sources, seed=args.seed)
    series = None
    if args.along_order:
        series = smallworld_along_order(graph, checkpoints=args.along_order,
                                        sources=sources, seed=args.seed)
    if args.json:
        out = {"graph": graph.info(), "pages": sw.n, "links": sw.m,
               "clustering": {"average": sw.clustering.average,
                              "transitivity": sw.clustering.transitivity},
               "directed": _paths_dict(sw.directed), "undirected": _paths_dict(sw.undirected)}
        if series is not None:
            out["along_order"] = dataclasses.asdict(series)
        print_json(out)
        return 0
    rows = [["average clustering", sw.clustering.average],
            ["transitivity", sw.clustering.transitivity]]
    for label, paths in (("directed", sw.directed), ("undirected", sw.undirected)):
        rows += [[f"{label} path length", paths.characteristic_length],
                 [f"{label} diameter" + ("" if paths.exact else " (lower bound)"),
                  paths.diameter],
                 [f"{label} connected pairs", paths.reachable_fraction]]
    print_table(["measure", "value"], rows,
                title=f"Small world of the {graph.describe()} "
                      f"({sw.directed.sources.size} BFS sources)")
    print()
    dist = sw.undirected.distribution
    dist_d = sw.directed.distribution
    print_table(["distance", "directed pairs", "undirected pairs"],
                [[d, int(dist_d[d]) if d < dist_d.size else 0,
                  int(dist[d]) if d < dist.size else 0]
                 for d in range(1, max(dist.size, dist_d.size))],
                title="Distribution of shortest-path lengths")
    if series is not None:
        print()
        print_table(["pages", "links", "avg clust", "transitivity", "dir len", "dir diam",
                     "undir len", "undir diam"],
                    [[int(series.sizes[k]), int(series.links[k]),
                      float(series.average_clustering[k]), float(series.transitivity[k]),
                      float(series.directed_length[k]), int(series.directed_diameter[k]),
                      float(series.undirected_length[k]), int(series.undirected_diameter[k])]
                     for k in range(series.sizes.size)],
                    title="Along the crawl order (first k crawled pages)")
    return 0


def _paths_dict(paths: Any) -> dict[str, Any]:
    return {"characteristic_length": paths.characteristic_length,
            "diameter": paths.diameter, "exact": paths.exact,
            "reachable_fraction": paths.reachable_fraction,
            "sources": int(paths.sources.size), "distribution": paths.distribution}


# ------------------------------------------------------------------------- cores


def _register_cores(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "cores", help="count (i, j) bipartite cores (trawling)",
        description="Trawl the graph for Kumar et al.'s bipartite cores (elimination "
                    "and generation filters, then the residual enumerated): C(i, j) is "
                    "the number of cores (fans all linking to the same centers, in no "
                    "larger such set) that contain at least one K(i, j): at least i "
                    "fans and j centers.  Also the cores by exact size (maximal).")
    add_db_option(parser)
    add_core_options(parser, smallest=2, largest=4)
    parser.add_argument("--diverse", action="store_true",
                        help="Kumar's diverse cores: ignore same-site links and count "
                             "fans on distinct sites")
    parser.add_argument("--same-host-links", choices=("drop", "keep"), default="drop",
                        help="drop (default, as Kumar et al. trawled: links within a site "
                             "endorse nothing) or keep the links between pages of one "
                             "site (a host, or mirrored hosts: see --sites); kept, a "
                             "site's navigation can make the number of cores "
                             "exponential, and --max-sets ends the run")
    parser.add_argument("--examples", type=nonneg_int, default=5, metavar="N",
                        help="example cores to list (default 5)")
    add_graph_option(parser)
    add_sites_option(parser)
    add_json_option(parser)
    parser.set_defaults(func=run_cores)


def add_core_options(parser: argparse.ArgumentParser, *, smallest: int, largest: int,
                     prefix: str = "") -> None:
    """``--min-i/-j``, ``--max-i/-j`` and ``--max-sets`` of a core count."""
    for bound, default, what in (("min", smallest, "fewest"), ("max", largest, "most")):
        for side, noun in (("i", "fans"), ("j", "centers")):
            parser.add_argument(f"--{bound}-{side}", type=positive_int, default=default,
                                metavar=side.upper(),
                                help=f"{prefix}{what} {noun} of a core "
                                     f"{'tabulated ' if bound == 'max' else ''}"
                                     f"(default {default})")
    parser.add_argument("--max-sets", type=positive_int, default=5_000_000, metavar="N",
                        help=f"{prefix}stop with an error past N cores (default 5000000; "
                             "the time grows with it, the memory does not)")


def core_config(args: argparse.Namespace, *, diverse: bool = False,
                examples: int = 0) -> Any:
    """The :class:`~webcrawl.analysis.graph.cores.CoreConfig` of :func:`add_core_options`."""
    from webcrawl.analysis.graph.cores import CoreConfig

    return CoreConfig(max_i=args.max_i, max_j=args.max_j, min_i=args.min_i,
                      min_j=args.min_j, diverse=diverse, max_sets=args.max_sets,
                      examples=examples)


def run_cores(args: argparse.Namespace) -> int:
    from webcrawl.analysis.graph.cores import bipartite_cores

    config = dataclasses.replace(core_config(args, diverse=args.diverse,
                                             examples=args.examples),
                                 same_host_links=args.same_host_links)
    graph = _load(args)
    cores = bipartite_cores(graph, config)
    examples = [{"fans": [graph.urls[f] for f in core.fans.tolist()],
                 "centers": [graph.urls[c] for c in core.centers.tolist()]}
                for core in cores.examples]
    if args.json:
        print_json({"graph": graph.info(), "diverse": cores.diverse, "links": cores.links,
                    "sites": args.sites,
                    "same_host_links_dropped": cores.same_host_links,
                    "i": cores.i_values, "j": cores.j_values, "counts": cores.counts,
                    "maximal": cores.maximal, "cores": cores.cores,
                    "generated": cores.generated, "pruned_links": cores.pruned_links,
                    "residual_links": cores.residual_links, "examples": examples})
        return 0
    print_core_tables(cores, f"the {graph.describe()}")
    for k, ex in enumerate(examples, 1):
        print(f"\nexample {k}: {len(ex['fans'])} fans -> {len(ex['centers'])} centers")
        for url in ex["centers"]:
            print(f"  center {url}")
        for url in ex["fans"]:
            print(f"  fan    {url}")
    return 0


def print_core_tables(cores: Any, graph_name: str) -> None:
    """The headline C(i, j) table, then the maximal cores by exact size."""
    kind = "diverse cores" if cores.diverse else "cores"
    fans = "fans on distinct sites" if cores.diverse else "fans"
    i_list, j_list = cores.i_values.tolist(), cores.j_values.tolist()
    print_table(["i \\ j", *(str(j) for j in j_list)],
                [[i, *row] for i, row in zip(i_list, cores.counts.tolist(), strict=True)],
                title=f"C(i, j) of {graph_name}: {kind} containing at least one K(i, j) "
                      f"(>= i {fans} all linking to the same >= j centers); "
                      f"{cores.cores} cores, {cores.generated} by the generation filter; "
                      f"{cores.links} links"
                      + (f" ({cores.same_host_links} same-site links dropped)"
                         if cores.same_host_links else "")
                      + f", {cores.pruned_links} after elimination, "
                      f"{cores.residual_links} after generation")
    print()
    print_table(["i \\ j", *(str(j) for j in j_list)],
                [[i, *row] for i, row in zip(i_list, cores.maximal.tolist(), strict=True)],
                title=f"maximal {kind} by exact size: exactly i {fans}, exactly j centers")
