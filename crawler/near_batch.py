"""The near-duplicate test in batches: pages' text sketches and tests, written with the
commit that writes the pages.

A page's text sketch costs mostly numpy's per-call overhead, not the work on its text
(docs/results/near-duplicates.md): :func:`~webcrawl.crawler.shingles.text_sketches`
sketches many texts with one set of numpy calls.  The test's result is not needed
before the next page (a near copy's links are read either way), so every path that
fetches or imports a page (the crawl, ``import warc``, revisits) hands the page's text
(:attr:`PageLinks.text <webcrawl.crawler.links.PageLinks.text>`, from the parse that gave
its links, or the page itself for its text to be found there) to one
:class:`NearBatch`, which sketches and tests the pages waiting just before the store
commits (:meth:`~webcrawl.storage.store.CrawlStore.before_commit`), or hands them as they
come to the test's own process (:mod:`~webcrawl.crawler.near_process`, with the setting
``near_process``) and collects its results then.

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
  :func:`sketch_answers`), or with its decoded HTML (the crawl's own downloader with
  ``near_process``: the page's text is found by the test's process, from a parse of
  its own); only texts and pages are sketched here.
* **In a process or not, the same.**  One function
  (:func:`~webcrawl.crawler.near_steps.sketch_and_test`) takes pages to sketches and
  group changes, run here or in the test's process on the same pages in the same order.
* Whoever reads :attr:`NearBatch.near_duplicates` between commits sees the pages tested
  so far; :meth:`NearBatch.flush` tests the waiting ones now.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from webcrawl.crawler.near_process import RUN_PAGES, NearProcess
from webcrawl.crawler.near_steps import NearPage, sketch_and_test
from webcrawl.storage._compiled import worker_count

# numpy (the sketch and the test) is imported where it is used: a shard worker imports
# this module for :func:`sketch_answers`, and most of its answer frames go without it;
# the answers' types (asyncio) where they are used: the test's process goes without.
if TYPE_CHECKING:
    from webcrawl.crawler.links import PageLinks
    from webcrawl.crawler.near_seen import NearSeen
    from webcrawl.crawler.settings import CrawlSettings
    from webcrawl.storage.store import CrawlStore

__all__ = ["MIN_SKETCH_BATCH", "NearBatch", "sketch_answers"]

class NearBatch:
    """Pages waiting for their sketch and near-duplicate test (see the module docstring)."""

    __slots__ = ("_near", "_outbox", "_process", "_store", "_waiting", "near_duplicates")

    def __init__(self, near: NearSeen | NearProcess, store: CrawlStore) -> None:
        """Test the pages with ``near`` (the test's state, or the process that holds
        it) and enqueue the results in ``store`` before each of its commits."""
        self._near = near if not isinstance(near, NearProcess) else None
        self._process = near if isinstance(near, NearProcess) else None
        self._store = store
        self._waiting: list[int | None] = []  # the waiting pages' fetch ids
        self._outbox: list[NearPage] = []  # the waiting pages not yet sent
        #: near copies found by the pages tested so far
        self.near_duplicates = 0 if self._near is None else self._near.near_duplicates
        store.before_commit(self.flush)

    @classmethod
    def open(cls, store: CrawlStore, settings: CrawlSettings,
             db: Path | None = None, *, workers: int = 1) -> NearBatch:
        """The test for a crawl with ``settings``, starting from ``db``'s stored groups
        (None: a new crawl), in a process of its own with ``near_process`` when that
        process has a core to run on beside the caller's ``workers`` processes (a
        sharded crawl's: :func:`_core_for_the_test`)."""
        r = settings.near_min_resemblance
        if settings.near_process and _core_for_the_test(workers):
            return cls(NearProcess(r, db), store)
        from webcrawl.crawler.near_seen import NearSeen

        return cls(NearSeen.from_db(db, r) if db is not None else NearSeen(r), store)

    def __len__(self) -> int:
        """Pages waiting."""
        return len(self._waiting)

    def add(self, url_id: int, fetch_id: int | None, page: PageLinks | None, *,
            tested: bool = True) -> None:
        """Page ``url_id`` was fetched with ``page``'s HTML, text or sketch (None: not
        an HTML page).  Its sketch goes to fetch row ``fetch_id`` (None: not stored); the
        test sees it only if ``tested`` (false: the page is a byte-for-byte copy, which
        the test skips and which leaves its group).  The page's HTML is let go here."""
        if page is None:
            self._outbox.append((url_id, None, None, None, tested))
        else:
            self._outbox.append((url_id, page.html, page.text, page.sketch, tested))
            page.html = None
        self._waiting.append(fetch_id)
        if self._process is not None and len(self._outbox) >= RUN_PAGES:
            self._process.send(self._outbox)
            self._outbox = []

    def flush(self) -> None:
        """Sketch and test the waiting pages (or collect what the test's process made
        of them) and enqueue their sketches and group changes."""
        fetch_ids, self._waiting = self._waiting, []
        pages, self._outbox = self._outbox, []
        if not fetch_ids:
            return
        if self._process is not None:
            if pages:
                self._process.send(pages)
            sketches, updates, self.near_duplicates = self._process.results()
        else:
            assert self._near is not None
            sketches, updates = sketch_and_test(self._near, pages)
            self.near_duplicates = self._near.near_duplicates
        store = self._store
        for fetch_id, sketch in zip(fetch_ids, sketches, strict=True):
            if sketch is not None and fetch_id is not None:
                store.set_sketch(fetch_id, sketch)
        for page_id, leader, resemblance in updates:
            store.set_near_duplicate(page_id, leader, resemblance)

    def close(self) -> None:
        """Stop the test's process, if it has one (after the store's last commit)."""
        if self._process is not None:
            self._process.close()


def _core_for_the_test(workers: int) -> bool:
    """Whether the test's process would have a core of its own: a sharded crawl's
    coordinator and ``workers`` keep that many cores busy (Ray actors are counted as
    local processes).  On fewer cores the process only adds its start (numpy's import:
    about 0.1 CPU-s) and the pages' handing over to the work: ``--workers 2`` on 2
    cores, 4,000 fixture pages, the test cost 1.21 times the crawl's CPU without it in
    its process and 1.14 in the coordinator's thread (benchmarks/bench_near_crawl.py,
    docs/results/near-duplicates.md).  A one-process crawl keeps the process: its
    pages' HTML is parsed there, not in the crawl's loop."""
    if workers <= 1:
        return True
    return worker_count() >= workers + 2


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
    from webcrawl.crawler.orders import PageDone

    with_text = [a.links for a in answers
                 if isinstance(a, PageDone) and a.links is not None and a.links.text is not None]
    if len(with_text) < MIN_SKETCH_BATCH:
        return
    from webcrawl.crawler.shingles import text_sketches

    for page, sketch in zip(with_text, text_sketches([p.text or "" for p in with_text]),
                            strict=True):
        page.sketch, page.text = sketch, None
