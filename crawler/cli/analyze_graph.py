"""``webcrawl analyze pagerank|hits|bowtie|degrees``: link-graph measurements of a crawl.

Each topic loads the graph with :func:`analysis.graph.loader.load_graph` and calls one library
function (:func:`analysis.graph.pagerank_alg.pagerank`, :func:`analysis.graph.hits_alg.hits`,
:func:`analysis.graph.bowtie_alg.bowtie`, :func:`webcrawl.analysis.graph.degree_dist.degree_laws`);
URLs are attached
here, at the edge.  Tables by default, ``--json`` for scripts.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Literal

from webcrawl.crawler.cli._common import (
    add_db_option,
    add_graph_option,
    add_json_option,
    add_sites_option,
    existing_db,
    float_range,
    nonneg_int,
    positive_int,
    print_json,
    print_sites,
    print_table,
)
from webcrawl.storage.errors import ConfigError

DEFAULT_TOP = 20


def register(sub: Any) -> None:
    pagerank = _topic(sub, "pagerank", "PageRank of every page (top K shown)",
                      "PageRank by power iteration (damping, L1 stopping rule).")
    pagerank.add_argument("--alpha", type=float_range(0.0, 1.0, low_open=True, high_open=True),
                          default=0.85,
                          help="damping factor (default 0.85)")
    pagerank.add_argument("--tol", type=float_range(0.0, 1.0, low_open=True), default=1e-10,
                          help="stop when the L1 change is below this (default 1e-10)")
    pagerank.add_argument("--mean", action="store_true",
                          help="scale scores so the average page scores 1 (Najork-Wiener)")
    pagerank.set_defaults(func=run_pagerank)

    hits = _topic(sub, "hits", "hub and authority scores (Kleinberg)",
                  "HITS hubs and authorities by power iteration (top K of each shown).")
    hits.add_argument("--tol", type=float_range(0.0, 1.0, low_open=True), default=1e-10,
                      help="stop when the L1 change is below this (default 1e-10)")
    hits.set_defaults(func=run_hits)

    bowtie = _topic(sub, "bowtie", "bow-tie decomposition (SCC, IN, OUT, ...)",
                    "Broder et al.'s bow-tie: the largest SCC and the regions around it.")
    bowtie.set_defaults(func=run_bowtie)

    degrees = _topic(sub, "degrees", "degree distributions and power-law exponents",
                     "In- and out-degree laws, exponents by discrete MLE with x_min "
                     "chosen by Kolmogorov-Smirnov distance (Clauset et al.).")
    degrees.add_argument("--min-tail", type=positive_int, default=50, metavar="N",
                         help="smallest tail a power-law fit may use (default 50)")
    degrees.set_defaults(func=run_degrees)


def _topic(sub: Any, name: str, help_text: str, description: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text,
                                                     description=description)
    add_db_option(parser)
    parser.add_argument("--remote-only", action="store_true",
                        help="only links between different sites (Najork and Wiener; "
                             "mirrored hosts are one site unless --sites hosts)")
    add_graph_option(parser)
    add_sites_option(parser)
    parser.add_argument("--top", type=nonneg_int, default=DEFAULT_TOP, metavar="K",
                        help=f"rows to show (default {DEFAULT_TOP})")
    add_json_option(parser)
    return parser


def _load(args: argparse.Namespace) -> Any:
    return _load_source(args)[0]


def _load_source(args: argparse.Namespace) -> tuple[Any, Any]:
    """The graph the options name, and where it came from (a ``GraphSource``)."""
    from webcrawl.analysis.graph.kept import load_source_graph

    if args.top < 1:
        raise ConfigError(f"--top must be at least 1, got {args.top}")
    path = existing_db(args.db)
    started = time.perf_counter()
    graph, source = load_source_graph(path, graph=args.graph, remote_only=args.remote_only,
                                      duplicates=args.duplicates, sites=args.sites)
    print(f"loaded the {graph.describe()} in {time.perf_counter() - started:.2f} s",
          file=sys.stderr)
    print_sites(graph)
    return graph, source


def _graph_info(graph: Any, args: argparse.Namespace) -> dict[str, Any]:
    return {"db": str(args.db), "graph": graph.info(), "nodes": graph.n, "links": graph.m,
            "remote_only": args.remote_only, "sites": args.sites}


#: Scores equal to this many significant digits are ties, ranked by URL: the order of a
#: table must not depend on node numbering (the crawl's discovery order), and power
#: iteration leaves equal scores unequal in their last bits.
TIE_DIGITS = 9


def _ranked(graph: Any, scores: Any, top: int) -> list[dict[str, Any]]:
    """The ``top`` highest-scoring nodes; scores equal to :data:`TIE_DIGITS` significant
    digits rank by URL."""
    import numpy as np

    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return []
    k = min(top, scores.size)
    rounded = _significant(scores, TIE_DIGITS)
    kth = np.partition(rounded, scores.size - k)[scores.size - k]
    cand = np.flatnonzero(rounded >= kth)     # the top k, and every node tied with them
    order = cand[np.lexsort((_url_ranks(graph, cand), -rounded[cand]))][:k]
    return [{"rank": r + 1, "score": float(scores[i]), "url": graph.urls[i],
             "crawled": bool(graph.crawled[i])} for r, i in enumerate(order.tolist())]


def _significant(values: Any, digits: int) -> Any:
    """``values`` rounded to ``digits`` significant digits (vectorised)."""
    import numpy as np

    mag = np.floor(np.log10(np.abs(values), where=values != 0,
                            out=np.zeros_like(values)))
    scale = 10.0 ** (digits - 1 - mag)
    return np.round(values * scale) / scale


def _url_ranks(graph: Any, nodes: Any) -> Any:
    """Alphabetical rank of each node's URL among ``nodes``."""
    import numpy as np

    urls = graph.urls
    if hasattr(urls, "take"):      # the loader's Arrow-backed URLs: sorted in Arrow
        order = urls.take(nodes).sort_indices()
    else:                          # a generated graph's list
        order = np.argsort(np.asarray([urls[i] for i in nodes.tolist()]), kind="stable")
    ranks = np.empty(nodes.size, dtype=np.int64)
    ranks[order] = np.arange(nodes.size)
    return ranks


def _print_ranked(rows: list[dict[str, Any]], title: str) -> None:
    print_table(["rank", "score", "page", "url"],
                [[r["rank"], r["score"], "crawled" if r["crawled"] else "frontier", r["url"]]
                 for r in rows], title=title)


def run_pagerank(args: argparse.Namespace) -> int:
    from webcrawl.analysis.graph.kept import source_pagerank

    graph, source = _load_source(args)
    normalize: Literal["sum", "mean"] = "mean" if args.mean else "sum"
    # Kept for the next command (``compare`` reuses it); sum 1, scaled as pagerank() does.
    result = source_pagerank(source, graph.adjacency, args.alpha, tol=args.tol)
    scores = result.scores * graph.adjacency.shape[0] if args.mean else result.scores
    rows = _ranked(graph, scores, args.top)
    if args.json:
        print_json({**_graph_info(graph, args), "alpha": args.alpha, "tol": args.tol,
                    "normalize": normalize, "iterations": result.iterations,
                    "residual": result.residual, "top": rows})
        return 0
    kind = "remote-links PageRank" if args.remote_only else "PageRank"
    _print_ranked(rows, f"{kind} over the {graph.describe()} "
                        f"({result.iterations} iterations, L1 change {result.residual:.2g})")
    return 0


def run_hits(args: argparse.Namespace) -> int:
    from webcrawl.analysis.graph.hits_alg import hits

    graph = _load(args)
    result = hits(graph.adjacency, tol=args.tol)
    auths = _ranked(graph, result.authorities, args.top)
    hubs = _ranked(graph, result.hubs, args.top)
    if args.json:
        print_json({**_graph_info(graph, args), "iterations": result.iterations,
                    "residual": result.residual, "authorities": auths, "hubs": hubs})
        return 0
    info = f"over the {graph.describe()} ({result.iterations} iterations)"
    _print_ranked(auths, f"Authorities {info}")
    print()
    _print_ranked(hubs, f"Hubs {info}")
    return 0


def run_bowtie(args: argparse.Namespace) -> int:
    from webcrawl.analysis.graph.bowtie_alg import bowtie

    graph = _load(args)
    result = bowtie(graph.adjacency)
    counts, fractions = result.counts, result.fractions
    largest = sorted(zip(result.scc_sizes.tolist(), result.scc_size_counts.tolist(),
                         strict=True), reverse=True)[:args.top]
    if args.json:
        print_json({**_graph_info(graph, args),
                     "regions": {k: {"count": counts[k], "fraction": fractions[k]}
                                 for k in counts},
                     "scc_count": result.n_scc, "wcc_count": result.n_wcc,
                     "largest_wcc": result.largest_wcc,
                     "scc_size_distribution": [{"size": s, "count": c}
                                               for s, c in zip(result.scc_sizes.tolist(),
                                                               result.scc_size_counts.tolist(),
                                                               strict=True)]})
        return 0
    print_table(["region", "pages", "fraction"],
                [[k, counts[k], f"{100 * fractions[k]:.1f}%"] for k in counts],
                title=f"Bow-tie of the {graph.describe()}")
    print(f"\n{result.n_scc:,} strongly connected components; {result.n_wcc:,} weakly "
          f"connected components, the largest with {result.largest_wcc:,} pages")
    print()
    print_table(["SCC size", "components"], [list(row) for row in largest],
                title="Largest SCC sizes")
    return 0


def run_degrees(args: argparse.Namespace) -> int:
    from webcrawl.analysis.graph.degree_dist import degree_laws

    graph = _load(args)
    laws = degree_laws(graph.adjacency, min_tail=args.min_tail)
    fits = {"in": laws.in_fit, "out": laws.out_fit}
    if args.json:
        print_json({**_graph_info(graph, args),
                    "fits": {k: None if f is None else vars(f) for k, f in fits.items()},
                    "in_distribution": {"degree": laws.in_values, "count": laws.in_counts},
                    "out_distribution": {"degree": laws.out_values, "count": laws.out_counts}})
        return 0
    rows = [[k, "-", "-", "-", "-", "-"] if f is None else
            [k, f.alpha, f.sigma, f.x_min, f.n_tail, f.ks] for k, f in fits.items()]
    print_table(["degree", "alpha", "std err", "x_min", "n_tail", "KS"], rows,
                title=f"Power-law fits on the {graph.describe()} "
                      "(Broder et al. 1999: in 2.1, out 2.72)")
    print()
    dist_rows = []
    for name, values, counts in (("in", laws.in_values, laws.in_counts),
                                 ("out", laws.out_values, laws.out_counts)):
        mean = float((values * counts).sum() / counts.sum())
        dist_rows.append([name, mean, int(values.max()), int(counts[values == 0].sum())])
    print_table(["degree", "mean", "max", "zero"], dist_rows, title="Distributions")
    return 0
