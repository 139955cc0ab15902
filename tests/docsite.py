"""The built documentation site, for the tests that check what a reader gets from it
(tests/test_docs.py, tests/test_docs_browser.py).

:func:`build_site` runs ``mkdocs build --strict`` once per test process (about 8 s) and
returns the folder; :class:`SiteSearch` ranks a query over the site's
``search/search_index.json`` the way mkdocs-material's search does in the browser.

How the browser ranks (mkdocs-material 9.x, ``integrations/search`` of its sources, on
lunr.js 2.3): the index is built by lunr with the ``config`` stored in the index file
(fields and their boosts, the token separator, the pipeline) and ``b(0)`` (no length
normalisation), each document with its ``boost`` (front matter ``search: boost:``); a
field's text is split into tag-free runs, each run on the separator, every token lower
case.  A query is rewritten term by term to ``term*`` (a prefix search) and run by lunr;
each hit's score is then multiplied by ``1 + b**2``, where ``b`` is 1 for a whole page
(0 for one of its sections) plus the share of the query's terms the hit matched; hits are
sorted again and grouped by page, pages in the order of their best hit.  The ``lunr``
package (a port of lunr.js, same scoring) does the lunr part here; the rest is the few
lines below.  tests/test_docs_browser.py checks this ranking against the real search box.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: What a reader types in the search box, and the guide's section it must put first.
SEARCHES = {
    "resume": "guide/crawling/#interrupting-and-resuming",
    "networkx": "guide/library/#a-crawls-graph-in-networkx-and-pandas",
    "seeds file": "guide/crawling/#seeds",
    "sandbox": "guide/sandboxing/",
    "change rate": "guide/revisiting/",
}


def have_mkdocs() -> bool:
    """Whether the docs extra (mkdocs, mkdocs-material) is installed."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("mkdocs", "material"))


@functools.cache
def build_site() -> tuple[Path, subprocess.CompletedProcess[str]]:
    """``mkdocs build --strict`` of the repository's docs into a temporary folder (kept
    for the rest of the test process), and the finished build process."""
    site = Path(tempfile.mkdtemp(prefix="webcrawl-site-")) / "site"
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(site)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin",
                              **{k: v for k, v in os.environ.items() if k == "HOME"}})
    return site, out


@dataclass(frozen=True)
class Hit:
    """One search result: a page (``guide/crawling/``) or a section of one
    (``guide/crawling/#seeds``), with its final score."""

    location: str
    title: str
    score: float

    @property
    def page(self) -> str:
        return self.location.split("#", 1)[0]


def _text_runs(html: str) -> list[str]:
    """The text between tags, as material's ``extract`` cuts it (a ``>`` ends a tag)."""
    runs: list[str] = []
    start = 0
    for end, char in enumerate(html):
        if char == "<" and end > start:
            runs.append(html[start:end])
            start = end
        elif char == ">":
            start = end + 1
    if len(html) > start:
        runs.append(html[start:])
    return runs


class SiteSearch:
    """The search box of a built site, ranked as mkdocs-material ranks it."""

    def __init__(self, index_file: Path) -> None:
        import lunr.builder
        import lunr.stemmer
        import lunr.stop_word_filter
        import lunr.trimmer

        data = json.loads(index_file.read_text(encoding="utf-8"))
        config = data["config"]
        assert config["lang"] == ["en"], "only the English pipeline is ported here"
        self._separator = re.compile(config["separator"])
        steps = {"trimmer": lunr.trimmer.trimmer,
                 "stopWordFilter": lunr.stop_word_filter.stop_word_filter,
                 "stemmer": lunr.stemmer.stemmer}
        builder = lunr.builder.Builder()
        builder.pipeline.add(*[fn for name, fn in steps.items() if name in config["pipeline"]])
        if "stemmer" in config["pipeline"]:
            builder.search_pipeline.add(lunr.stemmer.stemmer)
        builder.b(0)
        builder.ref("location")
        for name, spec in config["fields"].items():
            builder.field(name, boost=spec.get("boost", 1), extractor=self._tokens_of(name))
        self.docs: dict[str, dict[str, Any]] = {}
        self._parent: dict[str, str] = {}
        for doc in data["docs"]:
            page = doc["location"].split("#", 1)[0]
            if page in self.docs:
                self._parent[doc["location"]] = page
            self.docs.setdefault(page, doc)
            self.docs[doc["location"]] = doc
            builder.add(doc, {"boost": doc["boost"]} if "boost" in doc else None)
        self._stop_word = lunr.stop_word_filter.stop_word_filter
        self.index = builder.build()

    def _tokens_of(self, field: str) -> Callable[[dict[str, Any]], list[str] | None]:
        def tokens(doc: dict[str, Any]) -> list[str] | None:
            value = doc.get(field)
            if value is None:
                return None
            values = value if isinstance(value, list) else [value]
            return [token for text in values for run in _text_runs(text)
                    for token in self._separator.split(run) if token]
        return tokens

    def search(self, query: str) -> list[Hit]:
        """Every hit of ``query`` typed in the search box, best first."""
        terms = [t for t in query.split() if t]
        lunr_query = " ".join(t if t.endswith("*") else f"{t}*" for t in terms)
        clauses = [t.rstrip("*").lower() for t in terms]
        hits = []
        for result in self.index.search(lunr_query):
            ref = result["ref"]
            matched = list(result["match_data"].metadata)
            found: dict[str, bool] = {}
            left = list(clauses)
            for term in matched:
                for clause in list(left):
                    if term.startswith(clause):
                        found[clause] = True
                        left.remove(clause)
            found |= {c: False for c in left if self._stop_word(_Token(c))}
            share = sum(found.values()) / len(found) if found else 0.0
            boost = (ref not in self._parent) + share
            hits.append(Hit(ref, self.docs[ref]["title"], result["score"] * (1 + boost ** 2)))
        return sorted(hits, key=lambda h: -h.score)

    def pages(self, query: str) -> list[str]:
        """The pages the search box lists for ``query``, in its order (by best hit)."""
        return list(dict.fromkeys(hit.page for hit in self.search(query)))


class _Token:
    """The one method of a lunr token that the stop-word filter calls."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text
