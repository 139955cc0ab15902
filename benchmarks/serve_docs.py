"""Serve a local HTML documentation tree as a small multi-host web, on loopback.

Used for the user guide's "Analysing a crawl": real pages (mdBook and rustdoc HTML,
with their real link structure, broken links and large pages), split over several
hostnames so a crawl sees off-site links, redirects, robots.txt exclusions and errors.

Every hostname serves the same tree, but each top-level folder has a *home* host
(``book/...`` lives on ``book.test``, a folder without its own host on ``www.test``);
a request for a folder on another host answers ``301`` to its home host, so the
relative links between the books become cross-host links through one redirect.
Each host's ``robots.txt`` disallows its mdBook ``print.html`` (one page holding the
whole book) and the paths given with ``--disallow``; paths under a ``--gone`` prefix
answer ``410 Gone`` (pages taken down: error pages the crawl records).

Run it, then crawl it with ``--resolve '*.test=127.0.0.1'``::

    python benchmarks/serve_docs.py --root ~/.rustup/toolchains/stable-*/share/doc/rust/html \
        --port 8765 --hosts book,reference,nomicon,rust-by-example,cargo,edition-guide

With ``--https-port``, the same tree (the same bytes) is also served over TLS on a second
port, with a certificate for every served ``.test`` host from a throwaway CA (``trustme``)
whose certificate is written to ``--ca-out`` for the crawler's ``--ca-file``; the
cross-host redirects then lead to ``https://`` (as sites that moved to https do), so a
crawl seeded over http sees every book twice: over http from its seed and over https
from the other books' links.  What the content-seen test is measured on::

    python benchmarks/serve_docs.py --root ... --port 8765 --https-port 8766 --ca-out ca.pem

Debian's HTML documentation links between packages by absolute path
(``/usr/share/doc/python3-doc/html/...``); with ``--strip-prefix /usr/share/doc`` and
``--root /usr/share/doc`` such a link answers ``301`` to the package's own host, so
each package is a site and their cross-references are links between sites.  With
``--mirror mirror=python3-doc`` the host ``mirror.test`` serves that folder too, byte
for byte, without redirecting (a mirror of one site under a second name)::

    python benchmarks/serve_docs.py --root /usr/share/doc --port 8765 \
        --hosts python3-doc,postgresql-doc-15,python-django-doc,sphinx-doc \
        --strip-prefix /usr/share/doc --mirror mirror=python3-doc

Stop it with Ctrl-C.  Only loopback is ever bound.
"""

from __future__ import annotations

import argparse
import asyncio
import mimetypes
import ssl
from pathlib import Path

from aiohttp import web

TLD = "test"


def _home(first: str, hosts: set[str]) -> str:
    return f"{first}.{TLD}" if first in hosts else f"www.{TLD}"


def make_app(root: Path, hosts: set[str], disallow: list[str],
             gone: list[str], https_port: int | None = None, *, strip_prefix: str = "",
             mirrors: dict[str, str] | None = None) -> web.Application:
    root = root.resolve()
    mirrored = {f"{name}.{TLD}": folder for name, folder in (mirrors or {}).items()}

    async def handle(request: web.Request) -> web.StreamResponse:
        host = request.host.split(":")[0]
        port = request.host.split(":")[1] if ":" in request.host else ""
        path = request.path
        if path == "/robots.txt":
            first = host.removesuffix(f".{TLD}")
            lines = ["User-agent: *"]
            if first in hosts:
                lines.append(f"Disallow: /{first}/print.html")
            lines += [f"Disallow: {d}" for d in disallow]
            return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")
        stripped = strip_prefix and path.startswith(strip_prefix + "/")
        if stripped:
            path = path[len(strip_prefix):]
        parts = [p for p in path.split("/") if p]
        home = _home(parts[0], hosts) if parts else f"www.{TLD}"
        if parts and mirrored.get(host) == parts[0]:
            home = host  # the mirror serves its folder itself
        if home != host or stripped:
            query = f"?{request.query_string}" if request.query_string else ""
            if https_port is not None:
                target = f"https://{home}:{https_port}{path}{query}"
            else:
                target = f"http://{home}{':' + port if port else ''}{path}{query}"
            raise web.HTTPMovedPermanently(target)
        if any(path.startswith(g) for g in gone):
            raise web.HTTPGone()
        file = (root / "/".join(parts)).resolve()
        if not file.is_relative_to(root):
            raise web.HTTPNotFound()
        if file.is_dir():
            file = file / "index.html"
        if not file.is_file():
            raise web.HTTPNotFound()
        ctype = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        return web.Response(body=file.read_bytes(), content_type=ctype)

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    return app


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, required=True, help="the HTML tree to serve")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--hosts", default="book,reference,nomicon,rust-by-example,cargo",
                   help="top-level folders that get their own host (comma-separated)")
    p.add_argument("--disallow", action="append", default=[], metavar="PATH",
                   help="extra Disallow line of every robots.txt; repeatable")
    p.add_argument("--gone", action="append", default=[], metavar="PREFIX",
                   help="paths under PREFIX answer 410 Gone; repeatable")
    p.add_argument("--strip-prefix", default="", metavar="PREFIX",
                   help="a path under PREFIX (e.g. /usr/share/doc) answers 301 to the "
                        "path without it, on its folder's host")
    p.add_argument("--mirror", action="append", default=[], metavar="NAME=FOLDER",
                   help="host NAME.test also serves FOLDER, without redirecting (a "
                        "mirror); repeatable")
    p.add_argument("--https-port", type=int, default=None, metavar="PORT",
                   help="also serve the tree over TLS on PORT; cross-host redirects go to "
                        "https (needs trustme)")
    p.add_argument("--ca-out", type=Path, default=Path("serve_docs_ca.pem"), metavar="FILE",
                   help="with --https-port: write the CA certificate here (for the "
                        "crawler's --ca-file; default %(default)s)")
    args = p.parse_args()
    hosts = {h.strip() for h in args.hosts.split(",") if h.strip()}
    mirrors = dict(m.split("=", 1) for m in args.mirror)
    app = make_app(args.root, hosts, args.disallow, args.gone, args.https_port,
                   strip_prefix=args.strip_prefix.rstrip("/"), mirrors=mirrors)
    if args.https_port is None:
        web.run_app(app, host="127.0.0.1", port=args.port, print=None)
        return
    names = [f"{h}.{TLD}" for h in sorted(hosts | {"www"})]
    asyncio.run(_serve_both(app, args.port, args.https_port, _tls_context(args.ca_out, names)))


def _tls_context(ca_out: Path, names: list[str]) -> ssl.SSLContext:
    """A server context with one certificate for every host name served."""
    import trustme

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(ca_out))
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*names).configure_cert(ctx)
    return ctx


async def _serve_both(app: web.Application, port: int, https_port: int,
                      ctx: ssl.SSLContext) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    await web.TCPSite(runner, "127.0.0.1", https_port, ssl_context=ctx).start()
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    main()
