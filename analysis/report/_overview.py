"""The report's first section, "What this crawl found", and the glossary beside every
metric (:mod:`webcrawl.analysis.report.document`).

Every sentence of the overview is computed from the crawl's own data and the other
sections' results (``ReportContext.figures``): sizes and outcomes, the captured graph
and its bow-tie, exact duplicates (pages whose bodies have the same digest), the top
pages, which ordering a crawler can run captured PageRank fastest (the ceilings
``ideal`` and ``omniscient`` given apart, as references), and change rates.  No sentence is
written for one kind of crawl (the fixture web) and shown on another: each states a
measured number, and a comparative word ("most", "a minority") is chosen from it.

:func:`glossary` gives the definitions of the terms a section's HTML uses (its table
headers, region names and metric labels), shown under that section.

References
----------
.. [1] A. Broder et al., "Graph structure in the Web", WWW9, 2000.
.. [2] M. Najork and J. L. Wiener, "Breadth-first crawling yields high-quality pages",
   WWW 2001.
.. [3] L. Bennouas and F. de Montgolfier, "Random web crawls", WWW 2007.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from webcrawl.analysis.ordering.ceilings import (
    CEILING_DEFINITIONS,
    best_ordering,
    split_ceilings,
)

if TYPE_CHECKING:
    from webcrawl.analysis.report.context import ReportContext
    from webcrawl.analysis.report.html import Section

__all__ = ["GLOSSARY", "glossary", "ordering_name", "overview_section", "settings_rows"]

#: Term (as the report writes it) -> its definition.  The glossary of a section lists
#: the terms its HTML uses.
GLOSSARY: dict[str, str] = {
    "HTML page": "a URL that answered 2xx with an HTML document (outcome fetched); the "
                 "report's \"pages\" are these",
    "URL fetched": "a URL whose request ended, whatever the answer (an HTML page, another "
                   "file, a redirect, an HTTP error) or the failure; --max-pages counts these",
    "fetch attempt": "one request of a URL, retries included (the fetches table)",
    "PageRank": "the share of a random surfer's time spent on a page (damping 0.85; the "
                "scores sum to 1)",
    "x mean": "a page's score divided by the mean score over the graph (1 = average)",
    "HITS authority": "Kleinberg's authority score: high for pages linked from good hubs",
    "in-links": "distinct pages of the graph linking to the page",
    "SCC": "the largest strongly connected component: from any of its pages every other "
           "one can be reached by links",
    "IN": "pages that reach the SCC by links but cannot be reached from it",
    "OUT": "pages reached from the SCC that do not link back into it",
    "TENDRILS": "pages outside SCC, IN and OUT that are reachable from IN, or that reach "
                "OUT, but not both",
    "TUBES": "pages on a path from IN to OUT that avoids the SCC",
    "OTHER": "the remaining pages of the SCC's weakly connected component, attached only "
             "through tendrils; Broder et al. do not name them, so they are counted apart",
    "DISCONNECTED": "pages outside the weakly connected component of the SCC",
    "alpha": "the exponent of the fitted power law p(k) ~ k^-alpha",
    "x_min": "the smallest degree the power law is fitted from",
    "KS": "the Kolmogorov-Smirnov distance between the fitted law and the data "
          "(0 = identical)",
    "PR@1%": "the share of the final graph's PageRank held by the first 1% of the pages "
             "an ordering fetched (PR@10%, PR@50%: the first 10%, 50%)",
    "top100@10%": "the share of the 100 pages of highest PageRank that an ordering had "
                  "fetched after 10% of its pages",
    "meanPR first 10%": "the mean PageRank of the first 10% of the pages fetched, in "
                        "units of the graph's mean (1 = no better than average)",
    "slice": "the crawl cut into equal parts in fetch order (Najork and Wiener's days); "
             "a random order finds the top pages on the middle slice on average",
    "fetchable set": "the URLs the recorded crawl got an HTTP answer for: the only URLs a "
                     "virtual crawl may fetch",
    "ideal": "a ceiling, not an ordering: " + CEILING_DEFINITIONS["ideal"],
    "omniscient": "a ceiling, not an ordering: " + CEILING_DEFINITIONS["omniscient"],
    "freshness": "the share of the stored copies that still match the live pages",
    "censored": "a page with no change seen: its change interval is only known to be at "
                "least its observed span",
}
#: Terms recognised in a section's HTML by a pattern of their own (default: the term).
_PATTERNS = {
    "PR@1%": r"PR@\d+%", "top100@10%": r"top\d+@\d+%", "meanPR first 10%": r"meanPR first",
    "URL fetched": r"URLs? fetched", "HTML page": r"HTML pages?",
    "x mean": r"x mean", "slice": r"\bslices?\b", "censored": r"\bcensored\b",
    "alpha": r"\balpha\b", "KS": r"\bKS\b", "IN": r"\bIN\b", "OUT": r"\bOUT\b",
    "SCC": r"\bSCC\b", "OTHER": r"\bOTHER\b", "fetch attempt": r"fetch attempts?",
    "ideal": r"\bideal\b", "omniscient": r"\bomniscient\b",
}


def glossary(markup: str) -> str:
    """A definition list of the :data:`GLOSSARY` terms that ``markup`` uses ('' if none)."""
    text = re.sub(r"<[^>]+>", " ", markup)
    terms = [t for t in GLOSSARY if re.search(_PATTERNS.get(t, re.escape(t)), text)]
    if not terms:
        return ""
    items = "".join(f"<dt>{html.escape(t)}</dt><dd>{html.escape(GLOSSARY[t])}</dd>"
                    for t in terms)
    return ('<details class="terms" open><summary>Terms used here</summary>'
            f"<dl>{items}</dl></details>")


def settings_rows(stored: str | None,
                  defaults: Mapping[str, Any] | None) -> tuple[list[list[Any]], int]:
    """Rows ``[setting, value, default]`` of the stored crawl settings that differ from
    ``defaults`` (every stored one, default unknown, when ``defaults`` is None), and the
    number of settings stored."""
    if not stored:
        return [], 0
    try:
        values = json.loads(stored)
    except ValueError:
        return [["settings (unreadable)", stored, ""]], 1
    if not isinstance(values, dict):
        return [["settings (unreadable)", stored, ""]], 1

    def show(value: Any) -> str:
        if isinstance(value, list):
            return ", ".join(map(str, value)) or "(none)"
        return "(none)" if value is None else str(value)

    rows = [[name, show(value), show(defaults[name]) if defaults and name in defaults
             else "unknown"]
            for name, value in sorted(values.items())
            if defaults is None or name not in defaults or defaults[name] != value]
    return rows, len(values)


def _share(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "0%"


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def overview_section(ctx: ReportContext, sec: Section) -> None:
    """Write the written summary of what was found, sentence by sentence."""
    paragraphs = [p for p in (_sizes(ctx), _coverage(ctx), _duplicates(ctx), _top(ctx),
                              _orderings(ctx), _changes(ctx)) if p]
    for text in paragraphs:
        sec.text(text)


def _sizes(ctx: ReportContext) -> str:
    from webcrawl.storage.reader import OUTCOMES
    from webcrawl.storage.records import REQUESTED

    codes = ctx.urls.outcome
    counts = {OUTCOMES[c].value: int(n) for c, n in zip(*np.unique(codes[codes >= 0],
                                                                   return_counts=True),
                                                         strict=True)}
    frontier = int(np.count_nonzero(codes < 0))
    fetched = sum(counts.get(k, 0) for k in REQUESTED)
    pages = counts.get("fetched", 0)
    dead = _dead_hosts(ctx.meta)
    if fetched == 0:
        return (f"No URL was fetched: the database holds {_plural(len(codes), 'URL')} on "
                f"{_plural(len(ctx.host_names), 'host')}, none of them answered"
                + (f"; {dead}" if dead else "") + ".")
    other = [(counts.get("redirect", 0), "redirect"), (counts.get("not_html", 0),
             "other file"), (counts.get("http_error", 0), "HTTP error"),
             (counts.get("network_error", 0) + counts.get("timeout", 0),
              "network failure or timeout"), (counts.get("too_large", 0), "oversized body")]
    rest = [_plural(n, word) for n, word in other if n]
    ended = np.isin(codes, [OUTCOMES.index(k) for k in REQUESTED])
    hosts = int(np.unique(ctx.urls.host_ids[ended]).size)
    seen = len(ctx.host_names)
    text = (f"The crawl fetched {_plural(fetched, 'URL')} on {_plural(hosts, 'host')}"
            + (f" ({seen:,} hosts seen in links)" if seen > hosts else "")
            + f": {_plural(pages, 'HTML page')} ({_share(pages, fetched)})"
            + (f", {', '.join(rest)}" if rest else "") + ".")
    unfetched = [(counts.get("out_of_scope", 0), "were out of scope"),
                 (counts.get("robots_excluded", 0), "were excluded by robots.txt"),
                 (counts.get("robots_unreachable", 0), "were on hosts whose robots.txt "
                  "could not be fetched"),
                 (frontier, "were still waiting in the frontier")]
    said = [f"{n:,} {what}" for n, what in unfetched if n]
    text += (f" It discovered {_plural(len(codes), 'URL')} in all"
             + (f"; of those never fetched, {', '.join(said)}" if said else "") + "."
             + (f" {dead[0].upper()}{dead[1:]}." if dead else ""))
    return text


def _dead_hosts(meta: Mapping[str, str]) -> str:
    """The hosts whose robots.txt could not be fetched, with the crawl's cause (meta
    ``robots_unreachable:<host>``, :mod:`webcrawl.crawler.engine.dead_hosts`)."""
    prefix = "robots_unreachable:"
    dead = sorted((k[len(prefix):], v) for k, v in meta.items() if k.startswith(prefix) and v)
    if not dead:
        return ""
    named = ", ".join(f"{host} ({cause})" for host, cause in dead[:5])
    more = f" and {len(dead) - 5:,} more" if len(dead) > 5 else ""
    return f"robots.txt unreachable on {_plural(len(dead), 'host')}: {named}{more}"


def _coverage(ctx: ReportContext) -> str:
    bt = ctx.figures.get("bowtie")
    g = ctx.graph
    text = f"Every measurement below runs on the {g.describe()}."
    if not bt or g.n == 0:
        return text
    n = sum(bt.values())
    scc, into, out = bt.get("SCC", 0), bt.get("IN", 0), bt.get("OUT", 0)
    rest = n - scc - into - out
    size = ("all" if scc == n else "most" if 2 * scc > n else "half" if 2 * scc == n
            else "a minority")
    text += (f" The largest strongly connected component (SCC) holds {size} of its pages "
             f"({_plural(scc, 'page')}, {_share(scc, n)}): from any of them every other "
             "one can be reached by links.")
    if scc < n:
        text += (f" {_plural(into, 'page')} ({_share(into, n)}) reach the SCC without "
                 f"being reachable from it (IN), {_plural(out, 'page')} ({_share(out, n)}) "
                 "are reached from it without linking back (OUT)")
        text += (f", and the other {_plural(rest, 'page')} ({_share(rest, n)}) lie in "
                 "neither direction." if rest else ".")
    seeds = json.loads(ctx.meta.get("seeds", "[]") or "[]")
    if seeds and into:
        index = {u: i for i, u in enumerate(g.urls)}
        seed_nodes = [index[s] for s in seeds if s in index]
        if seed_nodes and ctx.bowtie is not None:
            from webcrawl.analysis.graph.bowtie_alg import Region

            labels = ctx.bowtie.labels[np.asarray(seed_nodes)]
            outside = int(np.count_nonzero(labels != Region.SCC))
            if outside:
                who = ("The seed lies" if len(seed_nodes) == 1 else
                       f"{outside} of the {len(seed_nodes)} seeds lie")
                text += (f" {who} outside the SCC, which is how a crawl that follows "
                         "links forward finds pages that only link into it.")
    return text


def _duplicates(ctx: ReportContext) -> str:
    from webcrawl.storage.reader import FETCH_KINDS, OUTCOMES
    from webcrawl.storage.records import FetchKind, Outcome

    f = ctx.fetches
    page = ((f["kind"] == FETCH_KINDS.index(FetchKind.CRAWL))
            & (f["outcome"] == OUTCOMES.index(Outcome.FETCHED)))
    digests = f["digest"][page]
    known = np.array([d is not None for d in digests], dtype=bool)
    if not known.any():
        return ""
    values = digests[known].astype(str)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    copies = int(np.count_nonzero(counts[inverse] > 1))
    groups = int(np.count_nonzero(counts > 1))
    if copies == 0:
        return (f"No two of the {_plural(int(known.sum()), 'HTML page')} have the same "
                "content (compared by the digest of their bodies).")
    return (f"{_plural(copies, 'HTML page')} ({_share(copies, int(known.sum()))}) share "
            f"their exact content with another page, in {_plural(groups, 'group')} of "
            "identical bodies (compared by digest): the same page under several URLs.")


def _top(ctx: ReportContext) -> str:
    top = ctx.figures.get("pagerank_top") or []
    if not top:
        return ""
    n = ctx.graph.n
    (url, score), *rest = top
    text = (f"The page of highest PageRank is {url}, with {score * n:.1f} times the mean "
            "score")
    if rest:
        text += "; then " + ", ".join(f"{u} ({s * n:.1f}x)" for u, s in rest[:2])
    return text + "."


def ordering_name(label: str) -> str:
    """How the report's sentences name an ordering (the recorded one in words)."""
    return "the crawl's own order (recorded)" if label == "recorded" else label


def _orderings(ctx: ReportContext) -> str:
    comparison: Mapping[str, Mapping[str, float]] = ctx.figures.get("comparison") or {}
    key = "captured_at_10pct"
    best = best_ordering(comparison, key) if comparison else None
    if best is not None:
        orderings, ceilings = split_ceilings(comparison)
        others = sorted((o for o in orderings if o != best[0] and key in comparison[o]),
                        key=lambda o: -comparison[o][key])
        text = (f"Of the {len(orderings)} orderings compared, {ordering_name(best[0])} "
                f"captured PageRank fastest: its first 10% of pages held {best[1]:.2f} of "
                "the final graph's PageRank (PR@10%)")
        if others:
            text += ", against " + ", ".join(f"{o} {comparison[o][key]:.2f}" for o in others)
        text += "."
        shown = [c for c in ceilings if key in comparison[c]]
        if shown:
            one = len(shown) == 1
            text += (f" For reference, the ceiling{'' if one else 's'} "
                     + ", ".join(f"{c} held {comparison[c][key]:.2f}" for c in shown)
                     + f": no crawler can run {'it, as it needs' if one else 'them, as they need'}"
                     " the final graph (see Terms used here).")
        return text
    quality = ctx.figures.get("quality") or {}
    if key in quality:
        return (f"The crawl's own order put {quality[key]:.2f} of the final graph's "
                "PageRank in its first 10% of pages (PR@10%; a random order averages "
                "about 0.10). The comparison section replays other orderings when asked.")
    return ""


def _changes(ctx: ReportContext) -> str:
    changes = ctx.figures.get("changes")
    if not changes:
        return ""
    text = (f"Revisits ({changes['revisits']:,}) over a {changes['days']:.3g}-day window "
            f"saw {_plural(changes['changed_pages'], 'page')} of {changes['pages']:,} "
            f"({_share(changes['changed_pages'], changes['pages'])}) change at least once; "
            f"the median estimated change rate is {changes['median_rate']:.3g} per day")
    if changes.get("rate_error") is not None:
        text += (f", within a median relative error of {changes['rate_error']:.2f} of the "
                 "true rates")
    return text + "."
