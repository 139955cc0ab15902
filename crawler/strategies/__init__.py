"""Crawl orderings (the front side of the frontier). See :mod:`crawler.strategies.base`."""

from __future__ import annotations

from crawler.strategies.base import PriorityUpdates, Strategy

__all__ = ["PriorityUpdates", "Strategy"]
