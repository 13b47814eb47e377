"""``python -m crawler.cli``: how ``serve`` runs each update."""

import sys

from crawler.cli import main

sys.exit(main())
