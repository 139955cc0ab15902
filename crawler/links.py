"""Link extraction from HTML with selectolax (lexbor).

Extracted, in document order: ``<a href>``, ``<area href>``, ``<frame src>``,
``<iframe src>``, resolved against the first ``<base href>`` (else the page URL) and
normalised with :func:`crawler.urls.normalize_url`, which drops non-http(s) schemes
(``mailto:``, ``javascript:``, ``data:`` ...).  An empty ``href=""`` is a link to the
page itself (its base URL), as ``href="#top"`` is.  A page given as bytes is decoded
as browsers decode it (:mod:`crawler.encodings`) and its links' queries are encoded in
its encoding.  Each distinct target is kept once (first occurrence), up to
``max_links`` targets; how many distinct targets were dropped beyond that is reported
(``PageLinks.cut``) so the crawl can record the page as cut.  A target is flagged
nofollow when every link to it carries ``rel=nofollow``.  ``<meta name="robots">`` (or
the crawler's own agent name) ``nofollow``/``noindex``/``none`` is reported for the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser

from crawler.encodings import decode_page, page_encoding, url_encoding
from crawler.urls import _normalize_absolute, normalize_url

__all__ = ["PageLinks", "extract_links", "link_ids"]

_LINK_SELECTOR = "a[href], area[href], frame[src], iframe[src]"
_HREF_TAGS = frozenset(("a", "area"))
_ABSOLUTE = ("http://", "https://")
_C0_SPACE = "".join(chr(i) for i in range(0x21))


class _Resolver:
    """``normalize_url(href, base)`` with fast paths for the common href forms.

    ``urljoin`` dominates link extraction; an absolute ``http(s)://`` href, a
    network-path ``//host/...``, an absolute-path ``/...`` and a relative-path
    (``x.html``, ``../x``) href resolve by plain string concatenation (the base's
    origin or directory + href; the normalisation removes dot-segments), which
    ``normalize_url``'s cached absolute form then normalises.  Anything else (``?q``,
    ``#f``, other schemes, backslashes, tabs and newlines) goes through ``normalize_url``
    itself.  The equivalence is tested form by form in ``tests/crawler/test_links.py``.
    """

    __slots__ = ("base", "directory", "encoding", "origin", "scheme")

    def __init__(self, base: str, encoding: str | None = None) -> None:
        self.base = base
        self.encoding = encoding
        self.scheme = base[: base.index(":")]
        slash = base.find("/", len(self.scheme) + 3)
        self.origin = base if slash < 0 else base[:slash]
        path_end = min(i for i in (base.find("?"), base.find("#"), len(base)) if i >= 0)
        path = base[:path_end]
        self.directory = path[: path.rfind("/") + 1] if slash >= 0 else path + "/"

    def __call__(self, raw: str) -> str | None:
        href = raw.strip(_C0_SPACE)  # WHATWG strips C0 controls and space, not NBSP
        enc = self.encoding
        if "\\" in href or "\t" in href or "\n" in href or "\r" in href:
            return normalize_url(raw, self.base, enc)  # browser clean-up rules first
        if href[:1] == "/":
            if href[1:2] == "/":
                if href[2:3] not in ("", "/", "?", "#", "\\"):  # '//host...'
                    return _normalize_absolute(self.scheme + ":" + href, enc)
            else:
                return _normalize_absolute(self.origin + href, enc)
        elif href[:8].lower().startswith(_ABSOLUTE):
            return _normalize_absolute(href, enc)
        elif href[:1].isalnum() or href[:1] == ".":
            colon = href.find(":")
            if colon < 0 or 0 <= href.find("/") < colon:
                # A relative path: the base's directory + href, dot-segments removed
                # by the normalisation (RFC 3986 5.2.3 merge + 5.2.4).
                return _normalize_absolute(self.directory + href, enc)
        return normalize_url(raw, self.base, enc)


@dataclass(slots=True)
class PageLinks:
    """What a page links to, and its meta robots directives."""

    urls: list[str] = field(default_factory=list)
    nofollow: set[str] = field(default_factory=set)
    meta_nofollow: bool = False
    meta_noindex: bool = False
    #: distinct targets beyond ``max_links``, dropped (0: the page was not cut)
    cut: int = 0


def _meta_robots(tree: LexborHTMLParser, agent: str) -> tuple[bool, bool]:
    nofollow = noindex = False
    for node in tree.css("meta[name]"):
        attrs = node.attributes
        name = (attrs.get("name") or "").strip().lower()
        if name not in ("robots", agent):
            continue
        tokens = {t.strip() for t in (attrs.get("content") or "").lower().split(",")}
        if "none" in tokens:
            return True, True
        nofollow |= "nofollow" in tokens
        noindex |= "noindex" in tokens
    return nofollow, noindex


def extract_links(html: str | bytes, page_url: str, *, max_links: int = 10_000,
                  agent: str = "webcrawl", charset: str | None = None) -> PageLinks:
    """Extract the normalised out-links of an HTML page (see the module docstring).

    ``html`` as bytes is decoded as browsers do, with ``charset`` the Content-Type's
    declared charset (``None`` if none); as text, its queries are encoded in UTF-8.
    """
    encoding: str | None = None
    if isinstance(html, bytes):
        codec = page_encoding(html, charset)
        html = decode_page(html, codec)
        encoding = url_encoding(codec)
    tree = LexborHTMLParser(html)
    result = PageLinks()
    base = page_url
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        base = normalize_url(base_node.attributes.get("href") or "", page_url,
                             encoding) or page_url
    if tree.css_first("meta[name]") is not None:
        result.meta_nofollow, result.meta_noindex = _meta_robots(tree, agent.lower())
    resolve = _Resolver(base, encoding)
    seen: dict[str, bool] = {}  # url -> every link to it so far was nofollow
    dropped: set[int] = set()  # hashes of dropped targets: no URL strings kept
    for node in tree.css(_LINK_SELECTOR):
        attrs = node.attributes
        raw = attrs.get("href") if node.tag in _HREF_TAGS else attrs.get("src")
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
    return result


#: Dropped targets counted per page at most (a cut page's count saturates here; their
#: hashes cost about 6 MB at most, so a million-link page stays within its memory bound).
_MAX_COUNTED_CUT = 100_000


def link_ids(page: PageLinks, id_of: Callable[[str], int], *,
             obey_meta_nofollow: bool = True) -> tuple[list[int], list[int]]:
    """A page's links as ids (``id_of`` gives, or makes, a URL's id), in document order,
    and the ids of those flagged nofollow (each link's ``rel``, or the page's meta robots
    nofollow when ``obey_meta_nofollow``): the two arrays of a ``links`` row."""
    follow_none = page.meta_nofollow and obey_meta_nofollow
    ids: list[int] = []
    nofollow: list[int] = []
    for url in page.urls:
        target = id_of(url)
        ids.append(target)
        if follow_none or url in page.nofollow:
            nofollow.append(target)
    return ids, nofollow
