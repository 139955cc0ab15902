"""Fixtures of the crawler tests (helpers live in ``miniweb.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from miniweb import MiniWeb


@pytest.fixture
async def mini_web() -> AsyncIterator[MiniWeb]:
    web_ = MiniWeb()
    await web_.start()
    try:
        yield web_
    finally:
        await web_.stop()

