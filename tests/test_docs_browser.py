"""The documentation site in a real headless browser (Debian's Chromium through Playwright),
served from its built folder on loopback with every other request blocked, as offline.

Every page loads without reaching another host and without a console error, and the
search box, typed into as a reader does, lists the guide's section first for the queries
of tests/test_docs.py: the same first result, and the same pages in the same order, as
:class:`docsite.SiteSearch` (the ranking ported from the theme) gives, which checks the
port against the real thing.

Skipped without the docs extra, the ``playwright`` package or ``/usr/bin/chromium``
(``pip install -e '.[docs,browser]'`` and ``apt-get install chromium``); Playwright's
own browser download is never used.
"""

from __future__ import annotations

import functools
import http.server
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from docsite import SEARCHES, SiteSearch, build_site, have_mkdocs

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = Path("/usr/bin/chromium")
#: As tests/analysis/report/test_report_browser.py starts Chromium (no background
#: networking: it reaches outside hosts at every start otherwise).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
pytestmark = [
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.skipif(not have_mkdocs(), reason="the docs extra is not installed"),
]
#: How many of the search box's pages must come in the ported ranking's order.
COMPARED_PAGES = 5


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class Browser:
    """A browser page on the served site, with every request it tried to send elsewhere
    (blocked) and every console error."""

    page: Any
    origin: str
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def site() -> Path:
    folder, out = build_site()
    assert out.returncode == 0, out.stderr[-3000:]
    return folder


@pytest.fixture(scope="module")
def browser(site: Path) -> Iterator[Browser]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with tempfile.TemporaryDirectory(prefix="chromium-") as profile, \
                sync_api.sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1280, "height": 900}, service_workers="block")
            try:
                seen = Browser(context.new_page(), origin)

                def route(request_route: Any) -> None:
                    url = request_route.request.url
                    if url.startswith((f"{origin}/", "data:", "blob:")):
                        request_route.continue_()
                    else:  # the network is off: only the site itself answers
                        seen.blocked.append(url)
                        request_route.abort("internetdisconnected")

                context.route("**/*", route)
                seen.page.on("console", lambda m: seen.errors.append(m.text)
                             if m.type == "error" else None)
                seen.page.on("pageerror", lambda e: seen.errors.append(str(e)))
                yield seen
            finally:
                context.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix().removesuffix("index.html")
                  for p in site.rglob("index.html"))


def test_every_page_loads_offline_without_an_error(site: Path, browser: Browser) -> None:
    pages = _pages(site)
    assert len(pages) >= 30
    for path in pages:
        # networkidle: what a page fetches after its load event (the search index, a
        # theme's repository facts) is tried before the next page replaces it.
        response = browser.page.goto(f"{browser.origin}/{path}", wait_until="networkidle")
        assert response is not None and response.ok, path
    assert browser.blocked == []
    assert browser.errors == []


def _search_box(browser: Browser, query: str) -> list[list[str]]:
    """The search box's results for ``query``: per page listed, its links in order."""
    page = browser.page
    page.goto(f"{browser.origin}/?q={quote(query)}", wait_until="load")
    page.wait_for_selector(".md-search-result__list > li", timeout=30_000)
    items = page.evaluate("""() => [...document.querySelectorAll(
        '.md-search-result__list > li')].map(li => [...li.querySelectorAll(
        'a.md-search-result__link')].map(a => a.getAttribute('href')))""")
    prefix = f"{browser.origin}/"
    return [[href.removeprefix(prefix) for href in links] for links in items]


def test_the_search_box_ranks_as_the_ported_search(site: Path, browser: Browser) -> None:
    ported = SiteSearch(site / "search" / "search_index.json")
    for query, expected in SEARCHES.items():
        listed = _search_box(browser, query)
        pages = [links[0] for links in listed]
        assert pages[:COMPARED_PAGES] == ported.pages(query)[:COMPARED_PAGES], query
        # The first page listed is the expected section's, with that section first
        # among the page's sections.
        first = listed[0]
        assert first[0] == expected.split("#")[0], (query, first)
        assert expected in first[:2], (query, first)
    assert browser.blocked == []
