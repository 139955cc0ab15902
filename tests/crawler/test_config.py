"""Crawl settings from a TOML file, ``--set name=value`` and the crawl's stored copy."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from miniweb import MiniWeb, html
from webcrawl.crawler.cli import main
from webcrawl.crawler.config import (
    build_settings,
    load_toml,
    parse_assignments,
    settings_dict,
    stored_settings,
)
from webcrawl.crawler.settings import CrawlSettings
from webcrawl.storage.errors import ConfigError

#: A text for every field and the value it must give (a value unlike the default).
TEXTS: dict[str, tuple[str, Any]] = {
    "fetch_connect_timeout": ("3.5", 3.5), "fetch_read_timeout": ("7", 7.0),
    "fetch_total_timeout": ("61", 61.0), "fetch_max_body": ("1000", 1000),
    "fetch_user_agent": ("bot/1 (+mailto:me@example.org)", "bot/1 (+mailto:me@example.org)"),
    "fetch_robots_agent": ("bot", "bot"),
    "fetch_contact": ("ops@example.org", "ops@example.org"), "fetch_max_redirects": ("2", 2),
    "fetch_keepalive": ("1.5", 1.5), "fetch_happy_eyeballs_delay": ("0.1", 0.1),
    "proxy": ("http://p.example:3128", "http://p.example:3128"),
    "polite_delay_factor": ("2", 2.0),
    "polite_min_delay": ("0.25", 0.25), "polite_max_delay": ("9", 9.0),
    "polite_max_crawl_delay": ("5", 5.0), "polite_max_retry_after": ("50", 50.0),
    "robots_obey": ("no", False), "robots_cache_ttl": ("60", 60.0),
    "robots_retry_delay": ("2", 2.0), "robots_max_attempts": ("7", 7),
    "robots_max_size": ("4096", 4096), "retry_attempts": ("5", 5),
    "retry_backoff": ("0.1", 0.1), "retry_backoff_max": ("3", 3.0),
    "retry_jitter": ("0", 0.0), "scope_hosts": ("a.test, *.b.test", ("a.test", "*.b.test")),
    "scope_domains": ('["c.test"]', ("c.test",)), "scope_max_depth": ("4", 4),
    "scope_max_pages": ("100", 100), "scope_max_per_host": ("none", None),
    "scope_max_url_length": ("500", 500), "scope_max_path_repeat": ("2", 2),
    "scope_skip_extensions": (".pdf,.zip", (".pdf", ".zip")),
    "links_max_per_page": ("10", 10), "links_follow_nofollow": ("false", False),
    "links_obey_meta_nofollow": ("off", False),
    "links_from_duplicates": ("yes", True), "near_duplicates": ("on", True),
    "near_min_resemblance": ("0.9", 0.9), "near_process": ("off", False),
    "tls_ca_file": ("none", None),
    "tls_insecure": ("true", True), "resolve": ("*.test=127.0.0.1", ("*.test=127.0.0.1",)),
    "concurrency": ("3", 3), "workers": ("2", 2), "shard_window": ("4", 4),
    "shard_flush_interval": ("0.01", 0.01),
    "frontier_strategy": ("dfs", "dfs"),
    "frontier_seed": ("9", 9),
    "frontier_record_rank": ("0", False), "store_batch_size": ("10", 10),
    "frontier_head": ("8", 8), "memory_limit": ("1.5G", 3 << 29),
    "store_flush_interval": ("0.1", 0.1), "store_busy_wait": ("7.5", 7.5),
    "progress_interval": ("2", 2.0),
    "progress_log_interval": ("30", 30.0),
    "stop_grace": ("2.5", 2.5),
    "warc_dir": ("none", None), "warc_max_size": ("5000", 5000),
    "warc_prefix": ("mirror", "mirror"),
    "warc_dedup": ("none", None), "warc_dedup_repeats": ("no", False),
    "warc_cdxj": ("0", False),
    "scope_max_query_params": ("none", None), "scope_max_query_variants": ("5", 5),
    "scope_max_pattern_urls": ("20", 20), "sitemaps_follow": ("yes", True),
    "sitemaps_max_files": ("3", 3), "sitemaps_max_urls": ("100", 100),
    "sitemaps_max_bytes": ("4096", 4096),
    "links_thread_above": ("65536", 65536),
}


def test_every_field_can_be_set_from_text() -> None:
    names = {f.name for f in fields(CrawlSettings)}
    assert set(TEXTS) == names, "a new CrawlSettings field needs a line in TEXTS"
    got = parse_assignments(f"{name}={text}" for name, (text, _) in TEXTS.items())
    assert got == {name: value for name, (_, value) in TEXTS.items()}
    settings = build_settings(got)
    for name, (_, value) in TEXTS.items():
        assert getattr(settings, name) == value
    # Stored as JSON and read back: the same settings.
    meta = {"settings": json.dumps(settings_dict(settings))}
    assert build_settings(stored_settings(meta)) == settings


@pytest.mark.parametrize(("item", "message"), [
    ("polite_min_dely=1", "unknown setting 'polite_min_dely' (did you mean polite_min_delay?)"),
    ("retry_attempts=2.5", "retry_attempts must be a int, got '2.5'"),
    ("polite_min_delay=soon", "polite_min_delay must be a float, got 'soon'"),
    ("robots_obey=maybe", "robots_obey must be a bool, got 'maybe'"),
    ("scope_max_pages=lots", "scope_max_pages must be a int or none, got 'lots'"),
    ("fetch_max_body=none", "fetch_max_body must be a int, got 'none'"),
    ("scope_hosts=[1, 2]", "scope_hosts must be a list of strings, got '[1, 2]'"),
    ("concurrency", "expected name=value, got 'concurrency'"),
], ids=["unknown", "int", "float", "bool", "optional", "not-optional", "tuple", "no-eq"])
def test_bad_assignments_name_the_setting(item: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_assignments([item])
    assert message in str(err.value) and "\n" not in str(err.value)


def test_toml_flat_names_and_prefix_tables(tmp_path: Path) -> None:
    path = tmp_path / "crawl.toml"
    path.write_text('resolve = ["*.test=127.0.0.1"]\nconcurrency = 4\n'
                    "[polite]\nmin_delay = 0\ndelay_factor = 0\n"
                    "[scope]\nmax_pages = 3\ndomains = [\"x.test\"]\n", encoding="utf-8")
    assert load_toml(path) == {"resolve": ("*.test=127.0.0.1",), "concurrency": 4,
                               "polite_min_delay": 0.0, "polite_delay_factor": 0.0,
                               "scope_max_pages": 3, "scope_domains": ("x.test",)}
    path.write_text("[polite]\nmin_delay = true\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[polite\] min_delay: polite_min_delay must be"):
        load_toml(path)
    path.write_text("concurrency = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_toml(path)
    with pytest.raises(ConfigError, match="no config file"):
        load_toml(tmp_path / "missing.toml")


def test_layers_later_wins_and_tls_choices_exclude_each_other(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    s = build_settings({"tls_ca_file": str(ca), "polite_min_delay": 2.0},
                       {"tls_insecure": True}, {"polite_min_delay": 0.5})
    assert s.tls_insecure and s.tls_ca_file is None and s.polite_min_delay == 0.5
    s = build_settings({"tls_insecure": True}, {"tls_ca_file": str(ca)})
    assert not s.tls_insecure and s.tls_ca_file == str(ca.resolve())


def stored(db: Path) -> dict[str, Any]:
    with sqlite3.connect(db) as conn:
        return dict(json.loads(conn.execute(
            "SELECT value FROM meta WHERE key = 'settings'").fetchone()[0]))


async def test_crawl_config_and_set_are_stored_with_the_crawl(
        mini_web: MiniWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        mini_web.add("a.test", f"/{i}", html(*(f"/{j}" for j in range(6))))
    import trustme

    trustme.CA().cert_pem.write_to_path(str(tmp_path / "ca.pem"))  # unused over http
    config = tmp_path / "crawl.toml"
    config.write_text('resolve = ["*.test=127.0.0.1"]\ntls_ca_file = "ca.pem"\n'
                      "[polite]\nmin_delay = 0\ndelay_factor = 0\nmax_delay = 0\n"
                      "[scope]\nmax_pages = 5\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # a relative CA path: stored absolute
    db = tmp_path / "c.db"
    argv = ["crawl", mini_web.url("a.test", "/0"), "--db", str(db), "--quiet",
            "--config", str(config), "--max-pages", "4", "--set", "scope_max_pages=3",
            "--set", "fetch_user_agent=testbot/1 (+mailto:ops@example.org)"]
    assert await asyncio.to_thread(main, argv) == 0
    s = stored(db)
    assert s["scope_max_pages"] == 3  # --set wins over --max-pages, which wins over the file
    assert s["polite_min_delay"] == 0 and s["resolve"] == ["*.test=127.0.0.1"]
    assert s["tls_ca_file"] == str((tmp_path / "ca.pem").resolve())
    assert s["fetch_user_agent"] == "testbot/1 (+mailto:ops@example.org)"
    assert len(mini_web.page_hits("a.test")) == 3
    assert {h["User-Agent"] for h in mini_web.headers} == {
        "testbot/1 (+mailto:ops@example.org)"}


@pytest.mark.parametrize("extra", [["--set", "polite_min_dely=1"],
                                   ["--set", "retry_attempts=many"],
                                   ["--config", "{tmp}/missing.toml"],
                                   ["--set", "polite_min_delay=5", "--set",
                                    "polite_max_delay=1"]],
                         ids=["unknown", "bad-value", "no-file", "invalid-together"])
def test_bad_settings_on_the_command_line_are_one_line(
        extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["crawl", "http://a.test/", "--db", str(tmp_path / "c.db"),
            *[a.replace("{tmp}", str(tmp_path)) for a in extra]]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "c.db").exists()
