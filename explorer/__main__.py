"""`python -m explorer ...` is the `pt2-explorer` command."""

import sys

from explorer.cli import main

sys.exit(main())
