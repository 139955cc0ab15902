"""The HTML report rendered in a real headless browser (Debian's Chromium through
Playwright), from a crawl of the fixture web that was revisited.

What a reader would see is measured in the browser: every image decoded, no console
error and no request beyond the file itself, every in-page link leading somewhere, no
horizontal scrolling at usual window widths, the "How this report was made" table, every
table laid out inside the window, and the change figures' captions stating their window.

Skipped when the ``playwright`` package or ``/usr/bin/chromium`` is missing
(``pip install -e '.[browser]'`` and ``apt-get install chromium``); Playwright's own
browser download is never used.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from webcrawl.analysis.report.document import webcrawl_version

if TYPE_CHECKING:  # (conftest is not importable: several test folders have one)
    from conftest import RenderedReport

CHROMIUM = Path("/usr/bin/chromium")
#: How the probe of this machine and the CI start Chromium: without the background
#: networking switches it tries to reach outside hosts at every start.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
#: Usual window widths (CSS pixels): a laptop and a small desktop window.
WIDTHS = (1280, 1024)

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                                reason=f"{CHROMIUM} is not installed")


@dataclass
class Rendered:
    """The report open in the browser, and everything the page reported while loading."""

    page: Any
    url: str
    console: list[tuple[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def browser_page(rendered_report: RenderedReport) -> Iterator[Rendered]:
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile, \
            sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": WIDTHS[0], "height": 900})
        try:
            page = context.new_page()
            seen = Rendered(page, rendered_report.html.resolve().as_uri())
            page.on("console", lambda m: seen.console.append((m.type, m.text)))
            page.on("pageerror", lambda e: seen.page_errors.append(str(e)))
            page.on("request", lambda r: seen.requests.append(r.url))
            page.on("requestfailed", lambda r: seen.failed.append(r.url))
            page.goto(seen.url, wait_until="load")
            yield seen
        finally:
            context.close()


def test_no_console_error_and_nothing_fetched_but_the_file(browser_page: Rendered) -> None:
    assert [m for m in browser_page.console if m[0] in ("error", "warning")] == []
    assert browser_page.page_errors == []
    assert browser_page.failed == []
    # Offline and self-contained: the document itself, the rest inline data: URIs.
    assert [u for u in browser_page.requests if not u.startswith("data:")] == \
        [browser_page.url]


def test_every_image_is_decoded_and_shown(browser_page: Rendered,
                                          rendered_report: RenderedReport) -> None:
    images = browser_page.page.evaluate("""() => [...document.images].map(i => ({
        alt: i.alt, complete: i.complete, natural: i.naturalWidth,
        shown: i.clientWidth, height: i.clientHeight}))""")  # inside the 1px border
    assert len(images) == rendered_report.summary.images == len(rendered_report.figures)
    for img in images:
        assert img["complete"] and img["natural"] > 0, img
        assert img["shown"] > 100 and img["height"] > 100, img   # laid out, not collapsed
        assert img["shown"] <= img["natural"] + 0.5, img         # never blown up


def test_every_internal_link_leads_to_its_section(browser_page: Rendered) -> None:
    page = browser_page.page
    links = page.evaluate("""() => [...document.querySelectorAll('a[href^="#"]')].map(
        a => ({href: a.getAttribute('href'), text: a.textContent,
               target: !!document.getElementById(a.getAttribute('href').slice(1))}))""")
    assert len(links) >= 7                      # the table of contents, one per section
    assert [a for a in links if not a["target"]] == []
    # Following the last one scrolls its section to the top of the window.
    last = links[-1]
    page.click(f'nav a[href="{last["href"]}"]')
    top = page.evaluate("h => document.getElementById(h.slice(1)).getBoundingClientRect().top",
                        last["href"])
    assert page.evaluate("() => location.hash") == last["href"]
    assert page.evaluate("() => window.scrollY") > 0
    assert abs(top) < 2 or page.evaluate(
        "() => window.scrollY + window.innerHeight >= document.body.scrollHeight - 2")


@pytest.mark.parametrize("width", WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def test_no_horizontal_overflow_and_every_table_inside_the_window(browser_page: Rendered,
                                                                  width: int) -> None:
    page = browser_page.page
    page.set_viewport_size({"width": width, "height": 900})
    sizes = page.evaluate("""() => ({scroll: document.documentElement.scrollWidth,
                                     client: document.documentElement.clientWidth})""")
    assert sizes["scroll"] <= sizes["client"], sizes
    tables = page.evaluate("""() => [...document.querySelectorAll('table')].map(t => {
        const r = t.getBoundingClientRect();
        return {left: r.left, right: r.right, width: r.width, height: r.height,
                rows: t.rows.length,
                cells: [...t.querySelectorAll('td, th')].length,
                empty: [...t.querySelectorAll('td, th')].filter(
                    c => c.getBoundingClientRect().width === 0).length,
                first: t.rows.length ? t.rows[0].textContent.slice(0, 60) : ''};
    })""")
    assert len(tables) >= 10
    for t in tables:
        assert t["rows"] > 0 and t["cells"] > 0 and t["empty"] == 0, t
        assert t["width"] > 0 and t["height"] > 0, t
        assert t["left"] >= 0 and t["right"] <= sizes["client"] + 0.5, t


def test_the_reproducibility_header_is_shown(browser_page: Rendered,
                                             rendered_report: RenderedReport) -> None:
    rows = browser_page.page.evaluate("""() => {
        const h = [...document.querySelectorAll('#summary h3')].find(
            e => e.textContent === 'How this report was made');
        if (!h) return null;
        const t = h.nextElementSibling;
        return {visible: h.getBoundingClientRect().height > 0,
                rows: [...t.rows].map(r => [...r.cells].map(c => c.innerText))};
    }""")
    assert rows is not None and rows["visible"]
    table = dict(rows["rows"])
    assert table["webcrawl version"] == webcrawl_version()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d to \d\d:\d\d:\d\d UTC",
                        table["report made"])
    for kind in ("crawl ran", "revisit ran"):
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC to \d{4}-\d\d-\d\d "
                            r"\d\d:\d\d:\d\d UTC", table[kind]), table
    assert re.fullmatch(r"\d+ stored with the crawl; \d+ differ from the defaults \(table below\)|"
                        r"\d+ stored with the crawl(, all at their defaults| \(table below\))",
                        table["crawl settings"]), table
    assert "report command" in table


def test_the_change_figures_state_their_window(browser_page: Rendered) -> None:
    captions = browser_page.page.evaluate(
        "() => [...document.querySelectorAll('#changes figcaption')].map(c => c.innerText)")
    headings = browser_page.page.evaluate(
        "() => [...document.querySelectorAll('#changes h3')].map(c => c.innerText)")
    assert len(captions) == 2
    windows = {m for text in captions + headings for m in re.findall(r"([\d.]+)-day window",
                                                                      text)}
    assert len(windows) == 1, (captions, headings)   # one window, stated at each
    assert all("-day window" in text for text in captions + headings), (captions, headings)


def test_the_report_opens_with_its_summary(browser_page: Rendered) -> None:
    """The first section is the written summary, and its sentences are on the first
    screen (900 px) of a reader who opens the file, before any table."""
    seen = browser_page.page.evaluate("""() => {
        window.scrollTo(0, 0);
        const first = document.querySelector('section');
        const paragraphs = [...first.querySelectorAll(':scope > p')];
        const table = document.querySelector('table');
        return {id: first.id, heading: first.querySelector('h2').innerText,
                tops: paragraphs.slice(0, 2).map(p => p.getBoundingClientRect().top),
                texts: paragraphs.map(p => p.innerText),
                table_top: table.getBoundingClientRect().top};
    }""")
    assert seen["id"] == "overview" and seen["heading"].startswith("What this crawl found")
    assert len(seen["texts"]) >= 4
    assert seen["texts"][0].startswith("The crawl fetched ")
    assert all(0 < top < 900 for top in seen["tops"]), seen
    assert seen["table_top"] > max(seen["tops"])
