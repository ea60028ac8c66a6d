"""One number per fact: each fact of a report said with one figure on every surface (the
summary, each text view, the static page), and where a second true figure is said beside it,
words saying what that one counts. ``check(report)`` asserts it for every compile:

- a compile's time: the summary's row, the compiles view, the compile-time view's heading;
- its guards: torch's count wherever a count of guards is said (capture, bytecode, the page),
  the guard tree's checks said as what they are ("checked by N nodes of the guard tree");
- its stage times: said as a part of the compile's time, not as another total;
- its kernels' nodes: the codegen table's "nodes fused", the fuse view's list, the model;
- its cache savings: AOTAutograd's hit holds the FX graph's, never two savings to add;
- its CUDA graphs' sizes: the sizes recorded, torch's own count said as what it counted.
"""

from __future__ import annotations

import html
import re

import explorer
from explorer.base._words import secs


def check(report, page: str | None = None) -> int:
    """Assert one number per fact on ``report`` (and its static ``page``); the facts checked."""
    summary = explorer.text(report, "summary")
    timed = explorer.text(report, "time")
    bytecode = explorer.text(report, "bytecode")
    counts = {c.stages.capture.guard_count for c in report.compiles if c.stages.capture}
    for n in map(int, re.findall(r"\((\d+) guards torch counted\)", bytecode)):
        assert n in counts, n
    assert not re.search(r"^ *guards checked before it runs \(\d+\)", bytecode, re.M)  # no bare count
    facts = 0
    # the page's words, tags left out: each compile's time, wherever a tab says it by its id
    # (the compile-time tab's heading, the compiles tab's "compile time" row), is the model's
    said_on_page: dict[str, set[str]] = {}
    if page is not None:
        words = html.unescape(re.sub(r"<[^>]+>", " ", page))
        for pattern in (
            r"\[(\d+/\d+)\] [^\[\]]*? — compile time (\d[\d.]* m?s)\b",
            r"\[(\d+/\d+)\] [^\[\]]*? — \w+\s+compile\s+compile time\s+(\d[\d.]* m?s)\b",
        ):
            for cid, t in re.findall(pattern, words):
                said_on_page.setdefault(cid, set()).add(t)
    for c in report.compiles:
        if c.compile_time_s is not None and c.id in said_on_page:
            assert said_on_page[c.id] == {secs(c.compile_time_s)}, (c.id, said_on_page[c.id])
            facts += 1
    for c in report.compiles:
        own = explorer.text(report, "compiles", compile=c.id)
        if c.compile_time_s is not None:
            t = secs(c.compile_time_s)
            row = next(ln for ln in summary.splitlines() if ln.startswith(f"[{c.id}] "))
            assert f" {t} " in f"{row} ", (row, t)
            assert re.search(rf"^compile time +{re.escape(t)}$", own, re.M), (c.id, t)
            if c.phases:
                assert re.search(rf"^\[{re.escape(c.id)}\] .* — compile time {re.escape(t)}\b", timed, re.M)
            stages = re.search(r"^stage times +(.*)$", own, re.M)
            if stages and stages[1] != "-":
                assert stages[1].endswith(f" in these stages of the compile's {t})"), stages[1]
            facts += 1
        cap = c.stages.capture
        if cap is not None and cap.guards:
            text = explorer.text(report, "capture", compile=c.id)
            said = set(map(int, re.findall(r"(\d+) guards\b", text)))
            if cap.guard_count:
                assert said == {cap.guard_count}, (c.id, said, cap.guard_count)
                if page is not None:
                    assert f"{cap.guard_count} guards torch counted" in page
            assert not re.search(r"\d+ checks in the guard tree", text)
            facts += 1
        kernels = report.kernels_of(c.id)
        if kernels:
            codegen = explorer.text(report, "codegen", compile=c.id)
            fuse = explorer.text(report, "fuse", compile=c.id)
            for k in kernels:
                row = next(ln for ln in codegen.splitlines() if re.match(rf"{k.role} +{k.name} ", ln))
                cell = re.match(rf"{k.role} +{k.name} +\w+ +\d+ +(.*)", row)[1]
                if k.nodes:
                    assert cell.split()[0] == str(len(k.nodes)), (row, len(k.nodes))
                    listed = re.search(rf"^{k.role} +{k.name} +(.*?) +#[0-9a-f]{{6}}$", fuse, re.M)
                    assert listed and len(listed[1].split(", ")) == len(k.nodes), (k.name, listed)
                else:
                    assert cell.startswith(("torch maps none", "no provenance")), row
            facts += 1
        for line in (ln for ln in summary.splitlines() + own.splitlines() if "saved " in ln):
            savings = re.findall(r"saved \d[\d.]* m?s(?P<said>, [^)]*)?\)", line)
            if len(savings) > 1:  # two savings of one compile: each says how they nest
                assert all(savings), line
                facts += 1
        cg = c.cudagraphs
        if cg is not None:
            sizes = sum(1 for r in cg.runs if r.kind == "new size")
            if sizes > 1:
                assert any(f"[{c.id}] " in ln and f"{sizes} sizes" in ln for ln in summary.splitlines())
            for w in cg.warnings:
                m = re.search(r"observed (\d+) distinct sizes", w)
                if m and int(m[1]) != sizes:
                    assert f"torch said this at its {m[1]}th size; {sizes} sizes were recorded in all" in own
                    facts += 1
    return facts
