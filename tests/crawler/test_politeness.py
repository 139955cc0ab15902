"""Politeness delays (Mercator factor, min/max, Crawl-delay, Retry-After) and settings."""

from __future__ import annotations

import pytest
from webcrawl.crawler.politeness import HostSlot, PolitenessPolicy, parse_retry_after
from webcrawl.crawler.robots import RobotsCache, RobotsState
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import ConfigError


@pytest.mark.parametrize(("elapsed", "crawl_delay", "retry_after", "expected"), [
    (0.001, 0.0, None, 1.0),     # floor
    (0.5, 0.0, None, 5.0),       # Mercator: 10 t
    (10.0, 0.0, None, 30.0),     # cap
    (0.5, 12.0, None, 12.0),     # Crawl-delay above the rule
    (0.5, 500.0, None, 60.0),    # Crawl-delay clamped
    (0.5, 0.0, 120.0, 120.0),    # Retry-After beyond max_delay is honoured
    (0.5, 0.0, 9999.0, 600.0),   # ... up to its own cap
])
def test_delay_rule(elapsed: float, crawl_delay: float, retry_after: float | None,
                    expected: float) -> None:
    policy = PolitenessPolicy(CrawlSettings())
    assert policy.delay(elapsed, crawl_delay, retry_after) == pytest.approx(expected)


def test_slot_clock_never_goes_back() -> None:
    policy = PolitenessPolicy(CrawlSettings(polite_min_delay=0.0, polite_delay_factor=1.0))
    slot = HostSlot(0, "a.test")
    assert policy.after_request(slot, 100.0, 102.0, retry_after=50.0) == 152.0
    assert policy.after_request(slot, 103.0, 103.5) == 152.0
    assert slot.requests == 2


@pytest.mark.parametrize(("value", "expected"), [
    ("120", 120.0), (" 5 ", 5.0), ("Wed, 21 Oct 2015 07:28:00 GMT", 60.0), ("soon", None),
    ("", None), (None, None), ("Wed, 21 Oct 2015 07:26:00 GMT", 0.0),
])
def test_retry_after(value: str | None, expected: float | None) -> None:
    now = 1445412420.0  # 2015-10-21 07:27:00 UTC
    assert parse_retry_after(value, now=now) == expected


def test_robots_cache_ttl_and_retries() -> None:
    cache = RobotsCache(CrawlSettings(robots_cache_ttl=100.0, robots_retry_delay=10.0,
                                      robots_max_attempts=2))
    assert cache.needs_fetch(0, now=0.0)
    cache.learn(0, 200, "User-agent: *\nDisallow: /x\nCrawl-delay: 3", now=0.0)
    assert not cache.needs_fetch(0, now=50.0) and cache.needs_fetch(0, now=101.0)
    assert cache.rules(0).crawl_delay == 3.0
    assert not cache.allowed(0, "http://a.test/x/1") and cache.allowed(0, "http://a.test/y")
    rules = cache.learn(1, 503, None, now=0.0)
    assert rules.state is RobotsState.UNAVAILABLE and cache.wait_until(1) == 10.0
    assert not cache.allowed(1, "http://b.test/")
    assert cache.learn(1, None, None, now=10.0).state is RobotsState.DISALLOW_ALL
    assert not cache.needs_fetch(1, now=1e9)
    assert cache.learn(2, 404, None).state is RobotsState.ALLOW_ALL
    assert cache.allowed(2, "http://c.test/anything")


@pytest.mark.parametrize("kwargs", [
    {"polite_min_delay": -1.0}, {"concurrency": 0}, {"polite_min_delay": 5.0,
                                                     "polite_max_delay": 1.0},
    {"fetch_total_timeout": float("nan")}, {"scope_max_pages": -3}, {"fetch_user_agent": " "},
    {"tls_insecure": True, "tls_ca_file": "/x.pem"}, {"tls_ca_file": "/no/such.pem"},
    {"retry_attempts": 0},
], ids=lambda kw: ",".join(kw))
def test_settings_validate(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        CrawlSettings(**kwargs)  # type: ignore[arg-type]


def test_settings_defaults_documented() -> None:
    s = CrawlSettings()
    assert (s.polite_delay_factor, s.polite_min_delay, s.polite_max_delay) == (10.0, 1.0, 30.0)
    # The product and version, what it is, and no URL the project does not own.
    assert s.fetch_user_agent.startswith("webcrawl/") and "research crawler" in s.fetch_user_agent
    assert "http" not in s.fetch_user_agent
