"""Every second of a compile placed (issue 53, item 2): on real Hugging Face models compiled
by Inductor, each compile's heads add up to its wall time as torch's compilation_metrics
state it, and what no head holds (the unplaced rest) is what torch's own chromium events
leave uncovered, at most 5% of the compile; the heads are the same number in the summary,
the view's text and its page."""

from __future__ import annotations

import json
import os
from collections import defaultdict

import _torch_trace as tt
import hf_corpus
import pytest
import torch

import compiler
import explorer
from compiler._viewer import HEADS
from compiler.analysis import compile_time, program_time
from compiler.assemble._compiletime import phase_head

pytestmark = [pytest.mark.slow, pytest.mark.corpus]


def _spans(records) -> dict[str, list[tuple[str, float, float]]]:
    """compile id -> (name, begin µs, end µs) of each chromium event pair torch logged."""
    open_: dict[tuple[str, str], list[float]] = defaultdict(list)
    out: dict[str, list[tuple[str, float, float]]] = defaultdict(list)
    for meta, payload in records:
        if "chromium_event" not in meta:
            continue
        ev = json.loads(payload)
        cid = (ev.get("args") or {}).get("compile_id")
        if cid is None:
            continue
        if ev["ph"] == "B":
            open_[(cid, ev["name"])].append(ev["ts"])
        elif ev["ph"] == "E" and open_[(cid, ev["name"])]:
            out[cid].append((ev["name"], open_[(cid, ev["name"])].pop(), ev["ts"]))
    return out


def _metrics(records) -> tuple[dict[str, dict], dict[str, list[dict]]]:
    """compile id -> torch's compilation_metrics of the frame, and of each backward compiled
    for it (bwd_compilation_metrics, at the first .backward())."""
    frames: dict[str, dict] = {}
    backwards: dict[str, list[dict]] = defaultdict(list)
    for meta, _ in records:
        cid = f"{meta.get('frame_id')}/{meta.get('frame_compile_id')}"
        if "compilation_metrics" in meta:
            frames[cid] = meta["compilation_metrics"]
        elif "bwd_compilation_metrics" in meta:
            backwards[cid].append(meta["bwd_compilation_metrics"])
    return frames, backwards


def _union(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, None
    for s, e in sorted(spans):
        if end is None or s > end:
            total, end = total + e - s, e
        elif e > end:
            total, end = total + e - end, e
    return total / 1e6


def _inside(spans, walls):
    """The parts of spans that lie inside the wall spans."""
    return [(max(s, a), min(e, b)) for s, e in spans for a, b in walls if min(e, b) > max(s, a)]


# T5's training step compiles for minutes on 2 CPUs (409 s loaded): checked outside the suite
# with `python -c` over tests/hf_corpus.t5_train (unplaced 0.04%); PT2X_T5=1 adds it here
@pytest.mark.parametrize(
    "name", ["gpt2_train", "bert_two_lengths"] + (["t5_train"] if os.environ.get("PT2X_T5") else [])
)
def test_every_second_placed(name):
    torch._dynamo.reset()
    with tt.RawTrace() as raw, compiler.recording() as rec:
        hf_corpus.SCENARIOS[name]("inductor")
    check_placed(rec.report, raw.records)


def check_placed(report, records) -> None:
    """Each compile's heads against torch's own compilation_metrics and chromium events."""
    spans, (frames, backwards) = _spans(records), _metrics(records)
    timed = [c for c in report.compiles if c.phases]
    assert timed and {c.id for c in timed} == {c.id for c in report.compiles if c.id in spans}
    for c in timed:
        t = compile_time(c)
        frame = frames[c.id]
        backward = [m["inductor_compile_time_s"] for m in backwards[c.id] if m.get("inductor_compile_time_s")]
        # the wall is torch's: the frame's compile and its backward's Inductor compile
        assert t.wall_s == pytest.approx(frame["entire_frame_compile_time_s"] + sum(backward), abs=2e-3), c.id
        assert list(t.heads) == list(HEADS)
        assert sum(t.heads.values()) == pytest.approx(t.wall_s, abs=1e-3), c.id
        # torch's chromium events: the time inside the wall that no headed phase covers
        mine = spans[c.id]
        walls = [(s, e) for n, s, e in mine if n == "entire_frame_compile"]
        bwd = [(s, e) for n, s, e in mine if n == "entire_backward_compile"]
        walls += [
            (s, e) for n, s, e in mine if n == "inductor_compile" and any(a <= s and e <= b for a, b in bwd)
        ]
        assert _union(walls) == pytest.approx(t.wall_s, abs=2e-3)
        headed = _inside([(s, e) for n, s, e in mine if phase_head(n) is not None], walls)
        unplaced = _union(walls) - _union(headed)
        assert t.heads["unplaced"] == pytest.approx(unplaced, abs=2e-3), c.id
        # at most 5% of the compile; a compile under a second may leave 50 ms: Dynamo's own
        # bookkeeping between its timed phases (the frame's set-up, the guards' install, the
        # trace's logging) measured 2-26 ms a compile on a loaded 2-core machine
        assert t.heads["unplaced"] <= max(0.05 * t.wall_s, 0.05), (c.id, t.heads["unplaced"], t.wall_s)
        # heads torch times itself: waiting on the workers, and Inductor's pass groups
        waits = [(s, e) for n, s, e in mine if n == "async_compile.wait"]
        assert t.heads["workers"] == pytest.approx(_union(_inside(waits, walls)), abs=2e-3)
        if "joint_graph_pass_time_us" in frame:
            torch_passes = sum(
                (frame.get(k) or 0) / 1e6
                for k in ("pre_grad_pass_time_us", "joint_graph_pass_time_us", "post_grad_pass_time_us")
            )
            assert t.heads["passes"] >= torch_passes - 2e-3, (c.id, t.heads["passes"], torch_passes)
    # one number per head in every form
    program = program_time(report)
    assert program.wall_s == pytest.approx(sum(compile_time(c).wall_s for c in timed), abs=1e-5)
    summary = explorer.text(report, "summary")
    view = explorer.text(report, "heads")
    page = explorer.html(report)
    for key, seconds in program.heads.items():
        if seconds > 0 or key == "unplaced":
            cell = f"{HEADS[key]} {seconds:.3f} s"
            assert cell in summary, cell
            assert f"{seconds:.3f} s" in view and f"{seconds:.3f} s" in page
    assert len(program.top) == min(10, sum(len(compile_time(c).rows) for c in timed))
    assert [x.seconds for x in program.top] == sorted((x.seconds for x in program.top), reverse=True)
