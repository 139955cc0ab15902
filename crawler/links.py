"""Link extraction from HTML with selectolax (lexbor).

Extracted, in document order: ``<a href>``, ``<area href>``, ``<frame src>``,
``<iframe src>``, resolved against the first ``<base href>`` (else the page URL) and
normalised with :func:`webcrawl.crawler.urls.normalize_url`, which drops non-http(s) schemes
(``mailto:``, ``javascript:``, ``data:`` ...).  An empty ``href=""`` is a link to the
page itself (its base URL), as ``href="#top"`` is.  A page given as bytes is decoded
as browsers decode it (:mod:`webcrawl.crawler.encodings`) and its links' queries are encoded in
its encoding.  Each distinct target is kept once (first occurrence), up to
``max_links`` targets; how many distinct targets were dropped beyond that is reported
(``PageLinks.cut``) so the crawl can record the page as cut.  A target is flagged
nofollow when every link to it carries ``rel=nofollow``.  ``<meta name="robots">`` (or
the crawler's own agent name) ``nofollow``/``noindex``/``none``, separated by commas or
spaces, is reported for the page (the crawl obeys nofollow and ignores noindex:
docs/guide/robots.md).  With ``sketch``, the page's text sketch is taken from the same
parse, after the links (:mod:`webcrawl.crawler.shingles`; ``PageLinks.sketch``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from selectolax.lexbor import LexborHTMLParser, LexborNode
from webcrawl.crawler.encodings import decode_page, page_encoding, url_encoding
from webcrawl.crawler.urls import _SCHEME, _normalize_absolute, normalize_url

if TYPE_CHECKING:
    import numpy as np

__all__ = ["PageLinks", "extract_links", "link_ids", "page_link_ids"]

#: Link elements and the attribute holding their target, walked tag by tag.
_LINK_TAGS = (("a", "href"), ("area", "href"), ("frame", "src"), ("iframe", "src"))
_TARGET_ATTRIBUTE = dict(_LINK_TAGS)
#: All of them at once, in document order: used when a page has more than one kind.
_LINK_SELECTOR = "a[href], area[href], frame[src], iframe[src]"
_ABSOLUTE = ("http://", "https://")
_CRAWLED_SCHEMES = frozenset(("http", "https"))
_C0_SPACE = "".join(chr(i) for i in range(0x21))


class _Resolver:
    """``normalize_url(href, base, encoding)`` with fast paths for the common href forms.

    ``base`` must be normalised (as :func:`normalize_url` returns it).  ``urljoin``-style
    resolution dominates link extraction; these forms resolve by plain string
    operations into an absolute URL that ``normalize_url``'s cached absolute form then
    normalises (one cache entry per target, whatever page links to it):

    * the fragment is cut first (WHATWG: it starts at the first ``#``; it is dropped),
      so ``x.html#a`` and ``x.html#b`` share one cache entry;
    * ``""`` (and so ``#f``): the base itself;
    * ``//host...``: the base's scheme + href; ``/path``: the base's origin + href;
    * ``?q``: the base up to its query + href;
    * ``http(s)://...``: as is;
    * a relative path (no ``:`` before its first ``/``, so no scheme: ``x.html``,
      ``_static/x``, ``../x``): the base's directory + href, with the leading ``../``
      and ``./`` segments applied to the directory first (RFC 3986 5.2.4 removes
      dot-segments left to right, and the normalised base's directory has none), so
      ``../x`` from ``/a/b/`` is cached as ``/a/x``, not ``/a/b/../x``;
    * another scheme (``mailto:``, ``javascript:``, ``tel:``, ``data:`` ...): ``None``
      at once, as ``normalize_url`` drops every scheme but http(s).

    Anything else (``http:x``, backslashes, tabs and newlines, a space before the
    fragment ...) goes through ``normalize_url`` itself.  The equivalence is tested
    form by form, on generated hrefs and bases, on the WHATWG URL test data and on the
    fixture web's links in ``tests/crawler/test_links.py``.
    """

    __slots__ = ("base", "directory", "encoding", "origin", "path_end", "scheme")

    def __init__(self, base: str, encoding: str | None = None) -> None:
        self.base = base
        self.encoding = encoding
        scheme_end = base.index(":")
        self.scheme = base[:scheme_end]
        slash = base.find("/", scheme_end + 3)
        self.origin = base if slash < 0 else base[:slash]
        path_end = len(base)
        for mark in ("?", "#"):
            at = base.find(mark)
            if 0 <= at < path_end:
                path_end = at
        self.path_end = path_end
        path = base[:path_end]
        self.directory = path[: path.rfind("/") + 1] if slash >= 0 else path + "/"

    def __call__(self, raw: str) -> str | None:
        href = raw.strip(_C0_SPACE)  # WHATWG strips C0 controls and space, not NBSP
        hash_at = href.find("#")
        if hash_at >= 0:
            href = href[:hash_at]
            if href and href[-1] <= " ":  # 'x #f': the space is the path's, not stripped
                return normalize_url(raw, self.base, self.encoding)
        if "\\" in href or "\t" in href or "\n" in href or "\r" in href:
            return normalize_url(raw, self.base, self.encoding)  # browser clean-up rules first
        if not href:
            return _normalize_absolute(self.base, self.encoding)
        first = href[0]
        if first == "/":
            if href[1:2] != "/":
                return _normalize_absolute(self.origin + href, self.encoding)
            if href[2:3] not in ("", "/", "?"):  # '//host...'
                return _normalize_absolute(self.scheme + ":" + href, self.encoding)
        elif first == "?":
            return _normalize_absolute(self.base[: self.path_end] + href, self.encoding)
        elif href.startswith(_ABSOLUTE):
            return _normalize_absolute(href, self.encoding)
        else:
            colon = href.find(":")
            if colon < 0 or 0 <= href.find("/") < colon:
                # No scheme: a relative path, the base's directory + href (RFC 3986 5.2.3).
                return _normalize_absolute(self._merge(href), self.encoding)
            if href[:8].lower().startswith(_ABSOLUTE):
                return _normalize_absolute(href, self.encoding)
            scheme = _SCHEME.match(href)
            if scheme is not None and scheme.group(1).lower() not in _CRAWLED_SCHEMES:
                return None
        return normalize_url(raw, self.base, self.encoding)

    def _merge(self, href: str) -> str:
        """The directory + a relative path, its leading ``./`` and ``../`` applied."""
        directory = self.directory
        while href[:1] == ".":
            if href[:2] == "./":
                href = href[2:]
            elif href[:3] == "../":
                href = href[3:]
                cut = directory.rfind("/", 0, -1)
                if cut >= len(self.origin):  # never above the root
                    directory = directory[: cut + 1]
            else:
                break
        return directory + href


@dataclass(slots=True)
class PageLinks:
    """What a page links to, and its meta robots directives."""

    urls: list[str] = field(default_factory=list)
    nofollow: set[str] = field(default_factory=set)
    meta_nofollow: bool = False
    meta_noindex: bool = False
    #: distinct targets beyond ``max_links``, dropped (0: the page was not cut)
    cut: int = 0
    #: the min-hash sketch of the page's text (:mod:`webcrawl.crawler.shingles`), when
    #: asked for and the page has enough text; else None
    sketch: np.ndarray | None = None
    #: the page's text (:func:`webcrawl.crawler.page_text.page_text`), when asked for:
    #: to be sketched later with other pages' (``shingles.text_sketches``)
    text: str | None = None
    #: the decoded page, when asked for: its text is found later, from a parse of its
    #: own (the near-duplicate test's process, :mod:`webcrawl.crawler.near_process`)
    html: str | None = None


def _link_elements(tree: LexborHTMLParser) -> tuple[list[LexborNode], str | None]:
    """The page's link elements in document order, and the attribute holding their
    target when they are all of one kind (``None``: it depends on each one's tag).

    A tag walk (``tree.tags``) costs far less than lexbor's CSS engine, which compiles
    the selector on every call, and yields one kind in document order.  Pages with one
    kind of link element (usually only ``<a>``) are walked once per kind; only a page
    mixing kinds needs the selector, whose matches come in document order across kinds.
    """
    found: list[LexborNode] = []
    attribute: str | None = None
    for tag, attr in _LINK_TAGS:
        nodes = tree.tags(tag)
        if nodes:
            if found:
                return tree.css(_LINK_SELECTOR), None
            found, attribute = nodes, attr
    return found, attribute


def _base_href(tree: LexborHTMLParser) -> str | None:
    """The ``href`` of the first ``<base href>`` (``""`` if it has no value), else None.

    As ``tree.css_first("base[href]")`` finds it: CSS ``[href]`` also matches the
    ``xlink:href`` attribute of a ``<base>`` in SVG or MathML, so a ``<base>`` with
    such an attribute is left to the selector.
    """
    for node in tree.tags("base"):
        attrs = node.attributes
        if "href" in attrs:
            return attrs["href"] or ""
        if "xlink:href" in attrs:
            first = tree.css_first("base[href]")
            return None if first is None else first.attributes.get("href") or ""
    return None


def _meta_robots(tree: LexborHTMLParser, agent: str) -> tuple[bool, bool]:
    nofollow = noindex = False
    for node in tree.tags("meta"):
        attrs = node.attributes
        name = attrs.get("name")
        if name is None or name.strip().lower() not in ("robots", agent):
            continue
        # directives separated by commas, spaces or both ("noindex nofollow"), as
        # Google reads them and pages write them
        tokens = set((attrs.get("content") or "").lower().replace(",", " ").split())
        if "none" in tokens:
            return True, True
        nofollow |= "nofollow" in tokens
        noindex |= "noindex" in tokens
    return nofollow, noindex


def extract_links(html: str | bytes, page_url: str, *, max_links: int = 10_000,
                  agent: str = "webcrawl", charset: str | None = None,
                  sketch: bool = False, text: bool = False,
                  keep_html: bool = False) -> PageLinks:
    """Extract the normalised out-links of an HTML page (see the module docstring).

    ``page_url`` is normalised (:func:`normalize_url`), as the crawl's URLs are.
    ``html`` as bytes is decoded as browsers do, with ``charset`` the Content-Type's
    declared charset (``None`` if none); as text, its queries are encoded in UTF-8.
    ``sketch`` also takes the page's text sketch (``PageLinks.sketch``); ``text``, the
    text that sketch is made from (``PageLinks.text``); ``keep_html``, the decoded page
    that text is found in (``PageLinks.html``).
    """
    encoding: str | None = None
    if isinstance(html, bytes):
        codec = page_encoding(html, charset)
        html = decode_page(html, codec)
        encoding = url_encoding(codec)
    tree = LexborHTMLParser(html)
    result = PageLinks()
    base = page_url
    base_href = _base_href(tree)
    if base_href is not None:
        base = normalize_url(base_href, page_url, encoding) or page_url
    result.meta_nofollow, result.meta_noindex = _meta_robots(tree, agent.lower())
    resolve = _Resolver(base, encoding)
    seen: dict[str, bool] = {}  # url -> every link to it so far was nofollow
    dropped: set[int] = set()  # hashes of dropped targets: no URL strings kept
    nodes, attribute = _link_elements(tree)
    for node in nodes:
        attrs = node.attributes
        raw = attrs.get(attribute or _TARGET_ATTRIBUTE[node.tag or ""])
        if raw is None:
            continue
        url = resolve(raw)
        if url is None:
            continue
        rel = attrs.get("rel")
        nofollow = rel is not None and "nofollow" in rel.lower().split()
        previous = seen.get(url)
        if previous is None:
            if len(seen) >= max_links:
                if len(dropped) < _MAX_COUNTED_CUT:
                    dropped.add(hash(url))
                continue
            seen[url] = nofollow
        elif previous and not nofollow:
            seen[url] = False
    result.urls = list(seen)
    result.nofollow = {url for url, flag in seen.items() if flag}
    result.cut = len(dropped)
    if sketch:
        # numpy only for the sketch: link extraction alone stays light
        from webcrawl.crawler.shingles import page_text, text_sketch

        result.sketch = text_sketch(page_text(tree))
    elif text:
        from webcrawl.crawler.page_text import MAX_TEXT_BYTES, page_text

        # no more than the sketch reads (a character is at least one byte)
        result.text = page_text(tree)[:MAX_TEXT_BYTES]
    elif keep_html:
        result.html = html
    return result


#: Dropped targets counted per page at most (a cut page's count saturates here; their
#: hashes cost about 6 MB at most, so a million-link page stays within its memory bound).
_MAX_COUNTED_CUT = 100_000


def page_link_ids(page: PageLinks,
                  ids_of: Callable[[list[str], list[bool]], Sequence[int]], *,
                  obey_meta_nofollow: bool = True,
                  follow_nofollow: bool = False) -> tuple[list[int], list[int]]:
    """A page's links as ids, in document order, and the ids of those flagged nofollow
    (each link's ``rel``, or the page's meta robots nofollow when
    ``obey_meta_nofollow``): the two arrays of a ``links`` row.

    ``ids_of(urls, follow)`` gives, or makes, the ids of all the page's targets at once;
    ``follow[i]`` says whether the link to ``urls[i]`` may be followed (not flagged
    nofollow, or ``follow_nofollow``), for a crawl that enqueues what it registers.
    """
    follow_none = page.meta_nofollow and obey_meta_nofollow
    urls = page.urls
    flagged = [url in page.nofollow for url in urls] if page.nofollow else [False] * len(urls)
    if follow_none:
        follow = [False] * len(urls)
    elif follow_nofollow:
        follow = [True] * len(urls)
    else:
        follow = [not f for f in flagged]
    ids = list(ids_of(urls, follow))
    if follow_none:
        return ids, list(ids)
    return ids, [target for target, f in zip(ids, flagged, strict=True) if f]


def link_ids(page: PageLinks, id_of: Callable[[str, bool], int], *,
             obey_meta_nofollow: bool = True,
             follow_nofollow: bool = False) -> tuple[list[int], list[int]]:
    """:func:`page_link_ids` with ``id_of(url, follow)`` giving one URL's id at a time."""
    return page_link_ids(
        page, lambda urls, follow: [id_of(u, f) for u, f in zip(urls, follow, strict=True)],
        obey_meta_nofollow=obey_meta_nofollow, follow_nofollow=follow_nofollow)
