"""MkDocs hooks of the webcrawl documentation (``hooks:`` in mkdocs.yml).

- The CLI and settings references are generated at build time from the argparse parsers
  (``webcrawl.crawler.cli.build_parser``): ``<!-- cli-reference -->`` in a page becomes
  one section per command with its ``--help`` text, and ``<!-- exit-statuses -->`` the
  table of exit statuses, ``<!-- crawl-settings -->`` every crawl setting with its default
  and meaning, so the references cannot drift from the code.
- ``<!-- pages-of: results -->`` becomes a list of every page of that folder with its
  title, and pages of ``guide/``, ``results/`` and ``reproductions/`` that the ``nav``
  does not name are appended to their section of the navigation: a page added to one of
  those folders is published and linked without touching mkdocs.yml.
- Pages of ``guide/`` get a search boost (:data:`SEARCH_BOOSTS`), so that the site's search
  leads to the guide first.

The generation is plain functions (:func:`cli_reference`, :func:`folder_index`) that the
tests call too.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

#: Folders whose pages join the navigation even when mkdocs.yml does not list them, and
#: the title of the nav section each belongs to.
AUTO_SECTIONS = {"guide/": "User guide", "results/": "Benchmark results",
                 "reproductions/": "Reproducing the papers"}
#: Search boosts by folder (mkdocs-material's ``search: boost:``, which a page's own front
#: matter overrides): the guide answers how-to questions, so its pages and sections rank
#: above results and reproductions that use the same words.  Measured on the built index
#: (tests/test_docs.py ranks it as the browser does): without it "change rate" put the
#: revisiting guide only 0.8% above the freshness results.
SEARCH_BOOSTS = {"guide/": 2.0}
#: Width of the generated --help texts (argparse reads $COLUMNS).
HELP_COLUMNS = 100
_PAGES_OF = re.compile(r"<!-- pages-of: ([\w/-]+) -->")


def cli_reference() -> str:
    """Markdown for every command: a heading (h3, a sub-command h4) and its ``--help``
    text, to sit under an h2 of the page so that the table of contents lists them."""
    from webcrawl.crawler.cli import build_parser
    from webcrawl.crawler.cli._help import iter_parsers

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_COLUMNS)
    try:
        parser = build_parser()
        parts = []
        for path, sub in iter_parsers(parser):
            name = f"webcrawl {path}".strip()
            # Under the page's "## Commands": the table of contents lists h2 to h4 of
            # the page's one h1, so a command is an h3 and a sub-command an h4.
            level = "###" if path.count(" ") == 0 else "####"
            parts.append(f"{level} `{name}`\n\n```text\n{sub.format_help().rstrip()}\n```\n")
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(parts)


def exit_statuses() -> str:
    """The table of exit statuses, from ``webcrawl.crawler.cli.EXIT_STATUSES``."""
    from webcrawl.crawler.cli import EXIT_STATUSES

    rows = [f"| {code} | {meaning} |" for code, meaning in sorted(EXIT_STATUSES.items())]
    return "\n".join(["| status | meaning |", "|---|---|", *rows])


def settings_reference() -> str:
    """Markdown tables of every ``CrawlSettings`` field: name, default and the comment
    written above it in ``crawler/settings.py``, one table per prefix group."""
    import ast
    import dataclasses
    import inspect

    from webcrawl.crawler.settings import CrawlSettings

    source = inspect.getsource(CrawlSettings)
    lines = source.splitlines()
    tree = ast.parse(source)
    body = tree.body[0].body  # type: ignore[attr-defined]
    defaults = {f.name: f for f in dataclasses.fields(CrawlSettings)}
    groups: dict[str, list[str]] = {}
    for node in body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        name = node.target.id
        comment: list[str] = []
        row = node.lineno - 2
        while row >= 0 and lines[row].strip().startswith("#:"):
            comment.insert(0, lines[row].strip()[2:].strip())
            row -= 1
        field = defaults[name]
        default = ("(computed)" if field.default is dataclasses.MISSING
                   else repr(field.default))
        text = " ".join(comment).replace("|", "\\|")
        groups.setdefault(name.split("_")[0], []).append(
            f"| `{name}` | `{default}` | {text} |")
    parts = []
    for prefix, rows in groups.items():
        parts.append(f"## `{prefix}_`\n\n| setting | default | meaning |\n|---|---|---|\n"
                     + "\n".join(rows) + "\n")
    return "\n".join(parts)


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("-", " ").capitalize()


def folder_index(docs_dir: Path, folder: str) -> str:
    """A Markdown list linking every page of ``docs_dir/folder`` but its index, by title."""
    pages = sorted(p for p in (docs_dir / folder).glob("*.md") if p.name != "index.md")
    return "\n".join(f"- [{_title(p)}]({p.name})" for p in pages)


# -- the hooks ------------------------------------------------------------------------

def search_boost(src_uri: str) -> float | None:
    """The search boost of a page by its folder (:data:`SEARCH_BOOSTS`), None for none."""
    return next((b for folder, b in SEARCH_BOOSTS.items() if src_uri.startswith(folder)), None)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    boost = search_boost(page.file.src_uri)
    if boost is not None:
        search = page.meta.setdefault("search", {})
        search.setdefault("boost", boost)
    if "<!-- cli-reference -->" in markdown:
        markdown = markdown.replace("<!-- cli-reference -->", cli_reference())
    if "<!-- crawl-settings -->" in markdown:
        markdown = markdown.replace("<!-- crawl-settings -->", settings_reference())
    if "<!-- exit-statuses -->" in markdown:
        markdown = markdown.replace("<!-- exit-statuses -->", exit_statuses())
    docs_dir = Path(config["docs_dir"])
    return _PAGES_OF.sub(lambda m: folder_index(docs_dir, m.group(1)), markdown)


def on_nav(nav: Any, config: Any, files: Any) -> Any:
    from mkdocs.structure.nav import Navigation, Section, _add_parent_links
    from mkdocs.structure.pages import Page

    listed = {page.file.src_uri for page in nav.pages}
    sections = {item.title: item for item in nav.items if isinstance(item, Section)}
    added = False
    for file in sorted(files.documentation_pages(), key=lambda f: f.src_uri):
        folder = next((f for f in AUTO_SECTIONS if file.src_uri.startswith(f)), None)
        if folder is None or file.src_uri in listed or AUTO_SECTIONS[folder] not in sections:
            continue
        section = sections[AUTO_SECTIONS[folder]]
        section.children.append(Page(None, file, config))
        added = True
    if not added:
        return nav
    _add_parent_links(nav.items)
    pages = _pages_of(nav.items)
    for previous, page, following in zip([None, *pages[:-1]], pages, [*pages[1:], None],
                                         strict=True):
        page.previous_page, page.next_page = previous, following
    return Navigation(nav.items, pages)


def _pages_of(items: list[Any]) -> list[Any]:
    from mkdocs.structure.pages import Page

    found: list[Any] = []
    for item in items:
        if isinstance(item, Page):
            found.append(item)
        elif getattr(item, "children", None):
            found += _pages_of(item.children)
    return found
