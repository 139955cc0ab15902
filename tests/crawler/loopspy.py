"""Which event loop the crawl's entry points run on (with the ``loops`` fixture of
conftest.py, which records the loop at every ``eventloop.run``)."""

from __future__ import annotations


def expected_loop() -> str:
    """The loop every entry point runs on: uvloop when installed, else asyncio's."""
    from webcrawl.crawler import eventloop

    return "uvloop" if eventloop.loop_name() == "uvloop" else "asyncio"
