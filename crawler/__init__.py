"""The polite asyncio crawler.

Crawl a fixture web served by ``webcrawl fixture serve --port 8400``::

    from webcrawl.crawler import CrawlSettings, crawl

    stats = crawl(["http://site0.test:8400/"], "crawl.db",
                  CrawlSettings(scope_hosts=("*.test",), resolve=("*.test=127.0.0.1",)))

Every public name of the crawler's modules is importable from here; the modules load on
first use, so ``import crawler.urls`` (the fixture web's URL normaliser) pulls in no aiohttp.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from webcrawl.crawler.settings import (
    DEFAULT_USER_AGENT,
    VERSION,
    CrawlSettings,
    user_agent,
)
from webcrawl.storage._version import __version__

if TYPE_CHECKING:
    from webcrawl.crawler.archive import (
        NOT_MODIFIED_PROFILE,
        WarcArchive,
    )
    from webcrawl.crawler.codings import (
        ACCEPT_ENCODING,
        PIECE,
        BodyDecoder,
        CorruptBody,
        UnsupportedCoding,
    )
    from webcrawl.crawler.config import (
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
    from webcrawl.crawler.encodings import (
        decode_page,
        lookup_label,
        page_encoding,
        url_encoding,
    )
    from webcrawl.crawler.engine import (
        Crawler,
        CrawlStats,
        crawl,
    )
    from webcrawl.crawler.eventloop import (
        loop_name,
        run,
    )
    from webcrawl.crawler.fetcher import (
        Fetcher,
        FetchResult,
        decode_body,
        is_html,
    )
    from webcrawl.crawler.frontier import (
        Frontier,
        Taken,
    )
    from webcrawl.crawler.http1 import (
        Http1Client,
        Http1Response,
    )
    from webcrawl.crawler.ingest import (
        WarcImport,
        import_warc,
    )
    from webcrawl.crawler.links import (
        PageLinks,
        extract_links,
        link_ids,
    )
    from webcrawl.crawler.politeness import (
        HostSlot,
        PolitenessPolicy,
        parse_retry_after,
        sleep_for,
        sleep_until,
    )
    from webcrawl.crawler.progress import (
        Progress,
        format_clock,
        format_line,
        format_summary,
        stop_on_signals,
    )
    from webcrawl.crawler.registry import (
        CrawlRegistry,
        Registered,
    )
    from webcrawl.crawler.resolve import (
        HostGlobResolver,
        ResolveResult,
        ResolveRule,
        make_ssl_context,
        parse_rule,
        parse_rules,
    )
    from webcrawl.crawler.resume import (
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
    from webcrawl.crawler.retry import (
        RETRYABLE_ERRORS,
        RetryPolicy,
        is_retryable_status,
    )
    from webcrawl.crawler.revisit import (
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
    from webcrawl.crawler.robots import (
        RobotsCache,
        RobotsRules,
        RobotsState,
        RobotsTxt,
        fetch_robots_file,
        is_valid_product_token,
        robots_path,
    )
    from webcrawl.crawler.scope import (
        Scope,
        describe_scope,
    )
    from webcrawl.crawler.shard import (
        cluster_cpus,
        connect_ray,
        open_ray_crawler,
    )
    from webcrawl.crawler.sitemaps import (
        Sitemap,
        SitemapReader,
        parse_sitemap,
    )
    from webcrawl.crawler.tasks import (
        FetchTasks,
    )
    from webcrawl.crawler.token_bucket import (
        TokenBucket,
    )
    from webcrawl.crawler.traps import (
        TRAP_RULES,
        TrapGuard,
        path_pattern,
    )
    from webcrawl.crawler.urls import (
        MAX_URL_LENGTH,
        host_key,
        is_local_host,
        normalize_escapes,
        normalize_url,
        remove_dot_segments,
    )

#: Public name -> the module that defines it, imported on first use.
_LAZY: dict[str, str] = {
    "ACCEPT_ENCODING": "webcrawl.crawler.codings",
    "BodyDecoder": "webcrawl.crawler.codings",
    "CorruptBody": "webcrawl.crawler.codings",
    "CrawlRegistry": "webcrawl.crawler.registry",
    "CrawlStats": "webcrawl.crawler.engine",
    "Crawler": "webcrawl.crawler.engine",
    "FetchResult": "webcrawl.crawler.fetcher",
    "FetchTasks": "webcrawl.crawler.tasks",
    "Fetcher": "webcrawl.crawler.fetcher",
    "Frontier": "webcrawl.crawler.frontier",
    "HostGlobResolver": "webcrawl.crawler.resolve",
    "HostSlot": "webcrawl.crawler.politeness",
    "Http1Client": "webcrawl.crawler.http1",
    "Http1Response": "webcrawl.crawler.http1",
    "LinkHistory": "webcrawl.crawler.revisit",
    "MAX_URL_LENGTH": "webcrawl.crawler.urls",
    "META_SETTINGS": "webcrawl.crawler.config",
    "NOT_MODIFIED_PROFILE": "webcrawl.crawler.archive",
    "NewPage": "webcrawl.crawler.revisit",
    "PIECE": "webcrawl.crawler.codings",
    "PageLinks": "webcrawl.crawler.links",
    "PageWindow": "webcrawl.crawler.revisit",
    "PolitenessPolicy": "webcrawl.crawler.politeness",
    "Progress": "webcrawl.crawler.progress",
    "RETRYABLE_ERRORS": "webcrawl.crawler.retry",
    "REVISIT_POLICIES": "webcrawl.crawler.revisit",
    "Registered": "webcrawl.crawler.registry",
    "ResolveResult": "webcrawl.crawler.resolve",
    "ResolveRule": "webcrawl.crawler.resolve",
    "Restored": "webcrawl.crawler.resume",
    "ResumeSettings": "webcrawl.crawler.resume",
    "RetryPolicy": "webcrawl.crawler.retry",
    "RevisitCrawler": "webcrawl.crawler.revisit",
    "RevisitSettings": "webcrawl.crawler.revisit",
    "RevisitStats": "webcrawl.crawler.revisit",
    "RobotsCache": "webcrawl.crawler.robots",
    "RobotsRules": "webcrawl.crawler.robots",
    "RobotsState": "webcrawl.crawler.robots",
    "RobotsTxt": "webcrawl.crawler.robots",
    "Scope": "webcrawl.crawler.scope",
    "Sitemap": "webcrawl.crawler.sitemaps",
    "SitemapReader": "webcrawl.crawler.sitemaps",
    "TRAP_RULES": "webcrawl.crawler.traps",
    "Taken": "webcrawl.crawler.frontier",
    "TokenBucket": "webcrawl.crawler.token_bucket",
    "TrapGuard": "webcrawl.crawler.traps",
    "UnsupportedCoding": "webcrawl.crawler.codings",
    "WarcArchive": "webcrawl.crawler.archive",
    "WarcImport": "webcrawl.crawler.ingest",
    "body_digest": "webcrawl.crawler.revisit",
    "build_settings": "webcrawl.crawler.config",
    "changed_settings": "webcrawl.crawler.config",
    "cluster_cpus": "webcrawl.crawler.shard",
    "connect_ray": "webcrawl.crawler.shard",
    "convert_setting": "webcrawl.crawler.config",
    "crawl": "webcrawl.crawler.engine",
    "decode_body": "webcrawl.crawler.fetcher",
    "decode_page": "webcrawl.crawler.encodings",
    "describe_scope": "webcrawl.crawler.scope",
    "extract_links": "webcrawl.crawler.links",
    "fetch_robots_file": "webcrawl.crawler.robots",
    "format_clock": "webcrawl.crawler.progress",
    "format_line": "webcrawl.crawler.progress",
    "format_summary": "webcrawl.crawler.progress",
    "host_key": "webcrawl.crawler.urls",
    "import_warc": "webcrawl.crawler.ingest",
    "is_html": "webcrawl.crawler.fetcher",
    "is_local_host": "webcrawl.crawler.urls",
    "is_retryable_status": "webcrawl.crawler.retry",
    "is_valid_product_token": "webcrawl.crawler.robots",
    "link_ids": "webcrawl.crawler.links",
    "load_toml": "webcrawl.crawler.config",
    "lookup_label": "webcrawl.crawler.encodings",
    "loop_name": "webcrawl.crawler.eventloop",
    "make_ssl_context": "webcrawl.crawler.resolve",
    "merge_layers": "webcrawl.crawler.config",
    "merge_seeds": "webcrawl.crawler.resume",
    "normalize_escapes": "webcrawl.crawler.urls",
    "normalize_url": "webcrawl.crawler.urls",
    "open_ray_crawler": "webcrawl.crawler.shard",
    "page_encoding": "webcrawl.crawler.encodings",
    "parse_assignments": "webcrawl.crawler.config",
    "parse_retry_after": "webcrawl.crawler.politeness",
    "parse_rule": "webcrawl.crawler.resolve",
    "parse_rules": "webcrawl.crawler.resolve",
    "parse_sitemap": "webcrawl.crawler.sitemaps",
    "path_pattern": "webcrawl.crawler.traps",
    "read_meta": "webcrawl.crawler.resume",
    "read_stored_settings": "webcrawl.crawler.config",
    "remove_dot_segments": "webcrawl.crawler.urls",
    "replay": "webcrawl.crawler.resume",
    "restore": "webcrawl.crawler.resume",
    "restore_host": "webcrawl.crawler.resume",
    "resume_settings": "webcrawl.crawler.resume",
    "revisit": "webcrawl.crawler.revisit",
    "revisit_base_settings": "webcrawl.crawler.config",
    "robots_path": "webcrawl.crawler.robots",
    "run": "webcrawl.crawler.eventloop",
    "run_with_progress": "webcrawl.crawler.revisit",
    "settings_dict": "webcrawl.crawler.config",
    "settings_json": "webcrawl.crawler.resume",
    "settings_values": "webcrawl.crawler.config",
    "sleep_for": "webcrawl.crawler.politeness",
    "sleep_until": "webcrawl.crawler.politeness",
    "stop_on_signals": "webcrawl.crawler.progress",
    "stored_settings": "webcrawl.crawler.config",
    "url_encoding": "webcrawl.crawler.encodings",
    "volatile_pattern": "webcrawl.crawler.revisit",
}

__all__ = [
    "ACCEPT_ENCODING",
    "DEFAULT_USER_AGENT",
    "MAX_URL_LENGTH",
    "META_SETTINGS",
    "NOT_MODIFIED_PROFILE",
    "PIECE",
    "RETRYABLE_ERRORS",
    "REVISIT_POLICIES",
    "TRAP_RULES",
    "VERSION",
    "BodyDecoder",
    "CorruptBody",
    "CrawlRegistry",
    "CrawlSettings",
    "CrawlStats",
    "Crawler",
    "FetchResult",
    "FetchTasks",
    "Fetcher",
    "Frontier",
    "HostGlobResolver",
    "HostSlot",
    "Http1Client",
    "Http1Response",
    "LinkHistory",
    "NewPage",
    "PageLinks",
    "PageWindow",
    "PolitenessPolicy",
    "Progress",
    "Registered",
    "ResolveResult",
    "ResolveRule",
    "Restored",
    "ResumeSettings",
    "RetryPolicy",
    "RevisitCrawler",
    "RevisitSettings",
    "RevisitStats",
    "RobotsCache",
    "RobotsRules",
    "RobotsState",
    "RobotsTxt",
    "Scope",
    "Sitemap",
    "SitemapReader",
    "Taken",
    "TokenBucket",
    "TrapGuard",
    "UnsupportedCoding",
    "WarcArchive",
    "WarcImport",
    "__version__",
    "body_digest",
    "build_settings",
    "changed_settings",
    "cluster_cpus",
    "connect_ray",
    "convert_setting",
    "crawl",
    "decode_body",
    "decode_page",
    "describe_scope",
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
    "loop_name",
    "make_ssl_context",
    "merge_layers",
    "merge_seeds",
    "normalize_escapes",
    "normalize_url",
    "open_ray_crawler",
    "page_encoding",
    "parse_assignments",
    "parse_retry_after",
    "parse_rule",
    "parse_rules",
    "parse_sitemap",
    "path_pattern",
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
    "run",
    "run_with_progress",
    "settings_dict",
    "settings_json",
    "settings_values",
    "sleep_for",
    "sleep_until",
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
