"""Every tunable of a crawl, in one frozen, self-validating settings object.

Fields are grouped by prefix, the component that reads them:

=============  =====================================================================
``fetch_``     :mod:`webcrawl.crawler.fetcher` (timeouts, body cap, User-Agent, redirects)
``polite_``    :mod:`webcrawl.crawler.politeness` (per-host delays, Crawl-delay, Retry-After)
``robots_``    :mod:`webcrawl.crawler.robots` (cache lifetime, retries of unreachable files)
``retry_``     :mod:`webcrawl.crawler.retry` (attempts, exponential backoff with jitter)
``scope_``     :mod:`webcrawl.crawler.scope` (hosts, depth, page caps, trap guards)
``links_``     :mod:`webcrawl.crawler.links` (links per page, nofollow handling)
``sitemaps_``  :mod:`webcrawl.crawler.sitemaps` (sitemaps as a source of URLs, their limits)
``tls_``       :mod:`webcrawl.crawler.resolve` (certificate verification); ``resolve``
               and ``proxy`` say where connections go
``store_``     the crawl database writer (batching)
``warc_``      :mod:`webcrawl.crawler.archive` (WARC output of every HTTP exchange)
``frontier_``  :mod:`webcrawl.crawler.frontier` and the strategy
=============  =====================================================================

Politeness defaults follow Mercator (wait ``delay_factor`` times the last fetch time,
factor 10 in the paper) clamped like Heritrix (which clamps ``5 t`` to [3 s, 30 s]); we
keep Mercator's factor and a gentler 1 s floor, and honour robots.txt Crawl-delay up
to 60 s (Heritrix honours up to 300 s; Nutch skips hosts asking for more than 30 s).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, fields

from webcrawl.storage._version import __version__
from webcrawl.storage.errors import ConfigError

__all__ = ["DEFAULT_USER_AGENT", "VERSION", "CrawlSettings", "machine_memory", "user_agent"]

#: The product version the User-Agent names (the one version of the project).
VERSION = __version__
#: What the crawler is, said in every User-Agent.  The project has no web page of its
#: own to point to, so the header names no URL: the operator's ``--contact`` is the way
#: to reach whoever runs the crawl.
DESCRIPTION = "webcrawl, a polite research crawler"
# Control characters (CR/LF could inject headers) and DEL.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_PRODUCT_TOKEN = re.compile(r"[a-zA-Z_-]+")


def user_agent(product: str, contact: str | None) -> str:
    """The User-Agent header: product/version, what the crawler is and the operator's
    contact (a URL or an e-mail address; a URL gets robots' customary ``+``).

    >>> user_agent("webcrawl", "ops@example.org")  # doctest: +ELLIPSIS
    'webcrawl/... (webcrawl, a polite research crawler; contact: ops@example.org)'
    >>> user_agent("webcrawl", "https://example.org/bot")  # doctest: +ELLIPSIS
    'webcrawl/... (webcrawl, a polite research crawler; +https://example.org/bot)'
    >>> user_agent("webcrawl", None)  # doctest: +ELLIPSIS
    'webcrawl/... (webcrawl, a polite research crawler)'
    """
    if not contact:
        tail = ""
    elif contact.startswith(("http://", "https://")):
        tail = f"; +{contact}"
    else:
        tail = f"; contact: {contact}"
    return f"{product}/{VERSION} ({DESCRIPTION}{tail})"


def machine_memory() -> int:
    """Bytes of physical memory of this machine."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


#: The User-Agent without a contact.
DEFAULT_USER_AGENT = user_agent("webcrawl", None)


#: The largest ``links_max_per_page`` accepted (a page's link list is one int32 array).
MAX_LINKS_PER_PAGE = 1_000_000


@dataclass(frozen=True, slots=True)
class CrawlSettings:
    """Crawl configuration; every field has a documented default.  Invalid -> ConfigError."""

    # -- fetch_ -------------------------------------------------------------------
    #: seconds to establish a TCP (and TLS) connection
    fetch_connect_timeout: float = 10.0
    #: seconds without receiving any data while reading the response
    fetch_read_timeout: float = 30.0
    #: seconds for a whole request, headers and body
    fetch_total_timeout: float = 60.0
    #: bytes of *decoded* body read at most (gzip/deflate/br are inflated as they stream
    #: in); a larger body is cut there (reading stops) and recorded as ``too_large``,
    #: unparsed, with the bytes kept.  Whatever the compression ratio.
    #: This cap is what bounds a page's memory: the fetcher holds at most this many
    #: bytes, and the parsed DOM of an HTML page is about 20 times its size (lexbor), so
    #: a 100 MB or a million-link page costs at most ~25x this cap, never its own size.
    fetch_max_body: int = 5 * 1024 * 1024
    #: the User-Agent header; empty: built from the product token, the version and
    #: ``fetch_contact`` (see :func:`user_agent`)
    fetch_user_agent: str = ""
    #: the product token matched against robots.txt ``User-agent`` lines (RFC 9309
    #: section 2.2.1: ``[a-zA-Z_-]+``, matched case-insensitively, never by prefix)
    fetch_robots_agent: str = "webcrawl"
    #: how site operators reach whoever runs the crawl (a URL or an e-mail address),
    #: named in the User-Agent; a crawl of a non-loopback host without one is warned about
    fetch_contact: str | None = None
    #: redirect hops followed from one URL (each hop is its own recorded fetch)
    fetch_max_redirects: int = 5
    #: seconds an idle kept-alive connection stays open (less when a response says
    #: ``Keep-Alive: timeout=N``); below the 5 s of Apache's and Node's defaults, so a
    #: connection is not reused just as such a server closes it
    fetch_keepalive: float = 4.0
    #: seconds before the next of a host's addresses is tried while the previous
    #: attempt has not connected (happy eyeballs, RFC 8305)
    fetch_happy_eyeballs_delay: float = 0.25

    # -- polite_ ------------------------------------------------------------------
    #: Mercator's factor: after a fetch that took t s wait ``delay_factor * t``
    polite_delay_factor: float = 10.0
    #: the floor of the wait between two requests to one host (seconds)
    polite_min_delay: float = 1.0
    #: the cap of the computed wait (seconds); Crawl-delay and Retry-After may exceed it
    polite_max_delay: float = 30.0
    #: robots.txt Crawl-delay values above this are clamped to it (seconds)
    polite_max_crawl_delay: float = 60.0
    #: Retry-After values above this are clamped to it (seconds)
    polite_max_retry_after: float = 600.0

    # -- robots_ ------------------------------------------------------------------
    #: obey robots.txt (turn off only for your own sites)
    robots_obey: bool = True
    #: seconds a fetched robots.txt stays valid (RFC 9309: at most 24 h)
    robots_cache_ttl: float = 24 * 3600.0
    #: seconds to wait before fetching an unreachable (5xx/network) robots.txt again
    robots_retry_delay: float = 30.0
    #: fetches of an unreachable robots.txt before the host's URLs are excluded
    robots_max_attempts: int = 3
    #: bytes of robots.txt parsed (RFC 9309 asks for at least 500 KiB)
    robots_max_size: int = 512 * 1024

    # -- retry_ -------------------------------------------------------------------
    #: attempts per URL for transient failures (1 = no retry)
    retry_attempts: int = 3
    #: first backoff (seconds); doubles each attempt
    retry_backoff: float = 0.5
    #: backoff cap (seconds)
    retry_backoff_max: float = 30.0
    #: uniform random jitter added to each backoff (seconds)
    retry_jitter: float = 0.25

    # -- scope_ -------------------------------------------------------------------
    #: host globs crawled (``example.com``, ``*.test``); empty: the seeds' hosts
    scope_hosts: tuple[str, ...] = ()
    #: registered domains crawled with all their subdomains
    scope_domains: tuple[str, ...] = ()
    #: link depth from a seed (seeds are 0); None: unlimited
    scope_max_depth: int | None = None
    #: pages taken from the frontier in total (over resumes); the rest stays queued for a
    #: resume with a higher limit; None: unlimited
    scope_max_pages: int | None = None
    #: URLs enqueued per host; later ones are ``out_of_scope``; None: unlimited
    scope_max_per_host: int | None = None
    #: longest URL (characters) enqueued
    scope_max_url_length: int = 2048
    #: the most times one path segment may repeat in a URL (trap guard)
    scope_max_path_repeat: int = 3
    #: query parameters of one URL at most (trap guard; None: no bound)
    scope_max_query_params: int | None = 32
    #: distinct queries enqueued per host and path (session ids, facets; None: no bound)
    scope_max_query_variants: int | None = 1000
    #: URLs enqueued per host and path pattern (digit runs as ``#``, query keys only):
    #: calendars and other numbered URL spaces (see :mod:`webcrawl.crawler.traps`; None: no bound)
    scope_max_pattern_urls: int | None = 10_000
    #: path extensions never fetched (well-known binary files): ``out_of_scope``
    scope_skip_extensions: tuple[str, ...] = (
        ".pdf", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".ico", ".css", ".js",
        ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".tar", ".exe", ".dmg", ".iso",
        ".mp3", ".mp4", ".avi", ".mov", ".mkv", ".webm", ".wav", ".ogg", ".woff", ".woff2",
        ".ttf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx")

    # -- links_ -------------------------------------------------------------------
    #: distinct link targets taken from one page at most (document order).  The rest
    #: are dropped and the page is recorded as cut (``link_cuts`` table, the crawl
    #: summary, the report), so one page adds at most this many URLs, edges and
    #: records however many anchors its (capped, see ``fetch_max_body``) markup holds.
    #: 10,000 cuts no page of a large documentation site (a Sphinx changelog: 3,303).
    links_max_per_page: int = 10_000
    #: HTML bodies of at least this many bytes are parsed in a worker thread, so the
    #: seconds a multi-megabyte page takes never stall the event loop (smaller pages
    #: parse faster inline than a thread hand-off costs)
    links_thread_above: int = 256 * 1024
    #: follow links marked rel=nofollow (they are recorded, flagged, either way)
    links_follow_nofollow: bool = True
    #: honour ``<meta name=robots content=nofollow>``: record the links, follow none
    links_obey_meta_nofollow: bool = True
    #: read (record and follow) the links of a page whose body repeats an earlier
    #: page's byte for byte (a duplicate, ``urls.duplicate_of``).  Off: Mercator's
    #: content-seen test, a duplicate is recorded but its links are not read, so a
    #: mirror (the same tree over http and https) is not crawled twice; on: the crawl
    #: of before the test, and ``--duplicates keep`` shows every copy with its links
    links_from_duplicates: bool = False
    #: the near-duplicate test (webcrawl.crawler.near_seen): every fetched page's text
    #: gets a min-hash sketch (``fetches.sketch``) and a page whose text resembles an
    #: earlier page's is recorded as its near copy (``urls.near_of``); the crawl goes
    #: on as without it (a near copy's links are read), and ``--duplicates near``
    #: collapses the groups; ``import warc`` and revisits run it too.  Off by default:
    #: it costs 1.2-1.4 times the crawl's CPU over all its processes on a CPU-bound
    #: fixture crawl (docs/results/near-duplicates.md)
    near_duplicates: bool = False
    #: the least estimated resemblance (shared 2-word shingles over all, Broder et al.
    #: 1997) of two near copies' texts; chosen on the fixture's planted pages
    #: (docs/results/near-duplicates.md)
    near_min_resemblance: float = 0.8
    #: run the near-duplicate test (the page's text, its sketch, the look-up) in a
    #: process of its own (webcrawl.crawler.near_process), on another core when there
    #: is one: the crawl's loop only hands it the pages.  The same sketches and groups
    #: either way; off, the crawl's own thread does the work (one core, or a machine
    #: whose cores the crawl's other processes keep busy: the process adds the cost of
    #: handing the pages over, docs/results/near-duplicates.md).  A sharded crawl keeps
    #: the test in its coordinator's thread when the machine has fewer cores than the
    #: coordinator, its workers and the test's process (webcrawl.crawler.near_batch)
    near_process: bool = True

    # -- sitemaps_ ----------------------------------------------------------------
    #: read each host's sitemaps (robots.txt ``Sitemap:`` lines, else /sitemap.xml) as a
    #: source of URLs (see webcrawl.crawler.sitemaps)
    sitemaps_follow: bool = False
    #: sitemap files (indexes included) fetched per host at most
    sitemaps_max_files: int = 50
    #: ``<loc>`` entries read per sitemap file (sitemaps.org: 50,000)
    sitemaps_max_urls: int = 50_000
    #: bytes of a sitemap file read, uncompressed (sitemaps.org: 50 MiB)
    sitemaps_max_bytes: int = 50 * 1024 * 1024

    # -- tls_ ---------------------------------------------------------------------
    #: an extra PEM CA bundle trusted for HTTPS (a local mirror's own CA)
    tls_ca_file: str | None = None
    #: do not verify certificates at all (warned about)
    tls_insecure: bool = False
    #: ``PATTERN[:PORT]=ADDR[:PORT]`` host-glob resolution rules (see webcrawl.crawler.resolve)
    resolve: tuple[str, ...] = ()
    #: the HTTP proxy of every request (``http://[user:pass@]host[:port]``); None: the
    #: environment's ``http_proxy``/``https_proxy``; ``""``: none.  ``no_proxy`` applies
    #: either way, and hosts matching a ``resolve`` rule are never proxied (see
    #: webcrawl.crawler.proxy)
    proxy: str | None = None

    # -- warc_ --------------------------------------------------------------------
    #: write every HTTP exchange as WARC records into this folder (None: no WARC)
    warc_dir: str | None = None
    #: start a new WARC file once the current one reaches this many bytes (1 GB)
    warc_max_size: int = 1_000_000_000
    #: file name prefix of the WARC files
    warc_prefix: str = "webcrawl"
    #: a previous crawl's database, or a CDXJ/CDX index of a WARC collection: a body
    #: it holds already is written as a ``revisit`` record (identical-payload-digest
    #: profile) that refers to it, not stored again (see webcrawl.crawler.warc_dedup; a
    #: database's robots.txt answers come from the CDXJ files beside its WARCs, if any)
    warc_dedup: str | None = None
    #: a body this crawl stored already (another URL's, or the same URL's refetch; on
    #: resume, also in the folder's earlier files) is written as a ``revisit`` record
    #: that refers to the first one (with ``workers`` > 1: per worker process)
    warc_dedup_repeats: bool = False
    #: write a CDXJ index (pywb's format) beside each WARC file (``NAME.cdxj``)
    warc_cdxj: bool = False

    # -- concurrency, frontier, store ---------------------------------------------
    #: requests in flight at once over all hosts (always one per host)
    concurrency: int = 64
    #: worker processes fetching and extracting links, hosts assigned by a stable hash
    #: (:mod:`webcrawl.crawler.shard`); 1 runs the single-process engine
    workers: int = 1
    #: URLs of one host handed to its worker ahead of need in a sharded crawl (the
    #: worker fetches them one at a time, politely): the next fetch starts when the
    #: host's wait ends, with no coordinator round trip in between
    shard_window: int = 16
    #: seconds a shard worker holds finished results before sending them in one batch;
    #: 0: at the end of the event-loop turn that finished them (a busy worker's turns
    #: are long, so results still travel in batches).  A hold delays every discovery:
    #: at the end of a crawl, when hosts have one or two URLs known at a time, each
    #: round trip waited the hold, and 5 ms gave a 1 s tail at half the crawl's rate
    #: (fixture web, 20 hosts, 16,118 pages: 3.93-4.11 s with 5 ms, 3.37-3.69 s with 0)
    shard_flush_interval: float = 0.0
    #: the crawl ordering (see ``webcrawl.analysis.ordering.strategies``)
    frontier_strategy: str = "bfs"
    #: seed of randomised strategies
    frontier_seed: int = 0
    #: record each taken URL's rank among all frontier URLs (O(log n) per operation;
    #: its index holds about 12 bytes per frontier URL, see ``memory_limit``)
    frontier_record_rank: bool = True
    #: URLs each host keeps in its in-memory heap; the rest wait in the host's compact
    #: overflow (4 bytes a URL) and refill the heap in batches of this size
    frontier_head: int = 64
    #: bytes of memory the crawl state may hold (URL-seen set, per-URL tables,
    #: frontier, hosts; ``2G``, ``512M`` in files and on the command line): past it the
    #: hosts' in-memory heaps shrink and their URLs spill to the overflows, and if that
    #: is not enough the crawl stops cleanly with a one-line message (resume it with a
    #: higher limit).  None: half of the machine's memory
    memory_limit: int | None = None
    #: records buffered before the store commits a batch
    store_batch_size: int = 2000
    #: seconds between store commits at most
    store_flush_interval: float = 0.5
    #: seconds a write to the crawl database waits for another program's write lock (a
    #: sqlite3 shell or a notebook with an open write transaction on it), said in a
    #: warning; then the crawl stops, keeping what it could not write for the resume
    store_busy_wait: float = 60.0
    #: seconds between progress-line refreshes
    progress_interval: float = 0.5
    #: seconds between progress log lines when stderr is not a terminal (0: none)
    progress_log_interval: float = 10.0
    #: seconds a stop (Ctrl-C, SIGTERM) waits for the requests already under way to
    #: answer, so their pages are recorded rather than fetched again on resume (no new
    #: request starts meanwhile; a second Ctrl-C stops at once)
    stop_grace: float = 10.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or value is None:
                continue
            if isinstance(value, (int, float)):
                if isinstance(value, float) and not math.isfinite(value):
                    raise ConfigError(f"{f.name} must be finite, got {value!r}")
                if value < 0:
                    raise ConfigError(f"{f.name} must not be negative, got {value!r}")
        positive = ("fetch_connect_timeout", "fetch_read_timeout", "fetch_total_timeout",
                    "fetch_max_body", "retry_attempts", "concurrency", "workers", "shard_window",
                    "links_max_per_page",
                    "scope_max_url_length", "scope_max_path_repeat", "store_batch_size",
                    "robots_max_attempts", "robots_max_size", "robots_cache_ttl",
                    "sitemaps_max_files", "sitemaps_max_urls", "sitemaps_max_bytes",
                    "warc_max_size", "frontier_head", "memory_limit")
        for name in positive:
            if getattr(self, name) is not None and getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)!r}")
        for name in ("scope_max_depth", "scope_max_pages", "scope_max_per_host"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ConfigError(f"{name} must not be negative, got {value!r}")
        for name in ("scope_max_query_params", "scope_max_query_variants",
                     "scope_max_pattern_urls"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be at least 1 (or None), got {value!r}")
        if not 0.0 < self.near_min_resemblance <= 1.0:
            raise ConfigError("near_min_resemblance must be in (0, 1], got "
                              f"{self.near_min_resemblance!r}")
        if self.polite_min_delay > self.polite_max_delay:
            # The one check of the pair, on the layered result (a --min-delay above a
            # configured maximum too); named as the options and the fields are.
            raise ConfigError(f"--min-delay/polite_min_delay ({self.polite_min_delay}) "
                              f"exceeds --max-delay/polite_max_delay "
                              f"({self.polite_max_delay})")
        if not _PRODUCT_TOKEN.fullmatch(self.fetch_robots_agent):
            raise ConfigError(f"fetch_robots_agent must be a product token of letters, '-' "
                              f"and '_' (RFC 9309), got {self.fetch_robots_agent!r}")
        for name in ("fetch_user_agent", "fetch_contact"):
            value = getattr(self, name)
            if value is not None and _CONTROL.search(value):
                raise ConfigError(f"{name} must not contain control characters (CR, LF, ...),"
                                  f" got {value!r}")
        if self.fetch_contact is not None and not self.fetch_contact.strip():
            raise ConfigError("fetch_contact must not be empty")
        if self.fetch_user_agent == "":
            object.__setattr__(self, "fetch_user_agent",
                               user_agent(self.fetch_robots_agent, self.fetch_contact))
        elif not self.fetch_user_agent.strip():
            raise ConfigError("fetch_user_agent must not be empty")
        if self.links_max_per_page > MAX_LINKS_PER_PAGE:
            raise ConfigError(f"links_max_per_page must be at most {MAX_LINKS_PER_PAGE:,}, "
                              f"got {self.links_max_per_page}")
        if self.warc_dir is None:
            given = [n for n in ("warc_dedup", "warc_dedup_repeats", "warc_cdxj")
                     if getattr(self, n)]
            if given:
                raise ConfigError(f"{', '.join(given)} need{'s' if len(given) == 1 else ''} "
                                  "warc_dir (--warc DIR)")
        if self.tls_insecure and self.tls_ca_file:
            raise ConfigError("tls_insecure and tls_ca_file exclude each other")
        if self.tls_ca_file and not os.path.isfile(self.tls_ca_file):
            raise ConfigError(f"no CA file at {self.tls_ca_file}")
        if self.resolve:
            # Lazy and only when there are rules: webcrawl.crawler.resolve loads asyncio and ssl,
            # which the CLI's --help (built from default settings) need not pay for.
            from webcrawl.crawler.resolve import parse_rules  # validates the rule syntax

            parse_rules(self.resolve)
        if self.proxy:
            from webcrawl.crawler.proxy import parse_proxy  # validates the proxy URL

            parse_proxy(self.proxy, "proxy")

    @property
    def memory_budget(self) -> int:
        """``memory_limit`` in bytes, the machine's half when it is None."""
        if self.memory_limit is not None:
            return self.memory_limit
        return machine_memory() // 2

    @classmethod
    def polite_off(cls, **overrides: object) -> CrawlSettings:
        """Zero delays (one request per host still holds): for tests and benchmarks."""
        base: dict[str, object] = {"polite_delay_factor": 0.0, "polite_min_delay": 0.0,
                                   "polite_max_delay": 0.0}
        base.update(overrides)
        return cls(**base)  # type: ignore[arg-type]
