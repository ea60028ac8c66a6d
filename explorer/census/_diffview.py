"""Two censuses' differences (``diff_census``, explorer/census/_diff.py's ``CensusDiff``) as views:
the terminal's text and a static page, regressions first, then fixes, the noise lines and the
rows one census lacks."""

from __future__ import annotations

from ..lower._html import CSS, esc
from ._diff import CensusDiff

WAITED_WORDS = "timed while its calls waited for a core (the machine's load)"


def _change_lines(c) -> list[str]:
    return [f"  {c.key}: " + "; ".join(c.worse + c.better)]


def diff_text(d: CensusDiff) -> str:
    """Regressions first, then fixes, then the rows one census lacks."""
    out = [f"census diff: {d.a} → {d.b}", ""]
    out.append(f"regressions ({len(d.regressions)}):")
    out += [ln for c in d.regressions for ln in _change_lines(c)] or ["  none"]
    out.append(f"fixes ({len(d.fixes)}):")
    out += [ln for c in d.fixes for ln in _change_lines(c)] or ["  none"]
    out.append(f"unchanged: {d.unchanged}")
    out += [f"noise: {n.line}" for n in d.noise]
    if d.waited:
        out.append(f"speedup not compared, {WAITED_WORDS}: {', '.join(d.waited)}")
    if d.only_a:
        out.append(f"only in {d.a}: {', '.join(d.only_a)}")
    if d.only_b:
        out.append(f"only in {d.b}: {', '.join(d.only_b)}")
    return "\n".join(out) + "\n"


def diff_page(d: CensusDiff) -> str:
    def section(title: str, changes, cls: str) -> str:
        items = "".join(
            f"<li><b>{esc(c.key)}</b>: "
            + "; ".join(f'<span class="{cls}">{esc(x)}</span>' for x in c.worse)
            + ("; " if c.worse and c.better else "")
            + "; ".join(f'<span class="fix">{esc(x)}</span>' for x in c.better)
            + "</li>"
            for c in changes
        )
        return f"<h3>{esc(title)} ({len(changes)})</h3><ul>{items or '<li>none</li>'}</ul>"

    only = "".join(
        f"<p>only in {esc(name)}: {esc(', '.join(keys))}</p>"
        for name, keys in ((d.a, d.only_a), (d.b, d.only_b))
        if keys
    )
    title = esc(f"census diff: {d.a} → {d.b}")
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>PT2 Explorer — {title}</title>'
        f'<style>{CSS}.worse{{color:#b00}}.fix{{color:#070}}</style></head><body><div class="pt2x"><h2>{title}</h2>'
        f"{section('regressions', d.regressions, 'worse')}{section('fixes', d.fixes, 'fix')}"
        f"<p>unchanged: {d.unchanged}</p>{only}"
        + (
            f'<p class="noise">speedup not compared, {esc(WAITED_WORDS)}: {esc(", ".join(d.waited))}</p>'
            if d.waited
            else ""
        )
        + "".join(f'<p class="noise">noise: {esc(n.line)}</p>' for n in d.noise)
        + "</div></body></html>"
    )
