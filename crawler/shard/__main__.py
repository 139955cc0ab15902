"""``python -m crawler.shard``: run one shard worker on stdin/stdout (the pipe transport)."""

from webcrawl.crawler.shard.worker import main

main()
