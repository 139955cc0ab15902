"""A page's own text: the text of its ``<body>`` without the site's furniture.

The near-duplicate test compares pages by their text (:mod:`webcrawl.crawler.shingles`
sketches it); link extraction hands it over from the parse that gave the links
(:func:`webcrawl.crawler.links.extract_links` with ``text``).  This module does not import
numpy: a shard worker takes its pages' texts without it, and leaves the sketches to
the coordinator unless an answer frame holds enough pages
(:func:`webcrawl.crawler.near_batch.sketch_answers`).

Contract
--------
* **Text, not markup.**  :func:`page_text` is the text of the parsed page's ``<body>``
  (lexbor's text walk, text nodes joined by one space) with what is not the page's own
  content taken out first: ``script``, ``style``, ``noscript``, ``template``, the HTML5
  elements for site furniture (``nav``, ``header``, ``footer``, ``aside``) and elements
  with the matching ARIA landmark roles (``navigation``, ``banner``, ``contentinfo``,
  ``complementary``, ``search``), as the CSS selector :data:`_FURNITURE` finds them.
  The tree is changed in place: call it after the links were read.
* **Cost.**  lexbor parses a selector at every search: the furniture is found by one
  selector of its tags and ``[role]``, the roles' values read in Python on the few
  elements that have one (the same elements as :data:`_FURNITURE`; measured in
  ``benchmarks/bench_near_dup.py``), and each is removed once.
"""

from __future__ import annotations

import threading

from selectolax.lexbor import LexborCSSSelector, LexborHTMLParser, LexborNode

__all__ = ["MAX_TEXT_BYTES", "page_text"]

#: Bytes of a page's text read for its sketch (the rest is ignored).
MAX_TEXT_BYTES = 256 * 1024

#: Elements whose text is not the page's own content.
_FURNITURE = ("script, style, noscript, template, nav, header, footer, aside, "
              '[role="navigation"], [role="banner"], [role="contentinfo"], '
              '[role="complementary"], [role="search"]')
#: The same elements by their tag, and every element with a ``role`` attribute: one
#: selector with a single attribute test instead of five value tests (the roles' values
#: are then read in Python, on the few elements that have one): the page's text in 27
#: against 32 us a fixture page, the same nodes (benchmarks/bench_near_dup.py).
_FURNITURE_TAGS = frozenset(("script", "style", "noscript", "template", "nav", "header",
                             "footer", "aside"))
_TAGS_OR_ROLE = ", ".join(sorted(_FURNITURE_TAGS)) + ", [role]"
_FURNITURE_ROLES = frozenset(("navigation", "banner", "contentinfo", "complementary",
                              "search"))


#: One CSS parser per thread (big pages are parsed in worker threads): ``tree.css``
#: makes a new parser at every call, which cost about 80 us a fixture page against
#: about 3 us for the match itself (benchmarks/bench_near_dup.py).
_SELECTORS = threading.local()


def _selector() -> LexborCSSSelector:
    selector: LexborCSSSelector | None = getattr(_SELECTORS, "furniture", None)
    if selector is None:
        selector = _SELECTORS.furniture = LexborCSSSelector()  # type: ignore[no-untyped-call]
    return selector


def _furniture(tree: LexborHTMLParser) -> list[LexborNode]:
    """The furniture elements of ``tree``, in document order: the nodes of the selector
    :data:`_FURNITURE`, found by :data:`_TAGS_OR_ROLE`.

    A ``role`` element is furniture when its ``role`` is one of the roles, exactly (CSS
    attribute values are case-sensitive).  CSS ``[role]`` also matches the first
    attribute whose *local* name is ``role`` (``xlink:role`` in SVG and MathML), which
    the attribute names in Python do not tell apart: a page with an attribute named
    ``...:role`` is left to the full selector.
    """
    root = tree.root
    if root is None:
        return []
    selector = _selector()
    found: list[LexborNode] = []
    seen: set[int] = set()  # lexbor gives an element twice if it matches two selectors
    for node in selector.find(_TAGS_OR_ROLE, root):
        if node.mem_id in seen:
            continue
        seen.add(node.mem_id)
        if node.tag in _FURNITURE_TAGS:
            found.append(node)
            continue
        attributes = node.attributes
        if any(":role" in name for name in attributes):
            full = selector.find(_FURNITURE, root)
            return list({node.mem_id: node for node in full}.values())
        if attributes.get("role") in _FURNITURE_ROLES:
            found.append(node)
    return found


def page_text(tree: LexborHTMLParser) -> str:
    """The text of the page's own content (see the module docstring); changes ``tree``."""
    # Matches come in document order, each once, so in reverse a node's matched
    # descendants are removed before it (never a node already freed with its ancestor).
    for node in reversed(_furniture(tree)):
        node.decompose()
    body = tree.body
    if body is None:
        return ""
    return body.text(deep=True, separator=" ")
