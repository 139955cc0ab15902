"""The near-duplicate test in batches: pages' text sketches and tests, written with the
commit that writes the pages.

A page's text sketch costs mostly numpy's per-call overhead, not the work on its text
(docs/results/near-duplicates.md): :func:`~webcrawl.crawler.shingles.text_sketches`
sketches many texts with one set of numpy calls.  The test's result is not needed
before the next page (a near copy's links are read either way), so every path that
fetches or imports a page (the crawl, ``import warc``, revisits) hands the page's text
(:attr:`PageLinks.text <webcrawl.crawler.links.PageLinks.text>`, from the parse that gave
its links) to one :class:`NearBatch`, which sketches and tests the pages waiting just
before the store commits (:meth:`~webcrawl.storage.store.CrawlStore.before_commit`).

Contract
--------
* **Same transaction.**  A page's sketch (``fetches.sketch``) and the group changes its
  test makes (``urls.near_of``) are enqueued before the commit that writes the page's
  rows takes its batch: they land together, so a kill never leaves a committed page
  without its sketch or test, and a resumed crawl reads back the groups
  (:meth:`NearSeen.from_db <webcrawl.crawler.near_seen.NearSeen.from_db>`) of exactly
  the pages it has.
* **Same groups.**  The pages are tested in the order they were added, with the
  sketches :func:`~webcrawl.crawler.shingles.text_sketch` gives one by one (bit for bit):
  the same calls of :meth:`NearSeen.see <webcrawl.crawler.near_seen.NearSeen.see>` as a
  test page by page, so the same groups.
* **Sketched elsewhere.**  A page may come with its sketch already made (a shard
  worker sketches the pages of each answer frame that holds enough of them:
  :func:`sketch_answers`); only texts are sketched here.
* Whoever reads :attr:`NearBatch.near` between commits sees the pages tested so far;
  :meth:`NearBatch.flush` tests the waiting ones now.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from webcrawl.crawler.orders import PageDone

# numpy (the sketch and the test) is imported where it is used: a shard worker imports
# this module for :func:`sketch_answers`, and most of its answer frames go without it.
if TYPE_CHECKING:
    import numpy as np
    from webcrawl.crawler.links import PageLinks
    from webcrawl.crawler.near_seen import NearSeen
    from webcrawl.storage.store import CrawlStore

__all__ = ["MIN_SKETCH_BATCH", "NearBatch", "sketch_answers"]

#: ``(url id, fetch id or None, text or None, sketch or None, tested)`` of a waiting page
_Waiting = tuple[int, int | None, str | None, "np.ndarray | None", bool]


class NearBatch:
    """Pages waiting for their sketch and near-duplicate test (see the module docstring)."""

    __slots__ = ("_store", "_waiting", "near")

    def __init__(self, near: NearSeen, store: CrawlStore) -> None:
        #: the near-duplicate test's state
        self.near = near
        self._store = store
        self._waiting: list[_Waiting] = []
        store.before_commit(self.flush)

    def __len__(self) -> int:
        """Pages waiting."""
        return len(self._waiting)

    def add(self, url_id: int, fetch_id: int | None, page: PageLinks | None, *,
            tested: bool = True) -> None:
        """Page ``url_id`` was fetched with ``page``'s text (or sketch; None: not an
        HTML page).  Its sketch goes to fetch row ``fetch_id`` (None: not stored); the
        test sees it only if ``tested`` (false: the page is a byte-for-byte copy, which
        the test skips and which leaves its group)."""
        text = None if page is None else page.text
        sketch = None if page is None else page.sketch
        self._waiting.append((url_id, fetch_id, text, sketch, tested))

    def flush(self) -> None:
        """Sketch the waiting texts at once, test the pages in the order they came and
        enqueue their sketches and group changes."""
        waiting, self._waiting = self._waiting, []
        if not waiting:
            return
        from webcrawl.crawler.near_seen import encode_sketch
        from webcrawl.crawler.shingles import text_sketches

        texts = [text for _, _, text, _, _ in waiting if text is not None]
        made = iter(text_sketches(texts) if texts else ())
        store, near = self._store, self.near
        for url_id, fetch_id, text, sketch, tested in waiting:
            if text is not None:
                sketch = next(made)
            if sketch is not None and fetch_id is not None:
                store.set_sketch(fetch_id, encode_sketch(sketch))
            for page_id, leader, resemblance in near.see(url_id, sketch if tested else None):
                store.set_near_duplicate(page_id, leader, resemblance)


#: Page texts an answer batch must hold for :func:`sketch_answers` to sketch them:
#: a batch sketch costs mostly numpy's per-call overhead, so fewer texts cost far more
#: a page there than in the coordinator's commit batch (a sharded fixture crawl's
#: frames held 1.9 pages each: 258 us a page in the workers against about 40 us in
#: the coordinator's commits; benchmarks/bench_near_dup.py: 16 texts at once are
#: within 10 % of 64).
MIN_SKETCH_BATCH = 16


def sketch_answers(answers: Iterable[object]) -> None:
    """Replace the text of each page answer (:class:`~webcrawl.crawler.orders.PageDone`)
    that has one by its sketch, all in one set of numpy calls, when there are at least
    :data:`MIN_SKETCH_BATCH` texts (fewer are left to the coordinator, which sketches
    them with its commit's other pages).  A shard worker calls it on each answer batch
    it sends: its processor is not the coordinator's, and a sketch is 128 bytes where a
    text is up to 256 KiB; the sketches are the same wherever they are made."""
    with_text = [a.links for a in answers
                 if isinstance(a, PageDone) and a.links is not None and a.links.text is not None]
    if len(with_text) < MIN_SKETCH_BATCH:
        return
    from webcrawl.crawler.shingles import text_sketches

    for page, sketch in zip(with_text, text_sketches([p.text or "" for p in with_text]),
                            strict=True):
        page.sketch, page.text = sketch, None
