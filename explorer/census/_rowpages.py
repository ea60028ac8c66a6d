"""A census's row pages: each row's report as its own page beside the census page
(``<page stem>.reports/<case>.html``), the page ``pt2-explorer report R --html`` writes for that
report, which the row links to. Written only where asked (``census show --html OUT --pages``):
a census of hundreds of reports makes a page of ~13 MB each; without ``--pages`` one line says
how many there would be and how large, and ``pt2-explorer report R --html`` makes one alone."""

from __future__ import annotations

import os
from collections.abc import Callable

from ._table import Census, CensusRow

# a row page is its report's page: the page's own parts (styles, scripts, the graph component:
# about PAGE_BYTES) and about PAGE_PER_JSON_BYTE bytes of page for each byte of the report's
# JSON (measured on the shipped H100 census: alexnet's 0.6 MB of JSON a 6.3 MB page, t5's 8.2 MB
# a 20.7 MB page; the estimate says "about")
PAGE_BYTES = 6_000_000
PAGE_PER_JSON_BYTE = 2


def row_reports(census: Census) -> tuple[list[tuple[CensusRow, str]], list[str]]:
    """The rows whose report is there to read: (row, path); and a note for each row whose
    report is named but missing or reached through a link."""
    found, notes = [], []
    for r in census.rows:
        src = census.report_path(r)
        if src is None:
            if r.report is not None:
                notes.append(f"{r.key}: its report {r.report} is missing or reached through a link")
            continue
        found.append((r, src))
    return found, notes


def estimated_bytes(reports: list[tuple[CensusRow, str]]) -> int:
    """About how many bytes the row pages of ``reports`` take (``PAGE_BYTES`` each, and their
    JSON's size, unpacked where gzipped, times ``PAGE_PER_JSON_BYTE``)."""
    total = 0
    for _r, src in reports:
        try:
            if src.endswith(".gz"):
                with open(src, "rb") as f:
                    f.seek(-4, os.SEEK_END)  # gzip's trailer: the unpacked size, mod 2**32
                    total += int.from_bytes(f.read(4), "little")
            else:
                total += os.path.getsize(src)
        except OSError:
            continue
    return len(reports) * PAGE_BYTES + total * PAGE_PER_JSON_BYTE


def megabytes(n: float) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 10e6 else f"{n / 1e6:.1f} MB"


def write_row_pages(
    census: Census, path: str, reports: list[tuple[CensusRow, str]], show: Callable[..., None]
) -> tuple[dict[str, str], list[str], list[str]]:
    """Each of ``reports`` as its page beside ``path``; ``show``: a progress line (n of N, the
    megabytes written). Returns the row links (row key -> page, relative to ``path``), the pages
    written and a note for each report not read."""
    from compiler import load
    from compiler._viewer import write_file

    from ..pages._page import report_html

    stem = os.path.splitext(os.path.basename(path))[0] + ".reports"
    links: dict[str, str] = {}
    written: list[str] = []
    notes: list[str] = []
    size = 0
    for n, (r, src) in enumerate(reports, 1):
        show(f"census page: row page {n} of {len(reports)} ({megabytes(size)} written)")
        try:
            rep = load(src)
        except (ValueError, OSError) as e:
            notes.append(
                f"{r.key}: its report is not read: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            )
            continue
        name = os.path.basename(src).split(".json")[0] + ".html"
        page = os.path.join(os.path.dirname(os.path.abspath(path)), stem, name)
        os.makedirs(os.path.dirname(page), exist_ok=True)
        written.append(write_file(page, report_html(rep, title=f"{r.model} ({r.mode})")))
        size += os.path.getsize(page)
        links[r.key] = f"{stem}/{name}"
    return links, written, notes
