"""A census over a model zoo: every model's compile story in one table (docs/census.md).

pt2-explorer census --zoo hf-small --jobs 2 --out census/
census = explorer.census.load_census("census/")
explorer.census.show(census)           # the widget; census_text / save_census_html
"""

from __future__ import annotations

from ._cases import MODES, ZOOS, Case, Settings, cases, parse_shard, shard
from ._diff import CensusDiff, diff_census
from ._diffview import diff_page, diff_text
from ._files import CensusFormatError
from ._merge import merge
from ._process import run_one
from ._run import run_census
from ._table import (
    STATUSES,
    BreakSite,
    Census,
    CensusRow,
    RecompileFact,
    load_census,
)
from ._view import (
    census_page,
    census_text,
    census_widget,
    save_census_html,
    select,
    show,
)

__all__ = [
    "MODES",
    "STATUSES",
    "ZOOS",
    "BreakSite",
    "Case",
    "Census",
    "CensusDiff",
    "CensusFormatError",
    "CensusRow",
    "RecompileFact",
    "Settings",
    "cases",
    "census_page",
    "census_text",
    "census_widget",
    "diff_census",
    "diff_page",
    "diff_text",
    "load_census",
    "merge",
    "parse_shard",
    "run_census",
    "run_one",
    "save_census_html",
    "select",
    "shard",
    "show",
]
