"""The diffs a report has, on the static page: each recompile against the compile it replaced
(what the notebook's "diff [0/0] → [0/1]" button shows), rendered once when the page is made
and folded under the recompile's tab (``_registry``: the recompiles view's page body)."""

from __future__ import annotations

from ..base._types import ExplorerView
from ..lower._html import esc


def recompile_diffs_html(view: ExplorerView) -> str:
    from ._diff import diff_compiles
    from ._view import CSS, diff_html

    parts = []
    ids = {c.id for c in view.report.compiles}
    for r in view.recompiles:
        if r.diff_from not in ids or r.compile_id not in ids:  # a compile the report lacks
            continue
        d = diff_compiles(view.report, r.diff_from, r.compile_id)
        parts.append(
            f'<details class="pt2x-page-diff" data-diff="{esc(r.diff_from)}-{esc(r.compile_id)}">'
            f"<summary>diff [{esc(r.diff_from)}] → [{esc(r.compile_id)}]</summary>"
            # the diff's rules come once, in the page's stylesheet (page_css)
            f"{diff_html(d).replace(f'<style>{CSS}</style>', '', 1)}</details>"
        )
    return "".join(parts)


def page_css(body: str) -> str:
    """The diffs' rules, where the page shows a diff."""
    from ._view import CSS

    return CSS if 'class="pt2x-page-diff"' in body else ""
