"""webcrawl: a polite asyncio web crawler and an offline web-graph analysis suite.

Four packages lie below this one, each with its public API in its ``__init__``:
``webcrawl.crawler`` (the crawler and the ``webcrawl`` command), ``webcrawl.analysis``
(measurements of the captured graph and of page change, and the graph handed to networkx
or pandas), ``webcrawl.storage`` (the crawl database) and ``webcrawl.fixtures`` (the
synthetic web).  ``import webcrawl`` gives the version and loads nothing heavy.
"""

from webcrawl.storage._version import __version__

__all__ = ["__version__"]
