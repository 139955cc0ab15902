import sys

from crawler.cli import main

sys.exit(main())
