"""The polite asyncio crawler.

Crawl a fixture web served by ``webcrawl fixture serve --port 8400``::

    from crawler import CrawlSettings, crawl

    stats = crawl(["http://site0.test:8400/"], "crawl.db",
                  CrawlSettings(scope_hosts=("*.test",), resolve=("*.test=127.0.0.1",)))

Every public name of the crawler's modules is importable from here; the modules load on
first use, so ``import crawler.urls`` (the fixture web's URL normaliser) pulls in no aiohttp.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from crawler.settings import (
    DEFAULT_USER_AGENT,
    VERSION,
    CrawlSettings,
    user_agent,
)
from storage._version import __version__

if TYPE_CHECKING:
    from crawler.archive import (
        NOT_MODIFIED_PROFILE,
        WarcArchive,
    )
    from crawler.codings import (
        ACCEPT_ENCODING,
        PIECE,
        BodyDecoder,
        CorruptBody,
        UnsupportedCoding,
    )
    from crawler.config import (
        META_SETTINGS,
        build_settings,
        changed_settings,
        convert_setting,
        load_toml,
        merge_layers,
        parse_assignments,
        read_stored_settings,
        revisit_base_settings,
        settings_dict,
        settings_values,
        stored_settings,
    )
    from crawler.encodings import (
        decode_page,
        lookup_label,
        page_encoding,
        url_encoding,
    )
    from crawler.engine import (
        Crawler,
        CrawlStats,
        crawl,
    )
    from crawler.fetcher import (
        Fetcher,
        FetchResult,
        decode_body,
        is_html,
    )
    from crawler.frontier import (
        Frontier,
        Taken,
    )
    from crawler.ingest import (
        WarcImport,
        import_warc,
    )
    from crawler.links import (
        PageLinks,
        extract_links,
        link_ids,
    )
    from crawler.politeness import (
        HostSlot,
        PolitenessPolicy,
        parse_retry_after,
    )
    from crawler.progress import (
        Progress,
        format_clock,
        format_line,
        format_summary,
        stop_on_signals,
    )
    from crawler.registry import (
        CrawlRegistry,
        Registered,
    )
    from crawler.resolve import (
        HostGlobResolver,
        ResolveRule,
        make_ssl_context,
        parse_rule,
        parse_rules,
    )
    from crawler.resume import (
        Restored,
        ResumeSettings,
        merge_seeds,
        read_meta,
        replay,
        restore,
        restore_host,
        resume_settings,
        settings_json,
    )
    from crawler.retry import (
        RETRYABLE_ERRORS,
        RetryPolicy,
        is_retryable_status,
    )
    from crawler.revisit import (
        REVISIT_POLICIES,
        LinkHistory,
        NewPage,
        PageWindow,
        RevisitCrawler,
        RevisitSettings,
        RevisitStats,
        body_digest,
        revisit,
        run_with_progress,
        volatile_pattern,
    )
    from crawler.robots import (
        RobotsCache,
        RobotsRules,
        RobotsState,
        RobotsTxt,
        fetch_robots_file,
        is_valid_product_token,
        robots_path,
    )
    from crawler.scope import (
        Scope,
        describe_scope,
    )
    from crawler.shard import (
        DISPATCH_LEAD,
        Attempt,
        FetchPage,
        FetchRobots,
        PageDone,
        PipeTransport,
        RobotsDone,
        ShardedCrawler,
        ShardWorker,
        StartWorker,
        StopWorker,
        Transport,
        WorkerDone,
        WorkerOrder,
        WorkerPool,
        encode_frame,
        open_crawler,
        read_frame,
        serve,
        shard_of,
        spawn_process,
    )
    from crawler.sitemaps import (
        Sitemap,
        SitemapReader,
        parse_sitemap,
    )
    from crawler.tasks import (
        FetchTasks,
    )
    from crawler.token_bucket import (
        TokenBucket,
    )
    from crawler.traps import (
        TRAP_RULES,
        TrapGuard,
        path_pattern,
    )
    from crawler.urls import (
        MAX_URL_LENGTH,
        host_key,
        is_local_host,
        normalize_escapes,
        normalize_url,
        remove_dot_segments,
    )

#: Public name -> the module that defines it, imported on first use.
_LAZY: dict[str, str] = {
    "ACCEPT_ENCODING": "crawler.codings",
    "Attempt": "crawler.shard",
    "BodyDecoder": "crawler.codings",
    "CorruptBody": "crawler.codings",
    "CrawlRegistry": "crawler.registry",
    "CrawlStats": "crawler.engine",
    "Crawler": "crawler.engine",
    "DISPATCH_LEAD": "crawler.shard",
    "FetchPage": "crawler.shard",
    "FetchResult": "crawler.fetcher",
    "FetchRobots": "crawler.shard",
    "FetchTasks": "crawler.tasks",
    "Fetcher": "crawler.fetcher",
    "Frontier": "crawler.frontier",
    "HostGlobResolver": "crawler.resolve",
    "HostSlot": "crawler.politeness",
    "LinkHistory": "crawler.revisit",
    "MAX_URL_LENGTH": "crawler.urls",
    "META_SETTINGS": "crawler.config",
    "NOT_MODIFIED_PROFILE": "crawler.archive",
    "NewPage": "crawler.revisit",
    "PIECE": "crawler.codings",
    "PageDone": "crawler.shard",
    "PageLinks": "crawler.links",
    "PageWindow": "crawler.revisit",
    "PipeTransport": "crawler.shard",
    "PolitenessPolicy": "crawler.politeness",
    "Progress": "crawler.progress",
    "RETRYABLE_ERRORS": "crawler.retry",
    "REVISIT_POLICIES": "crawler.revisit",
    "Registered": "crawler.registry",
    "ResolveRule": "crawler.resolve",
    "Restored": "crawler.resume",
    "ResumeSettings": "crawler.resume",
    "RetryPolicy": "crawler.retry",
    "RevisitCrawler": "crawler.revisit",
    "RevisitSettings": "crawler.revisit",
    "RevisitStats": "crawler.revisit",
    "RobotsCache": "crawler.robots",
    "RobotsDone": "crawler.shard",
    "RobotsRules": "crawler.robots",
    "RobotsState": "crawler.robots",
    "RobotsTxt": "crawler.robots",
    "Scope": "crawler.scope",
    "ShardWorker": "crawler.shard",
    "ShardedCrawler": "crawler.shard",
    "Sitemap": "crawler.sitemaps",
    "SitemapReader": "crawler.sitemaps",
    "StartWorker": "crawler.shard",
    "StopWorker": "crawler.shard",
    "TRAP_RULES": "crawler.traps",
    "Taken": "crawler.frontier",
    "TokenBucket": "crawler.token_bucket",
    "Transport": "crawler.shard",
    "TrapGuard": "crawler.traps",
    "UnsupportedCoding": "crawler.codings",
    "WarcArchive": "crawler.archive",
    "WarcImport": "crawler.ingest",
    "WorkerDone": "crawler.shard",
    "WorkerOrder": "crawler.shard",
    "WorkerPool": "crawler.shard",
    "body_digest": "crawler.revisit",
    "build_settings": "crawler.config",
    "changed_settings": "crawler.config",
    "convert_setting": "crawler.config",
    "crawl": "crawler.engine",
    "decode_body": "crawler.fetcher",
    "decode_page": "crawler.encodings",
    "describe_scope": "crawler.scope",
    "encode_frame": "crawler.shard",
    "extract_links": "crawler.links",
    "fetch_robots_file": "crawler.robots",
    "format_clock": "crawler.progress",
    "format_line": "crawler.progress",
    "format_summary": "crawler.progress",
    "host_key": "crawler.urls",
    "import_warc": "crawler.ingest",
    "is_html": "crawler.fetcher",
    "is_local_host": "crawler.urls",
    "is_retryable_status": "crawler.retry",
    "is_valid_product_token": "crawler.robots",
    "link_ids": "crawler.links",
    "load_toml": "crawler.config",
    "lookup_label": "crawler.encodings",
    "make_ssl_context": "crawler.resolve",
    "merge_layers": "crawler.config",
    "merge_seeds": "crawler.resume",
    "normalize_escapes": "crawler.urls",
    "normalize_url": "crawler.urls",
    "open_crawler": "crawler.shard",
    "page_encoding": "crawler.encodings",
    "parse_assignments": "crawler.config",
    "parse_retry_after": "crawler.politeness",
    "parse_rule": "crawler.resolve",
    "parse_rules": "crawler.resolve",
    "parse_sitemap": "crawler.sitemaps",
    "path_pattern": "crawler.traps",
    "read_frame": "crawler.shard",
    "read_meta": "crawler.resume",
    "read_stored_settings": "crawler.config",
    "remove_dot_segments": "crawler.urls",
    "replay": "crawler.resume",
    "restore": "crawler.resume",
    "restore_host": "crawler.resume",
    "resume_settings": "crawler.resume",
    "revisit": "crawler.revisit",
    "revisit_base_settings": "crawler.config",
    "robots_path": "crawler.robots",
    "run_with_progress": "crawler.revisit",
    "serve": "crawler.shard",
    "settings_dict": "crawler.config",
    "settings_json": "crawler.resume",
    "settings_values": "crawler.config",
    "shard_of": "crawler.shard",
    "spawn_process": "crawler.shard",
    "stop_on_signals": "crawler.progress",
    "stored_settings": "crawler.config",
    "url_encoding": "crawler.encodings",
    "volatile_pattern": "crawler.revisit",
}

__all__ = [
    "ACCEPT_ENCODING",
    "DEFAULT_USER_AGENT",
    "DISPATCH_LEAD",
    "MAX_URL_LENGTH",
    "META_SETTINGS",
    "NOT_MODIFIED_PROFILE",
    "PIECE",
    "RETRYABLE_ERRORS",
    "REVISIT_POLICIES",
    "TRAP_RULES",
    "VERSION",
    "Attempt",
    "BodyDecoder",
    "CorruptBody",
    "CrawlRegistry",
    "CrawlSettings",
    "CrawlStats",
    "Crawler",
    "FetchPage",
    "FetchResult",
    "FetchRobots",
    "FetchTasks",
    "Fetcher",
    "Frontier",
    "HostGlobResolver",
    "HostSlot",
    "LinkHistory",
    "NewPage",
    "PageDone",
    "PageLinks",
    "PageWindow",
    "PipeTransport",
    "PolitenessPolicy",
    "Progress",
    "Registered",
    "ResolveRule",
    "Restored",
    "ResumeSettings",
    "RetryPolicy",
    "RevisitCrawler",
    "RevisitSettings",
    "RevisitStats",
    "RobotsCache",
    "RobotsDone",
    "RobotsRules",
    "RobotsState",
    "RobotsTxt",
    "Scope",
    "ShardWorker",
    "ShardedCrawler",
    "Sitemap",
    "SitemapReader",
    "StartWorker",
    "StopWorker",
    "Taken",
    "TokenBucket",
    "Transport",
    "TrapGuard",
    "UnsupportedCoding",
    "WarcArchive",
    "WarcImport",
    "WorkerDone",
    "WorkerOrder",
    "WorkerPool",
    "__version__",
    "body_digest",
    "build_settings",
    "changed_settings",
    "convert_setting",
    "crawl",
    "decode_body",
    "decode_page",
    "describe_scope",
    "encode_frame",
    "extract_links",
    "fetch_robots_file",
    "format_clock",
    "format_line",
    "format_summary",
    "host_key",
    "import_warc",
    "is_html",
    "is_local_host",
    "is_retryable_status",
    "is_valid_product_token",
    "link_ids",
    "load_toml",
    "lookup_label",
    "make_ssl_context",
    "merge_layers",
    "merge_seeds",
    "normalize_escapes",
    "normalize_url",
    "open_crawler",
    "page_encoding",
    "parse_assignments",
    "parse_retry_after",
    "parse_rule",
    "parse_rules",
    "parse_sitemap",
    "path_pattern",
    "read_frame",
    "read_meta",
    "read_stored_settings",
    "remove_dot_segments",
    "replay",
    "restore",
    "restore_host",
    "resume_settings",
    "revisit",
    "revisit_base_settings",
    "robots_path",
    "run_with_progress",
    "serve",
    "settings_dict",
    "settings_json",
    "settings_values",
    "shard_of",
    "spawn_process",
    "stop_on_signals",
    "stored_settings",
    "url_encoding",
    "user_agent",
    "volatile_pattern",
]


def __getattr__(name: str) -> Any:
    # PEP 562: heavy modules load on first use, so importing one light module stays cheap.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
