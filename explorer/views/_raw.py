"""The events torch logged that no stage maps (``Report.unknown_events``), each as torch wrote
it: its name, its compile, its metadata and its payload. The summary counts them by name;
this view shows them whole (text, and the static page's tab with each payload collapsed)."""

from __future__ import annotations

import json

from compiler import Report
from compiler.types import RawEvent

from ..lower._html import esc


def _meta(e: RawEvent) -> str:
    return json.dumps(e.metadata, default=str, ensure_ascii=False) if e.metadata else ""


def _head(e: RawEvent) -> str:
    return f"[{e.compile_id}] {e.name}" if e.compile_id else e.name


def raw_text(report: Report) -> str:
    if not report.unknown_events:
        return "No unmapped events: every event torch logged is in a stage.\n"
    out = []
    for e in report.unknown_events:
        out.append(_head(e))
        if e.metadata:
            out.append(f"  metadata: {_meta(e)}")
        if e.payload:
            out += [f"    {ln}".rstrip() for ln in e.payload.rstrip("\n").splitlines()]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def raw_html(report: Report) -> str:
    parts = ['<div class="note">Events torch logged that no stage maps, as torch wrote them.</div>']
    for e in report.unknown_events:
        meta = f'<div class="meta">{esc(_meta(e))}</div>' if e.metadata else ""
        payload = (
            f"<details><summary>payload ({e.payload.count(chr(10)) + 1} lines)</summary><pre>{esc(e.payload)}</pre></details>"
            if e.payload
            else ""
        )
        parts.append(f"<h3>{esc(_head(e))}</h3>{meta}{payload}")
    return "".join(parts)
