"""The near-duplicate test's steps for a run of pages: their texts, sketches and tests.

One function, :func:`sketch_and_test`, takes pages as the crawl hands them over (a
page's decoded HTML, its text or its sketch: :data:`NearPage`) to their stored sketches
and the group changes their tests make, in order.  The crawl's own thread runs it at each
commit (:class:`~webcrawl.crawler.near_batch.NearBatch`), or the test's process does as
the pages arrive (:mod:`~webcrawl.crawler.near_process`): the same steps on the same
pages in the same order, so the same sketches and groups.

Contract
--------
* A page's text is found as link extraction finds it with ``text``
  (:func:`~webcrawl.crawler.page_text.page_text` on the parsed page, cut at
  :data:`~webcrawl.crawler.page_text.MAX_TEXT_BYTES`); the run's texts are sketched
  together (:func:`~webcrawl.crawler.shingles.text_sketches`: bit for bit the one-page
  sketches), and the pages are tested one by one in the run's order
  (:meth:`NearSeen.see <webcrawl.crawler.near_seen.NearSeen.see>`).
* numpy and the parser are imported at the first run: a shard worker imports
  :mod:`~webcrawl.crawler.near_batch`, and with it this module, without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from webcrawl.crawler.near_seen import NearSeen, NearUpdate

__all__ = ["NearPage", "sketch_and_test"]

#: A page as the test takes it: ``(url id, decoded HTML, text, sketch, tested)``, at most
#: one of the three set (none: no HTML page)
NearPage = tuple[int, "str | None", "str | None", "np.ndarray | None", bool]


def sketch_and_test(near: NearSeen, pages: Sequence[NearPage]
                    ) -> tuple[list[bytes | None], list[NearUpdate]]:
    """Each page's stored sketch (:func:`~webcrawl.crawler.near_seen.encode_sketch`;
    None: no HTML page, or too little text), its text found and sketched with the
    others' at once, and the group changes of testing the pages in order."""
    from webcrawl.crawler.near_seen import encode_sketch
    from webcrawl.crawler.shingles import text_sketches

    texts: list[str] = []
    for _, html, text, _, _ in pages:
        if html is not None:
            texts.append(_text_of(html))
        elif text is not None:
            texts.append(text)
    made = iter(text_sketches(texts) if texts else ())
    sketches: list[bytes | None] = []
    updates: list[NearUpdate] = []
    for url_id, html, text, sketch, tested in pages:
        if html is not None or text is not None:
            sketch = next(made)
        sketches.append(None if sketch is None else encode_sketch(sketch))
        updates += near.see(url_id, sketch if tested else None)
    return sketches, updates


def _text_of(html: str) -> str:
    """A page's text from its decoded HTML, as link extraction takes it with ``text``."""
    from selectolax.lexbor import LexborHTMLParser
    from webcrawl.crawler.page_text import MAX_TEXT_BYTES, page_text

    return page_text(LexborHTMLParser(html))[:MAX_TEXT_BYTES]
