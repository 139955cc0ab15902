"""Rusmevichientong et al.'s samplers: degree bias against walk length on a crawl graph.

    PYTHONPATH=. python benchmarks/reproduce_sampling.py

The graph: the crawled part of a BFS random web crawl (Bennouas' model, 3,000 pages
crawled of 200,000), as a crawler would hold it.  For each sampler and walk length
(link traversals per walker before recording), the sample's mean in-degree over the
true mean and the KS distance of its in-degrees (1 and 0 for a uniform sample), as
``webcrawl analyze sample --walk-lengths`` prints them.
"""

from __future__ import annotations

from webcrawl.analysis.graph.captured import CapturedGraph
from webcrawl.analysis.ordering.randomweb import random_web_crawl
from webcrawl.analysis.sampling.walk_length import bias_by_walk_length
from webcrawl.analysis.sampling.walks import SamplerConfig
from webcrawl.storage.errors import AnalysisError

LENGTHS = (2, 20, 200, 2000)


def main() -> None:
    web = random_web_crawl(200_000, "BFS", max_pages=3000, seed=2)
    order = web.graph.fetch_order
    sub = web.graph.adjacency.tocsr()[order][:, order]
    graph = CapturedGraph.from_edges(*sub.nonzero(), sub.shape[0], seeds=[0])
    config = SamplerConfig(walkers=32, walk_length=20, estimate_length=4000)
    print(f"{graph.n} pages, {sub.nnz} links; 1000 pages per sample")
    print(f"{'method':<14}" + "".join(f"{'L=' + str(n):>18}" for n in LENGTHS))
    # DirectedSample assumes a strongly connected graph (a crawl's dangling pages
    # absorb its walks): by default it walks the largest SCC; "whole graph" is the
    # paper's walk outside its assumption.
    runs = [(m, True) for m in ("plain", "undirected", "regular", "directed",
                                "directed-jump", "pagerank")] + [("directed", False)]
    for method, scc in runs:
        label = method if scc else f"{method} (whole graph)"
        try:
            reports = bias_by_walk_length(graph, 1000, LENGTHS, method, config, seed=1,
                                          largest_scc=scc)
        except AnalysisError as exc:
            print(f"{label:<14}  no sample: {exc}")
            continue
        cells = []
        for _, r in reports:
            ratio = r.in_degree.sample_mean / r.in_degree.true_mean
            cells.append(f"{ratio:6.2f} KS {r.in_degree.ks_statistic:5.3f}")
        print(f"{label:<14}" + "".join(f"{c:>18}" for c in cells))


if __name__ == "__main__":
    main()
