"""Which random-walk samplers come out uniform on a fixture web, and which are biased.

Builds a zipf fixture web (in-degree exponent 2.1, out-degree 2.72), draws a sample
with every sampler of :mod:`webcrawl.analysis.sampling.walks` and prints, per sampler, the mean
in-degree of the sample against the true mean, the KS statistic of the sampled
in-degrees against the true ones (and its p-value), the share of the sample among the
top 1% pages by in-degree (1% for a uniform sample), and a verdict.  Rusmevichientong
et al. found DirectedSample, UndirectedSample and RegularSample uniform and
PageRankSample biased toward pages with many in-links.

    .venv/bin/python benchmarks/sampling_bias.py [--pages 20000] [--size 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.sampling.walks import METHODS, SamplerConfig, bias_report, sample_pages
from webcrawl.fixtures.config import FixtureConfig
from webcrawl.fixtures.web import FixtureWeb

UNIFORM_P = 0.01  # KS p-value above which a sample is called uniform


def fixture_graph(pages: int, seed: int) -> CapturedGraph:
    web = FixtureWeb.build(FixtureConfig(model="zipf", pages=pages, hosts=max(pages // 1000, 1),
                                         seed=seed))
    keep = web.reachable()  # what a crawl from site0's root captures
    index = np.cumsum(keep) - 1
    edge = keep[web.src] & keep[web.dst]
    return CapturedGraph.from_edges(index[web.src[edge]], index[web.dst[edge]],
                                    int(keep.sum()), hosts=web.host_of[keep],
                                    seeds=[int(index[web.roots[0]])])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    graph = fixture_graph(args.pages, args.seed)
    in_deg = np.bincount(graph.adjacency.indices, minlength=graph.n)
    top = in_deg >= np.quantile(in_deg, 0.99)
    print(f"fixture web (zipf): {graph.n} pages, {graph.m} links, sample size {args.size}, "
          f"true mean in-degree {in_deg.mean():.2f}, top 1% = in-degree >= "
          f"{int(in_deg[top].min())} ({top.mean():.1%} of pages)")
    config = SamplerConfig()
    header = (f"{'sampler':<11} {'mean in':>8} {'true':>6} {'KS D':>6} {'KS p':>9} "
              f"{'chi2 p':>9} {'in top1%':>8} {'distinct':>8} {'fetches':>9} {'secs':>6}  "
              "verdict")
    print(header)
    print("-" * len(header))
    for method in METHODS:
        start = time.perf_counter()
        sample = sample_pages(graph, args.size, method, config, seed=args.seed)
        secs = time.perf_counter() - start
        rep = bias_report(graph, sample).in_degree
        if rep.ks_pvalue > UNIFORM_P:
            verdict = "uniform"
        elif rep.sample_mean > rep.true_mean:
            verdict = "biased toward high in-degree"
        else:
            verdict = "biased toward low in-degree"
        print(f"{method:<11} {rep.sample_mean:8.2f} {rep.true_mean:6.2f} "
              f"{rep.ks_statistic:6.3f} {rep.ks_pvalue:9.2g} {rep.chi2_pvalue:9.2g} "
              f"{np.mean(top[sample.nodes]):8.1%} {sample.distinct:8d} "
              f"{sample.traversals:9d} {secs:6.2f}  {verdict}")


if __name__ == "__main__":
    main()
