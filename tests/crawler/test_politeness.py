"""Politeness delays (Mercator factor, min/max, Crawl-delay, Retry-After) and settings."""

from __future__ import annotations

import pytest
from webcrawl.crawler.politeness import HostSlot, HostSlots, PolitenessPolicy, parse_retry_after
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
    slot = HostSlot("a.test")
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


class ManualClock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_host_slots_keep_one_clock_per_host() -> None:
    clock = ManualClock()
    slots = HostSlots(CrawlSettings(polite_min_delay=1.0, polite_delay_factor=10.0), clock)
    assert slots.ready_at("a.test") == 0.0  # never contacted: at once
    a = slots.slot("a.test")
    assert slots.slot("a.test") is a and len(slots) == 1
    slots.after_request(a, 100.0, 100.5)  # 0.5 s: Mercator's 10 t = 5 s
    assert slots.ready_at("a.test") == pytest.approx(105.5)
    clock.now = 101.0
    assert slots.ready_in(a) == pytest.approx(4.5)


def test_a_crawl_delay_learnt_later_counts_from_the_last_request() -> None:
    slots = HostSlots(CrawlSettings(), ManualClock())
    a = slots.slot("a.test")
    slots.after_request(a, 100.0, 100.01)           # robots.txt: the 1 s floor
    assert a.ready_at == pytest.approx(101.01)
    slots.set_crawl_delay(a, 7.0)                    # what that robots.txt asked for
    assert a.ready_at == pytest.approx(107.01)
    slots.set_crawl_delay(a, 500.0)                  # clamped to polite_max_crawl_delay
    assert a.crawl_delay == 60.0 and a.ready_at == pytest.approx(160.01)
    slots.set_crawl_delay(a, None)                   # a wait already promised stays
    assert a.crawl_delay == 0.0 and a.ready_at == pytest.approx(160.01)
    b = slots.slot("b.test")                         # never contacted: nothing to wait for
    slots.set_crawl_delay(b, 5.0)
    assert b.ready_at == 0.0


def test_contacts_unknown_make_every_host_wait_a_full_delay() -> None:
    clock = ManualClock(50.0)
    slots = HostSlots(CrawlSettings(polite_min_delay=2.0), clock)
    known = slots.slot("known.test")
    slots.contacted_now()                            # a resume: last contacts unknown
    assert known.ready_at == pytest.approx(52.0)
    clock.now = 60.0
    late = slots.slot("late.test")                   # met after the resume: the same rule
    assert late.ready_at == pytest.approx(52.0)
    slots.set_crawl_delay(late, 9.0)                 # its stored Crawl-delay counts too
    assert late.ready_at == pytest.approx(59.0)
    slots.contacted_now("late.test")                 # a lost worker: this host only
    assert late.ready_at == pytest.approx(69.0) and known.ready_at == pytest.approx(52.0)


def test_reported_answers_keep_a_remote_hosts_clock() -> None:
    clock = ManualClock(10.0)
    slots = HostSlots(CrawlSettings(), clock)
    a = slots.slot("a.test")
    slots.reported(a, 3.0, elapsed=0.2)              # a worker's robots.txt answer
    assert a.ready_at == pytest.approx(13.0)
    slots.set_crawl_delay(a, 8.0)
    assert a.ready_at == pytest.approx(18.0)
    slots.reported(a, 1.0)                           # never earlier than promised
    assert a.ready_at == pytest.approx(18.0)
