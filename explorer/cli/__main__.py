"""`python -m explorer.cli ...`, as `python -m explorer ...`: the `pt2-explorer` command."""

import sys

from explorer.cli import main

sys.exit(main())
