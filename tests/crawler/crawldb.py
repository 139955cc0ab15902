"""Write a crawl database by hand, as the crawler would leave it (a test helper)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from webcrawl.storage.records import FetchRecord, Outcome
from webcrawl.storage.store import CrawlStore, HostRow, UrlRow


def write_crawl(path: Path, urls: Sequence[str], links: Mapping[int, Sequence[int]],
                *, strategy: str | None = None) -> Path:
    """Store ``urls`` (id = position) and fetch the pages of ``links`` in its order.

    Each key of ``links`` is fetched (seq 0, 1, ...) with its out-links; URLs that are
    no key stay in the frontier.  Hosts are the URLs' host[:port] in first-seen order;
    URL 0 is the seed (depth 0), every other URL has depth 1.  A URL's discovered_seq
    is the seq of the first fetched page linking to it (-1 for the seed).
    """
    hosts: dict[str, int] = {}
    for url in urls:
        hosts.setdefault(url.split("/")[2], len(hosts))
    discovered = {0: -1}
    for seq, dsts in enumerate(links.values()):
        for dst in dsts:
            discovered.setdefault(dst, seq)

    async def write() -> None:
        async with await CrawlStore.open(path) as store:
            for name, host_id in hosts.items():
                store.add_host(HostRow(host_id, name, robots_status=404))
            store.set_meta("seeds", json.dumps([urls[0]]))
            for i, url in enumerate(urls):
                store.add_url(UrlRow(i, url, hosts[url.split("/")[2]], 0 if i == 0 else 1,
                                     discovered.get(i, 0)))
            for seq, (src, dsts) in enumerate(links.items()):
                store.add_fetch(FetchRecord(src, seq, 1000.0 + seq, 1000.5 + seq,
                                            Outcome.FETCHED, 200, "text/html",
                                            strategy=strategy))
                store.add_links(src, list(dsts))
                store.set_outcome(src, Outcome.FETCHED, seq)

    asyncio.run(write())
    return path
