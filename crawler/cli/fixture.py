"""`webcrawl fixture`: serve the fixture web, write its ground truth, audit, export it.

Sub-commands ``serve``, ``truth`` and ``export-static`` take the same web arguments (one
shared helper adds them), so ``truth`` describes exactly what ``serve`` serves.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from webcrawl.crawler.cli._common import (
    float_range,
    fraction,
    int_range,
    nonneg_float,
    port_int,
    positive_float,
    positive_int,
    seed_int,
)
from webcrawl.crawler.cli._help import add_deprecated_alias
from webcrawl.storage.errors import ConfigError

__all__ = ["add_web_arguments", "config_from_args", "register"]


def add_web_arguments(parser: argparse.ArgumentParser, *, port_help: str) -> None:
    """The arguments that define a fixture web (shared by serve, truth, export-static)."""
    parser.add_argument("--port", type=port_int, default=8400, help=port_help + " (default 8400)")
    parser.add_argument("--hosts", type=int_range(1, 10**6), default=10,
                        help="number of hosts (default 10)")
    parser.add_argument("--pages", type=int_range(1, 10**8), default=2000,
                        help="number of pages (default 2000)")
    parser.add_argument("--random-seed", dest="seed", type=seed_int, default=0, metavar="N",
                        help="seed of the random web (default 0)")
    add_deprecated_alias(parser, "--seed", "--random-seed")
    parser.add_argument("--model", default="zipf",
                        help="graph model: zipf, randomweb (Bennouas), copying or ba "
                             "(default zipf)")
    parser.add_argument("--same-host-fraction", type=fraction, default=0.8,
                        help="fraction of links within a host (default 0.8)")
    parser.add_argument("--day-seconds", type=positive_float, default=60.0,
                        help="real seconds per simulated day (default 60)")
    parser.add_argument("--crawl-delay", type=float_range(0.0, 86400.0), default=None,
                        help="Crawl-delay line in every robots.txt (default none)")
    parser.add_argument("--disallow-fraction", type=fraction, default=0.05,
                        help="fraction of pages under /private/ (default 0.05)")
    parser.add_argument("--births", type=fraction, default=0.0,
                        help="fraction of pages born later (default 0)")
    parser.add_argument("--deaths", type=fraction, default=0.0,
                        help="fraction of pages that die (default 0)")
    parser.add_argument("--faults", default="",
                        help="faults, e.g. '5xx:0.02,429:0.01,trap@0' (see fixtures.faults)")
    parser.add_argument("--near-pairs", type=int_range(0, 10**7), default=0, metavar="N",
                        help="plant N pairs of near-duplicate pages (another date, menu, "
                             "block order, tracking query, advert or a few edited words; "
                             "truth in near.tsv; default 0)")
    parser.add_argument("--similar-pages", type=int_range(0, 10**7), default=0, metavar="N",
                        help="plant N distinct pages sharing a long notice of their host's, "
                             "which a near-duplicate test must not merge (default 0)")
    parser.add_argument("--host-crawl-delay", action="append", type=_host_delay, default=[],
                        metavar="H=S", help="Crawl-delay of host H in seconds, over "
                                            "--crawl-delay (repeatable; e.g. 0=2)")
    parser.add_argument("--host-weights", type=_weights, default=(), metavar="W,W,...",
                        help="relative number of pages of each host (default: a few big "
                             "hosts and many small ones)")
    parser.add_argument("--change-shape", type=float_range(0.05, 20.0), default=1.0,
                        metavar="K", help="Weibull shape of the intervals between changes, "
                                          "same mean (default 1: Poisson; < 1 bursty)")
    parser.add_argument("--sitemap-lastmod", type=_modes, default=(), metavar="MODE[,MODE]",
                        help="each host's /sitemap.xml: none, true, missing (no lastmod) or "
                             "lie (lastmod also moves without a change); one mode, or one "
                             "per host (default: no sitemaps)")
    parser.add_argument("--sitemap-lie-rate", type=nonneg_float, default=1.0, metavar="R",
                        help="false lastmod moves per page and simulated day of a lying "
                             "sitemap (default 1)")


def _host_delay(text: str) -> tuple[int, float]:
    """``H=S``: host index and Crawl-delay seconds."""
    host, sep, seconds = text.partition("=")
    try:
        pair = (int(host), float(seconds))
    except ValueError:
        pair = (-1, math.nan)
    if not sep or pair[0] < 0 or not (math.isfinite(pair[1]) and pair[1] >= 0):
        raise argparse.ArgumentTypeError(f"want HOST=SECONDS like 0=2, got {text!r}")
    return pair


def _weights(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"want positive numbers like 6,1,1, got {text!r}")
    return values


def _modes(text: str) -> tuple[str, ...]:
    return tuple(m.strip() for m in text.split(","))


#: A DNS host name (RFC 1123 labels, 253 characters at most).
_HOST_NAME = re.compile(r"(?=.{1,253}\.?$)(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
                        r"(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*\.?")


def bind_address(text: str) -> str:
    """``--bind``: an IP address (IPv6 with or without brackets) or a host name."""
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        pass
    if _HOST_NAME.fullmatch(text) and not text.rstrip(".").rpartition(".")[2].isdigit():
        return text  # (a numeric top label: a mistyped IPv4 address, RFC 1123 2.1)
    raise argparse.ArgumentTypeError(f"not an IP address or host name: {text!r}")


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def config_from_args(args: argparse.Namespace) -> Any:
    """A validated FixtureConfig from the shared arguments (FixtureError if invalid)."""
    from webcrawl.fixtures import FaultSpec, FixtureConfig

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be in 0..65535, got {args.port}")
    return FixtureConfig(
        model=args.model, pages=args.pages, hosts=args.hosts, seed=args.seed,
        same_host_fraction=args.same_host_fraction, day_seconds=args.day_seconds,
        crawl_delay=args.crawl_delay, robots_disallow_fraction=args.disallow_fraction,
        birth_fraction=args.births, death_fraction=args.deaths,
        faults=FaultSpec.parse(args.faults), near_duplicate_pairs=args.near_pairs,
        similar_pages=args.similar_pages, host_crawl_delays=tuple(args.host_crawl_delay),
        host_weights=args.host_weights, change_shape=args.change_shape,
        sitemap_lastmod=args.sitemap_lastmod, sitemap_lie_rate=args.sitemap_lie_rate)


def register(sub: Any) -> None:
    parser = sub.add_parser("fixture", help="the local synthetic web (serve, truth, audit ...)",
                            description="The fixture web: a local multi-host synthetic web "
                                        "with ground truth.")
    fsub = parser.add_subparsers(dest="fixture_command", metavar="SUBCOMMAND",
                                 parser_class=type(parser))

    serve = fsub.add_parser("serve", help="serve the fixture web until interrupted")
    add_web_arguments(serve, port_help="port to listen on")
    serve.add_argument("--bind", type=bind_address, default="127.0.0.1",
                       help="address (default 127.0.0.1)")
    serve.add_argument("--start-day", type=nonneg_float, default=0.0,
                       help="simulated day at start (default 0)")
    serve.add_argument("--latency", type=float_range(0.0, 60.0), default=0.0,
                       help="seconds added to every answer (default 0)")
    serve.set_defaults(func=_serve)

    truth = fsub.add_parser("truth", help="write pages.tsv and edges.tsv (no server)")
    add_web_arguments(truth, port_help="port the URLs carry")
    truth.add_argument("--out", required=True, type=Path, metavar="DIR",
                       help="folder for pages.tsv and edges.tsv")
    truth.set_defaults(func=_truth)

    audit = fsub.add_parser("audit", help="print the politeness audit of a running server")
    audit.add_argument("--port", type=int_range(1, 65535), required=True,
                       help="port of the fixture server")
    audit.add_argument("--bind", type=bind_address, default="127.0.0.1",
                       help="its address (default 127.0.0.1)")
    audit.add_argument("--max-concurrency", type=positive_int, default=None,
                       help="allowed requests in flight per host")
    audit.add_argument("--min-gap", type=nonneg_float, default=None,
                       help="required seconds between requests to a host")
    audit.add_argument("--no-robots-first", action="store_true",
                       help="do not require robots.txt before other URLs")
    audit.set_defaults(func=_audit)

    export = fsub.add_parser("export-static",
                             help="write a snapshot as static files plus an nginx config")
    add_web_arguments(export, port_help="port nginx listens on and URLs carry")
    export.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    export.add_argument("--day", type=nonneg_float, default=0.0,
                        help="simulated day of the snapshot (default 0)")
    export.set_defaults(func=_export)


def _build(args: argparse.Namespace) -> Any:
    from webcrawl.fixtures import FixtureWeb

    config = config_from_args(args)
    print(f"building {config.model} web: {config.pages} pages on {config.hosts} hosts, "
          f"seed {config.seed} ...", file=sys.stderr)
    return FixtureWeb.build(config)


def _serve(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from webcrawl.fixtures import FixtureServer

    web = _build(args)

    async def run() -> None:
        server = FixtureServer(web, args.bind, args.port, start_day=args.start_day,
                               latency=args.latency)
        await server.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(f"serving {web.pages} pages on {web.hosts} hosts at "
              f"{_host_port(args.bind, server.port)}", file=sys.stderr)
        print(server.seed_url, flush=True)
        print(f"hint: webcrawl crawl {server.seed_url} --db crawl.db "
              f"--resolve '*.test={args.bind}' --allow-domain test", file=sys.stderr)
        # Pages change on this server's clock: a revisit measures per day only with the
        # same day length (its own default is a real day).
        print(f"hint: then webcrawl revisit --db crawl.db --budget 10/s --duration 60 "
              f"--day-seconds {args.day_seconds:g} (this server's day length)",
              file=sys.stderr)
        try:
            await stop.wait()
        finally:
            await server.close()
        print("stopped", file=sys.stderr)

    from webcrawl.crawler import eventloop

    eventloop.run(run())
    return 0


def _truth(args: argparse.Namespace) -> int:
    from webcrawl.crawler.cli._common import check_output
    from webcrawl.fixtures import write_truth

    check_output(args.out, folder=True)
    web = _build(args)
    pages, edges = write_truth(web, args.port, args.out)
    print(f"wrote {pages} ({web.pages} pages) and {edges} ({web.src.shape[0]} edges)")
    return 0


def _audit(args: argparse.Namespace) -> int:
    import urllib.error
    import urllib.parse
    import urllib.request

    query = {"robots_first": "0" if args.no_robots_first else "1"}
    if args.max_concurrency is not None:
        query["max_concurrency"] = str(args.max_concurrency)
    if args.min_gap is not None:
        query["min_gap"] = str(args.min_gap)
    url = (f"http://{_host_port(args.bind, args.port)}/__fixture__/audit?"
           + urllib.parse.urlencode(query))
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            report = json.load(resp)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ConfigError(f"no fixture server answering at {_host_port(args.bind, args.port)}"
                          f" ({reason})") from exc
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _export(args: argparse.Namespace) -> int:
    from webcrawl.crawler.cli._common import check_output
    from webcrawl.fixtures.static import export_static

    check_output(args.out, folder=True)
    web = _build(args)
    written = export_static(web, args.out, args.port, args.day)
    print(f"wrote {written} pages to {args.out}; run: nginx -p {args.out.resolve()} "
          "-c nginx.conf")
    return 0
