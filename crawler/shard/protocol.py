"""The shard protocol: the messages between the crawl coordinator and its workers.

Every message is a plain frozen dataclass of builtins (and one
:class:`~webcrawl.crawler.settings.CrawlSettings`), so any transport that pickles can carry it:
pipes to child processes (:mod:`webcrawl.crawler.shard.transport`) or Ray actors.  Messages
travel in batches: one ``list[WorkerOrder]`` per send to a worker, one ``list[WorkerReply]`` per
send back.  The full contract (roles, exactness after a kill) is in the package
docstring (:mod:`webcrawl.crawler.shard`).

Coordinator to worker: :class:`StartWorker` (first), then batches of the fetch orders
every downloader takes (:class:`~webcrawl.crawler.orders.FetchPage`,
:class:`~webcrawl.crawler.orders.FetchRobots`, :class:`~webcrawl.crawler.orders.FetchFile`);
:class:`StopWorker` ends the worker.  Worker to coordinator: batches of their answers
(:class:`~webcrawl.crawler.orders.PageDone`, :class:`~webcrawl.crawler.orders.RobotsDone`,
:class:`~webcrawl.crawler.orders.FileDone`), each naming the ``order`` it answers, and,
last, :class:`WorkerStopped` once the worker has closed its downloader (its WARC counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from webcrawl.crawler.orders import FetchedAnswer, FetchFile, FetchPage, FetchRobots
from webcrawl.crawler.settings import CrawlSettings

if TYPE_CHECKING:  # a worker without --warc never loads the archive
    from webcrawl.crawler.archive import WarcCounts

__all__ = ["StartWorker", "StopWorker", "WorkerDone", "WorkerOrder", "WorkerReply",
           "WorkerStopped"]


@dataclass(frozen=True, slots=True)
class StartWorker:
    """The first message to a worker: who it is and how to crawl."""

    worker: int
    workers: int
    settings: CrawlSettings
    seeds: tuple[str, ...]
    #: incarnation of this worker (0 first; a restart after a loss counts up)
    generation: int = 0
    #: the crawl is a resumed one (its WARC folder holds earlier runs' files)
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class StopWorker:
    """End the worker once the orders in flight are answered or dropped."""


@dataclass(frozen=True, slots=True)
class WorkerStopped:
    """A worker's last message, sent once its downloader is closed (its WARC files
    are whole): what its archive wrote (None: no ``--warc``).  A worker lost to a
    kill never sends it."""

    warc: WarcCounts | None


WorkerOrder = StartWorker | FetchPage | FetchRobots | FetchFile | StopWorker
WorkerDone = FetchedAnswer
WorkerReply = WorkerDone | WorkerStopped
