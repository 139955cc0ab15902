"""Ceilings: the reference lines of an ordering comparison, never contestants.

A comparison of crawl orderings may show two curves no crawler can produce:

* ``ideal``: the fetchable pages taken in decreasing *final* PageRank, discovered or
  not.  No order of k pages holds more PageRank, so every ordering lies at or below
  it at every k;
* ``omniscient`` (and any strategy that needs the final graph's PageRank, Baeza-Yates
  et al.'s oracle): the frontier ordered by the final PageRank, known in advance.  It
  still discovers pages by fetching them, so it is what a perfect importance estimate
  could do, not a bound on every ordering (a greedy order can beat it early).

Both need the final graph, which exists only once the crawl is over: they are
reference lines, so every output (``compare``'s tables, the report, the demo) shows
them apart, labelled and defined, and names the best ordering a crawler *can* run
(:func:`best_ordering`; the crawl's own recorded order counts: the crawler ran it).

References
----------
.. [1] R. Baeza-Yates, C. Castillo, M. Marin, A. Rodriguez, "Crawling a country:
   better strategies than breadth-first for web page ordering", WWW 2005 (the
   omniscient ordering as a reference).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = [
    "CEILING_DEFINITIONS",
    "IDEAL",
    "SHORT_DEFINITIONS",
    "best_ordering",
    "ceiling_definition",
    "display_label",
    "is_ceiling",
    "short_definition",
    "split_ceilings",
]

#: Curve label of the ideal ceiling: the fetchable pages by decreasing final PageRank.
IDEAL = "ideal"
#: What a ceiling's label carries in tables and legends.
CEILING_MARK = " (ceiling)"

#: Definition of each known ceiling, as the outputs print it.
CEILING_DEFINITIONS: dict[str, str] = {
    IDEAL: "the fetchable pages in decreasing final PageRank, discovered or not: no "
           "order of as many pages holds more; no crawler can run it (it needs the "
           "final graph)",
    "omniscient": "the frontier ordered by the final graph's PageRank, known in "
                  "advance: what a perfect importance estimate could do with the pages "
                  "a crawl has discovered; only a replay can run it",
}
#: The same in a few words, for one-line summaries (the demo's).
SHORT_DEFINITIONS: dict[str, str] = {
    IDEAL: "the fetchable pages by decreasing final PageRank",
    "omniscient": "the frontier ordered by final PageRank",
}
#: Definition of a registered strategy that needs the final PageRank but has none above.
_ORACLE = ("orders by the final graph's PageRank, which no crawler knows; only a "
           "replay can run it")


def ceiling_definition(label: str) -> str | None:
    """The definition of ``label`` if it is a ceiling, else None.

    Ceilings are :data:`IDEAL` and the strategies that need the final graph's
    PageRank (``"final_scores"`` in :attr:`Strategy.needs`), options included
    (``omniscient?...``).

    Examples
    --------
    >>> ceiling_definition("ideal").startswith("the fetchable pages")
    True
    >>> ceiling_definition("bfs") is None, ceiling_definition("recorded") is None
    (True, True)
    """
    if label == IDEAL:
        return CEILING_DEFINITIONS[IDEAL]
    import webcrawl.analysis.ordering.strategies  # noqa: F401  (registers the built-in ones)
    from webcrawl.analysis.ordering.strategies.registry import get_strategy, parse_spec
    from webcrawl.storage.errors import ConfigError

    try:
        name = parse_spec(label)[0]
        needs = get_strategy(name).needs
    except ConfigError:  # not a strategy: "recorded", or a label of the user's own
        return None
    return CEILING_DEFINITIONS.get(name, _ORACLE) if "final_scores" in needs else None


def short_definition(label: str) -> str | None:
    """A few words defining the ceiling ``label`` (None if it is no ceiling)."""
    if ceiling_definition(label) is None:
        return None
    return SHORT_DEFINITIONS.get(label, SHORT_DEFINITIONS.get(label.partition("?")[0],
                                                              "ordered by final PageRank"))


def is_ceiling(label: str) -> bool:
    """True if ``label`` is a ceiling (a reference line), not an ordering a crawler runs."""
    return ceiling_definition(label) is not None


def display_label(label: str) -> str:
    """``label`` as tables and legends show it: ``"ideal (ceiling)"`` for a ceiling."""
    return label + CEILING_MARK if is_ceiling(label) else label


def split_ceilings(labels: Iterable[str]) -> tuple[list[str], list[str]]:
    """``(orderings, ceilings)``: the labels a crawler can run, then the ceilings, each
    in the order given."""
    orderings: list[str] = []
    ceilings: list[str] = []
    for label in labels:
        (ceilings if is_ceiling(label) else orderings).append(label)
    return orderings, ceilings


def best_ordering(summaries: Mapping[str, Mapping[str, float]],
                  key: str = "captured_at_10pct") -> tuple[str, float] | None:
    """The ordering a crawler can run with the highest ``summaries[label][key]``.

    Ceilings never win; an ordering without the figure (or NaN) is skipped; ties go to
    the first given.  None if no ordering has the figure.

    Examples
    --------
    >>> best_ordering({"ideal": {"captured_at_10pct": 0.5},
    ...                "bfs": {"captured_at_10pct": 0.3},
    ...                "opic": {"captured_at_10pct": 0.4}})
    ('opic', 0.4)
    """
    best: tuple[str, float] | None = None
    for label in split_ceilings(summaries)[0]:
        value = summaries[label].get(key)
        if value is None or value != value:
            continue
        if best is None or value > best[1]:
            best = (label, float(value))
    return best
