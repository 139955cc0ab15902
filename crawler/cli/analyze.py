"""``webcrawl analyze TOPIC``: each topic group lives in its own module.

Topic modules expose ``register(analyze_subparsers)`` like the top-level commands.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

TOPIC_MODULES = (
    "webcrawl.crawler.cli.analyze_graph",     # pagerank, hits, bowtie, degrees
    "webcrawl.crawler.cli.analyze_quality",   # quality
    "webcrawl.crawler.cli.analyze_changes",   # changes
    "webcrawl.crawler.cli.analyze_structure",  # sample, smallworld, cores
)


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "analyze", help="analyse a crawl database",
        description="Analyse the graph and history captured in a crawl database.")
    topics = parser.add_subparsers(dest="topic", metavar="TOPIC",
                                   parser_class=type(parser))
    for name in TOPIC_MODULES:
        importlib.import_module(name).register(topics)
