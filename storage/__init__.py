"""The crawl database: one SQLite file per crawl (see ``schema.sql``)."""

from __future__ import annotations

from storage.errors import *  # noqa: F403
from storage.errors import __all__ as _errors_all

__all__ = [*_errors_all]
