"""Crawl throughput: webcrawl (every feature on) vs a bare loop vs Scrapy, on one site.

The site is a static export of the fixture web (``webcrawl.fixtures.static``) served by nginx, so
the server is not the bottleneck.  If nginx is missing the script installs it with
``apt-get install -y nginx`` (saying so); if that fails it falls back to the aiohttp
fixture server in a separate process (and says so: figures are then server-bound).

Runs, each in its own process (wall clock and peak RSS of that process):

* ``webcrawl zero-delay``: politeness on (robots.txt, one connection and one request in
  flight per host), zero delay, normalisation, scope, the SQLite store, progress;
* ``webcrawl delays``: the same with Mercator's delay rule (factor 10, min 10 ms);
* ``bare loop``: ``benchmarks/bare_loop.py`` (aiohttp + selectolax + batched sqlite3,
  one worker per host, nothing else);
* ``scrapy``: ``benchmarks/scrapy_spider.py`` with CONCURRENT_REQUESTS_PER_DOMAIN=1,
  skipped when Scrapy is not installed.  Install it apart from the project with
  ``python3 -m venv /tmp/scrapy-venv && /tmp/scrapy-venv/bin/pip install scrapy``.

Usage: ``python benchmarks/bench_crawl.py [--pages 20000] [--hosts 20] [--profile]``
(``--profile`` also runs pyinstrument over an in-process crawl and prints where the time
goes).  Keep sizes small while developing: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRAPY_PYTHONS = ("/tmp/scrapy-venv/bin/python",)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def ensure_nginx() -> str | None:
    path = shutil.which("nginx") or (os.path.exists("/usr/sbin/nginx") and "/usr/sbin/nginx")
    if path:
        return str(path)
    print("nginx not found: installing it with 'apt-get install -y nginx' ...", file=sys.stderr)
    for cmd in (["apt-get", "install", "-y", "nginx"], ["apt-get", "update"],
                ["apt-get", "install", "-y", "nginx"]):
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        path = shutil.which("nginx") or (os.path.exists("/usr/sbin/nginx") and "/usr/sbin/nginx")
        if path:
            return str(path)
    return None


def start_server(args: argparse.Namespace, work: Path, config: Any = None
                 ) -> tuple[subprocess.Popen[bytes], int, str]:
    """Serve the fixture web of ``args`` (or of the FixtureConfig ``config``) with nginx,
    as static files, else with the aiohttp fixture server."""
    from webcrawl.fixtures import FixtureConfig, FixtureWeb

    if config is None:
        config = FixtureConfig(pages=args.pages, hosts=args.hosts, seed=args.seed)
    web = FixtureWeb.build(config)
    port = free_port()
    nginx = ensure_nginx()
    if nginx:
        from webcrawl.fixtures.static import export_static, nginx_config

        site = work / "site"
        export_static(web, site, port)
        (site / "nginx.conf").write_text(nginx_config(web, site, port))
        # nginx workers drop to an unprivileged user when started as root: let them read.
        for folder in (work, *(p for p in work.rglob("*") if p.is_dir())):
            folder.chmod(0o755)
        for file in site.rglob("*"):
            if file.is_file():
                file.chmod(0o644)
        proc = subprocess.Popen([nginx, "-p", str(site), "-c", str(site / "nginx.conf")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kind = "nginx (static export)"
    else:
        print("nginx unavailable: falling back to the aiohttp fixture server "
              "(figures are bound by that server)", file=sys.stderr)
        code = ("import asyncio,sys\nfrom fixtures import FixtureConfig,FixtureWeb,FixtureServer\n"
                f"web=FixtureWeb.build(FixtureConfig(pages={config.pages},"
                f"hosts={config.hosts},seed={config.seed},"
                f"near_duplicate_pairs={config.near_duplicate_pairs},"
                f"similar_pages={config.similar_pages}))\n"
                "async def main():\n"
                f"    async with FixtureServer(web, port={port}):\n"
                "        await asyncio.Event().wait()\n"
                "asyncio.run(main())\n")
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
        kind = "aiohttp fixture server (fallback)"
    wait_port(port)
    return proc, port, kind


def seeds(args: argparse.Namespace, port: int) -> list[str]:
    return [f"http://site{h}.test:{port}/" for h in range(args.hosts)]


def run_child(cmd: list[str]) -> dict[str, Any]:
    """Run ``cmd`` (prints one JSON line); add its peak RSS in MiB."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    out, err = proc.communicate()
    rss_kib = 0
    # os.wait4 cannot be used after communicate(); ask the kernel via RUSAGE_CHILDREN deltas
    # instead would mix runs, so children report their own peak RSS.
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed: {err.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    result.setdefault("rss_mib", round(rss_kib / 1024, 1))
    return result


def child_crawl(argv: list[str]) -> None:
    """In a child process: run webcrawl with every feature on; print JSON stats."""
    from webcrawl.crawler import eventloop
    from webcrawl.crawler.engine import Crawler
    from webcrawl.crawler.progress import Progress
    from webcrawl.crawler.settings import CrawlSettings

    p = argparse.ArgumentParser()
    p.add_argument("--db")
    p.add_argument("--delay-factor", type=float, default=0.0)
    p.add_argument("--min-delay", type=float, default=0.0)
    p.add_argument("--max-pages", type=int, default=None)
    p.add_argument("--strategy", default="bfs")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("seeds", nargs="+")
    a = p.parse_args(argv)
    settings = CrawlSettings(
        resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",), concurrency=64,
        polite_delay_factor=a.delay_factor, polite_min_delay=a.min_delay,
        polite_max_delay=max(a.min_delay, 30.0 if a.delay_factor else 0.0),
        scope_max_pages=a.max_pages, frontier_strategy=a.strategy, workers=a.workers)
    crawler = Crawler(a.db, a.seeds, settings)  # workers > 1: worker processes

    async def main() -> None:
        with open(os.devnull, "w") as sink:
            progress = Progress(crawler.stats, stream=sink, force=True)
            progress.start()
            try:
                await crawler.run()
            finally:
                await progress.stop()

    eventloop.run(main())
    stats = crawler.stats
    print(json.dumps({"pages": stats.pages, "seconds": round(stats.elapsed, 3),
                      "pages_per_second": round(stats.rate, 1),
                      "rss_mib": round(peak_rss_kib() / 1024, 1),
                      "cpu_seconds": round(cpu_seconds(), 2),
                      "cpu_workers": round(cpu_seconds(children_only=True), 2)}))


def cpu_seconds(*, children_only: bool = False) -> float:
    """User + system CPU of this process and its waited-for children (shard workers)."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = 0.0 if children_only else me.ru_utime + me.ru_stime
    return own + kids.ru_utime + kids.ru_stime


def same_pages(bare_db: Path, crawl_db: Path) -> str:
    """Whether the bare loop and the crawl fetched the same URLs (else the ratio of their
    pages per second compares different work)."""
    import sqlite3

    with sqlite3.connect(bare_db) as b:
        bare = {u for (u,) in b.execute("SELECT url FROM pages")}
    with sqlite3.connect(crawl_db) as c:
        crawl = {u for (u,) in c.execute(
            "SELECT url FROM urls WHERE id IN (SELECT url_id FROM fetches)")}
    if bare == crawl:
        return f"the bare loop and the crawl fetched the same {len(bare)} URLs"
    return (f"DIFFERENT WORK: {len(bare & crawl)} URLs fetched by both, {len(bare - crawl)} by "
            f"the bare loop only (e.g. {sorted(bare - crawl)[:2]}), {len(crawl - bare)} by the "
            f"crawl only (e.g. {sorted(crawl - bare)[:2]})")


def shard_ab(args: argparse.Namespace, me: list[str], urls: list[str], work: Path,
             kind: str) -> None:
    """A/B/A: bare loop, webcrawl --workers N, bare loop, per round; best of each."""
    runs: dict[str, list[dict[str, Any]]] = {"bare": [], "shard": [], "one": []}
    for r in range(args.rounds):
        for name, cmd in (
                ("bare", [*me, "--child-bare", str(work / f"b{r}a.db"), *urls]),
                ("shard", [*me, "--child-crawl", "--db", str(work / f"s{r}.db"),
                           "--workers", str(args.workers), *urls]),
                ("bare", [*me, "--child-bare", str(work / f"b{r}b.db"), *urls]),
                ("one", [*me, "--child-crawl", "--db", str(work / f"o{r}.db"), *urls])):
            result = run_child(cmd)
            runs[name].append(result)
            print(f"round {r + 1}: {name:5} {result['pages']} pages {result['seconds']:.2f} s "
                  f"{result['pages_per_second']:.0f} pages/s cpu {result['cpu_seconds']:.1f} s",
                  file=sys.stderr)
    best = {k: max(v, key=lambda x: x["pages_per_second"]) for k, v in runs.items()}
    print(same_pages(work / "b0a.db", work / "s0.db"))
    print(f"site: {args.pages} pages on {args.hosts} hosts, served by {kind}; "
          f"A/B/A x {args.rounds}, best of each; load {os.getloadavg()[0]:.1f}")
    print(f"{'run':46} {'pages':>7} {'seconds':>8} {'pages/s':>8} {'CPU s':>7} {'vs bare':>8}"
          f"  CPU ms/page: coordinator, workers")
    for name, label in (("bare", "bare loop (aiohttp+selectolax+sqlite3)"),
                        ("shard", f"webcrawl --workers {args.workers}, zero delay"),
                        ("one", "webcrawl --workers 1, zero delay")):
        r = best[name]
        ratio = r["pages_per_second"] / best["bare"]["pages_per_second"]
        per_page = ""
        if "cpu_workers" in r:
            ms = 1000 / max(1, r["pages"])
            per_page = (f"  {(r['cpu_seconds'] - r['cpu_workers']) * ms:.3f}, "
                        f"{r['cpu_workers'] * ms:.3f}")
        print(f"{label:46} {r['pages']:>7} {r['seconds']:>8.2f} {r['pages_per_second']:>8.0f} "
              f"{r['cpu_seconds']:>7.1f} {ratio:>8.2f}{per_page}")


def child_bare(argv: list[str]) -> None:
    import asyncio
    import resource

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bare_loop import bare_crawl

    db, *seed_urls = argv
    result = asyncio.run(bare_crawl(seed_urls, db, "127.0.0.1"))
    result["rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    result["cpu_seconds"] = round(cpu_seconds(), 2)
    print(json.dumps(result))


def profile(args: argparse.Namespace, port: int, work: Path) -> None:
    import asyncio

    from pyinstrument import Profiler
    from webcrawl.crawler.engine import Crawler
    from webcrawl.crawler.settings import CrawlSettings

    settings = CrawlSettings.polite_off(resolve=("*.test=127.0.0.1",), scope_hosts=("*.test",),
                                        concurrency=64)
    crawler = Crawler(work / "profile.db", seeds(args, port), settings)
    profiler = Profiler(interval=0.0005, async_mode="disabled")
    profiler.start()
    asyncio.run(crawler.run())
    profiler.stop()
    print(f"\nProfile of an in-process crawl ({crawler.stats.pages} pages, "
          f"{crawler.stats.rate:.0f} pages/s under the profiler):")
    print(profiler.output_text(unicode=False, color=False, show_all=False))


def memory(n: int) -> None:
    """Bytes and adds per discovered URL of the crawl state, every ordering's state
    included: :mod:`bench_frontier_memory` (one child process per ordering)."""
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_frontier_memory.py"),
                    "--urls", str(n)], check=True)


def scrapy_python() -> str | None:
    for candidate in SCRAPY_PYTHONS:
        if os.path.exists(candidate):
            return candidate
    try:
        import scrapy  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def compile_tree() -> None:
    """Byte-compile the project, as an installed package is.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (this workplace sets it) nothing writes
    ``__pycache__``, so every child process -- each shard worker -- would compile every
    module it imports again: about 0.1 s of CPU per process inside the timed crawl.
    ``pip install`` (not editable) compiles at install time; so does this.
    """
    import compileall

    for package in ("crawler", "storage", "analysis", "fixtures"):
        compileall.compile_dir(ROOT / package, quiet=1)


def peak_rss_kib() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-crawl":
        child_crawl(sys.argv[2:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--child-bare":
        child_bare(sys.argv[2:])
        return
    p = argparse.ArgumentParser(description="crawl throughput benchmark")
    p.add_argument("--pages", type=int, default=20000)
    p.add_argument("--hosts", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--delay-pages", type=int, default=None,
                   help="pages of the run with delays on (default: all)")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--memory", type=int, default=0, metavar="N",
                   help="only measure the crawl state's memory and adds per discovered URL "
                        "for N URLs, for every ordering (bench_frontier_memory.py)")
    p.add_argument("--workers", type=int, default=0, metavar="N",
                   help="only compare the sharded crawl (--workers N, every feature on, "
                        "politeness on, zero delay) with the bare loop: A/B/A rounds, "
                        "best of each")
    p.add_argument("--rounds", type=int, default=3, help="A/B/A rounds of --workers")
    args = p.parse_args()
    if args.memory:
        memory(args.memory)
        return
    compile_tree()
    work = Path(tempfile.mkdtemp(prefix="bench-crawl-"))
    server, port, kind = start_server(args, work)
    rows: list[list[Any]] = []
    try:
        urls = seeds(args, port)
        me = [sys.executable, str(Path(__file__).resolve())]
        if args.workers:
            shard_ab(args, me, urls, work, kind)
            return
        bare = run_child([*me, "--child-bare", str(work / "bare.db"), *urls])
        rows.append(["bare loop (aiohttp+selectolax+sqlite3)", bare])
        fast = run_child([*me, "--child-crawl", "--db", str(work / "w0.db"), *urls])
        rows.append(["webcrawl, politeness on, zero delay", fast])
        slow_args = ["--delay-factor", "10", "--min-delay", "0.01"]
        if args.delay_pages:
            slow_args += ["--max-pages", str(args.delay_pages)]
        slow = run_child([*me, "--child-crawl", "--db", str(work / "w1.db"), *slow_args, *urls])
        rows.append(["webcrawl, delays on (factor 10, min 10 ms)", slow])
        spy = scrapy_python()
        if spy:
            sc = run_child([spy, str(ROOT / "benchmarks" / "scrapy_spider.py"), *urls])
            rows.append(["scrapy (CONCURRENT_REQUESTS_PER_DOMAIN=1)", sc])
        else:
            rows.append(["scrapy: skipped (not installed; see the docstring)", None])
        print(f"site: {args.pages} pages on {args.hosts} hosts, served by {kind}")
        print(f"{'run':46} {'pages':>7} {'seconds':>8} {'pages/s':>8} {'peak RSS MiB':>13} "
              f"{'vs bare':>8}")
        for name, r in rows:
            if r is None:
                print(name)
                continue
            ratio = r["pages_per_second"] / bare["pages_per_second"]
            print(f"{name:46} {r['pages']:>7} {r['seconds']:>8.2f} {r['pages_per_second']:>8.0f}"
                  f" {r['rss_mib']:>13.1f} {ratio:>8.2f}")
        if args.profile:
            profile(args, port, work)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
