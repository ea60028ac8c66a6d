"""Where compile time goes: each compile's phases placed in time are torch's own chromium
events (read directly from its structured trace), a cold compile and a warm one (cache
hits) of the same function side by side; text, CLI, plotly chart and static page."""

from __future__ import annotations

import json
import os
import re
import time

import pytest
import torch
from _torch_trace import RawTrace

import compiler
import explorer
from explorer import cli
from explorer.views._time import cold_warm_pairs, shown_phases

# a constant baked into the graph: this run's FX-graph cache key is new, so the first
# compile is cold even where an earlier run left its cache behind
SCALE = os.getpid() + time.time() % 1


def scaled(x):
    return x.sin() * SCALE


def _torch_spans(records) -> list[list[tuple[str, float]]]:
    """Per compile, in order: torch's (phase, seconds) from its B/E chromium events, the
    compile told apart by torch's compile id and by entire_frame_compile beginning again."""
    compiles: list[list[tuple[str, float]]] = []
    open_: dict[str, list[float]] = {}
    for meta, payload in records:
        if "chromium_event" not in meta:
            continue
        ev = json.loads(payload)
        cid = (ev.get("args") or {}).get("compile_id")
        if cid is None and meta.get("frame_id") is not None:
            cid = f"{meta['frame_id']}/{meta['frame_compile_id']}"
        if cid != "0/0" or ev["ph"] not in ("B", "E"):
            continue
        if ev["ph"] == "B":
            if ev["name"] == "entire_frame_compile":  # a frame's compile begins
                compiles.append([])
            open_.setdefault(ev["name"], []).append(ev["ts"])
        elif open_.get(ev["name"]):  # torch's "dynamo" phase names the compile at its end only
            compiles[-1].append((ev["name"], (ev["ts"] - open_[ev["name"]].pop()) / 1e6))
    return compiles


@pytest.fixture(scope="module")
def cold_warm(tmp_path_factory):
    torch._dynamo.reset()
    with compiler.recording(caches=True) as rec, RawTrace() as raw:
        torch.compile(scaled)(torch.ones(8))
        torch._dynamo.reset()
        out = torch.compile(scaled)(torch.ones(8))
    torch.testing.assert_close(out, scaled(torch.ones(8)))
    path = tmp_path_factory.mktemp("time") / "r.json"
    rec.report.to_json(str(path))
    return rec.report, raw.records, path


def test_phases_are_torchs_chromium_events(cold_warm):
    report, records, _ = cold_warm
    torch_compiles = _torch_spans(records)
    assert [c.id for c in report.compiles] == ["0/0", "1:0/0"] and len(torch_compiles) == 2
    for c, spans in zip(report.compiles, torch_compiles, strict=True):
        ours = sorted((p.name, round(p.duration_s, 6)) for p in c.phases if p.name != "dynamo")
        # torch's outermost "dynamo" phase begins before the compile has an id: of two
        # handlers, only one receives its begin event; the rest are the same events
        assert ours == sorted((n, round(d, 6)) for n, d in spans if n != "dynamo")
        first = c.phases[0]  # torch's outermost phase
        assert first.name in ("dynamo", "entire_frame_compile") and (first.start_s, first.depth) == (0.0, 0)
        assert all(p.depth >= 1 for p in c.phases[1:] if p.start_s < first.duration_s)
    cold, warm = report.compiles
    assert cold.cache["fx_graph"] == "miss" and warm.cache["fx_graph"] == "hit"
    assert cold_warm_pairs(report) == [(cold, warm)]
    names = {p.name for p in cold.phases}
    assert {
        "bytecode_tracing",
        "GraphLowering.run",
        "Scheduler.codegen",
    } <= names  # the C++ build may hit its cache
    assert "Scheduler.codegen" not in {p.name for p in warm.phases}  # the cache hit skips codegen


def test_time_text_cli_chart_and_page(cold_warm, tmp_path, capsys):
    report, _, path = cold_warm
    text = explorer.text(report, "time")
    # one figure per compile: the compiles view's compile time heads its waterfall
    said = re.search(r"compile time +(\S+ m?s)\n", explorer.text(report, "compiles", compile="0/0"))[1]
    assert text.startswith(f"[0/0] scaled — compile time {said}")
    assert "  tracing the bytecode (bytecode_tracing)\n" in text  # a phase in words, torch's name beside
    assert "cold (cache aotautograd miss, fx_graph miss)" in text.splitlines()[0]
    assert "cold [0/0] vs warm [1:0/0]: scaled" in text
    assert cli.main(["report", str(path), "--view", "time"]) == 0
    assert capsys.readouterr().out == explorer.text(compiler.load(str(path)), "time")
    page = explorer.html(report)
    assert 'id="tab-time"' in page and "cold [0/0] vs warm [1:0/0]" in page
    assert page.count('class="pt2x-ph"') == len(shown_phases(report.compiles[0])) + len(
        shown_phases(report.compiles[1])
    )
    pytest.importorskip("plotly")
    fig = explorer.time_figure(report)
    assert len(fig.data[0].y) == len(shown_phases(report.compiles[0])) + len(shown_phases(report.compiles[1]))
