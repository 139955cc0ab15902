import sys

from webcrawl.crawler.cli import main

sys.exit(main())
