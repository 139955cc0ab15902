"""The Scrapy yardstick: crawl the same site with CONCURRENT_REQUESTS_PER_DOMAIN=1.

Runs under a separate Scrapy install (not a project dependency)::

    python3 -m venv /tmp/scrapy-venv && /tmp/scrapy-venv/bin/pip install scrapy
    /tmp/scrapy-venv/bin/python benchmarks/scrapy_spider.py http://site0.test:PORT/ ...

Every ``*.test`` host resolves to 127.0.0.1 (a custom DNS resolver, like ``--resolve``);
robots.txt is obeyed, links are followed within the seeds' hosts, no delay.  Prints one
JSON line: pages, seconds, pages_per_second, rss_mib.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer


class LoopbackResolver(CachingThreadedResolver):
    """``*.test`` -> 127.0.0.1, everything else as usual."""

    def getHostByName(self, name: str, timeout: Any = None) -> Any:
        if name.endswith(".test"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)


class FixtureSpider(scrapy.Spider):
    name = "fixture"

    def __init__(self, seeds: list[str], **kw: Any) -> None:
        super().__init__(**kw)
        self.start_urls = seeds
        self.allowed_domains = sorted({urlsplit(s).hostname or "" for s in seeds})
        self.extractor = LinkExtractor()  # the offsite middleware keeps the crawl on them
        self.pages = 0

    def parse(self, response: Any) -> Any:
        self.pages += 1
        if b"html" not in response.headers.get("Content-Type", b""):
            return
        for link in self.extractor.extract_links(response):
            yield response.follow(link.url, callback=self.parse)


def peak_rss_kib() -> int:

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def main() -> None:
    seeds = sys.argv[1:]
    process = CrawlerProcess(settings={
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": True,
        "DNS_RESOLVER": f"{__name__}.LoopbackResolver" if __name__ != "__main__"
        else "__main__.LoopbackResolver",
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    })
    crawler = process.create_crawler(FixtureSpider)
    t0 = time.monotonic()
    process.crawl(crawler, seeds=seeds)
    process.start()
    elapsed = time.monotonic() - t0
    pages = crawler.spider.pages if crawler.spider else 0
    print(json.dumps({"pages": pages, "seconds": round(elapsed, 3),
                      "pages_per_second": round(pages / elapsed, 1),
                      "rss_mib": round(peak_rss_kib() / 1024, 1)}))


if __name__ == "__main__":
    main()
