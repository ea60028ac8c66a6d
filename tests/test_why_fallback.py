"""An eager fallback says why torch gave up on its frames. A backend that fails on a frame
with an exception torch lets fall back (here Inductor meeting a backward that reads a tensor's
value, ``aten._local_scalar_dense``, as a grouped GEMM's backward reads its offsets) makes
Dynamo warn "WON'T CONVERT <function> <file> line N" with the frame's traceback, then log the
GB0219 break of the same compile: the report has the break once, and the fallback names the
backend's exception and the GB id. The facts are checked against torch's own structured trace
(tests/_torch_trace.py), and the census file written before the warning was folded reads
without it."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest
import torch

import compiler
from compiler.analysis import verdict
from explorer.census._table import load_census
from tests._torch_trace import REGISTRY, RawTrace, facts
from tests._verdicts import cause

DATA = Path(__file__).parent.parent / "notebooks" / "data"


@torch.library.custom_op("pt2x_tests::scaled", mutates_args=())
def scaled(x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    return x * n


@scaled.register_fake
def _(x, n):
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    ctx.n = inputs[1]


def _backward(ctx, grad):
    return grad * int(ctx.n.sum().item()), None  # the backward reads a value of a tensor


scaled.register_autograd(_backward, setup_context=_setup)


def step(x, n):
    return scaled(x.sin(), n).sum()


STEP_LINE = step.__code__.co_firstlineno


@pytest.mark.slow
def test_a_backend_that_fails_names_its_exception_and_gb_id():
    torch._dynamo.reset()
    x, n = torch.randn(64, 64, requires_grad=True), torch.tensor([2])
    compiled = torch.compile(step)
    with RawTrace() as raw, compiler.recording() as rec:
        compiled(x, n).backward()
    r, f = rec.report, facts(raw.records)
    (failed,) = [c for c in r.compiles if c.status == "failed"]
    # torch's record: the warning on the frame, with the backend's exception, and the GB0219
    # break, both of the failed compile
    name, file, line, exc = f.frame_warnings[failed.id]
    assert (name, os.path.basename(file), line) == ("step", "test_why_fallback.py", STEP_LINE)
    kind, op = exc.split(": ", 1)
    assert (kind.rpartition(".")[2], op) == (
        "DataDependentOutputException",
        "aten._local_scalar_dense.default",
    )
    assert {gb for site, ids in f.break_sites.items() if failed.id in ids for gb in f.break_gb[site]} == {
        "GB0219"
    }
    # the report: one break of that compile, the warning folded into it
    (gb_type,) = {e["Gb_type"] for e in REGISTRY["GB0219"]}
    assert [(b.type, b.gb_id, b.compile_ids) for b in r.graph_breaks] == [(gb_type, "GB0219", (failed.id,))]
    assert failed.failed_stage == "autograd"

    def eager():
        step(x, n).backward()

    def compiled_step():
        compiled(x, n).backward()

    b = compiler.benchmark(r, eager, compiled=compiled_step, reps=3, warmup=1, progress=False, mutates=True)
    v = verdict(r, b)
    fb = cause(v, "fallback")
    assert v.main == "fallback"
    assert fb.title == f"eager fallback: the backend failed ({op}, GB0219) in step"
    assert v.headline.startswith(f"{b.speedup_words}: {fb.title}: ")
    assert fb.evidence[-1] == (
        f"step (test_why_fallback.py:{STEP_LINE}): [{failed.id}] failed in autograd: the backend failed "
        f"({op}, GB0219): every call of it runs eagerly"
    )
    # no setting is the fix of a backend's failure: torch's registry's hint is the advice
    assert (fb.fix, fb.advice) == (None, REGISTRY["GB0219"][0]["Hints"][0])


MOE = ("mixtral", "qwen2_moe", "olmoe")


def test_the_census_written_before_reads_the_warnings_folded():
    """The shipped H100 census kept each warning as a break site of its own (no GB id, the
    machine's absolute path in its type); read, the GB0219 breaks of the same compiles hold them."""
    path = DATA / "census-h100-speed.json"
    raw = {(r["model"], r["mode"], r.get("precision")): r for r in json.loads(path.read_text())["rows"]}
    rows = {(r.model, r.mode, r.precision): r for r in load_census(path).rows}
    for model in MOE:
        key = (model, "train", "amp")
        warned = [b for b in raw[key]["breaks"] if b["type"].startswith("WON'T CONVERT ")]
        assert warned and all(b["gb_id"] is None and b["line"] is None for b in warned)
        assert all(re.match(r"WON'T CONVERT \S+ /\S+ line \d+$", b["type"]) for b in warned)
        row = rows[key]
        assert not [b for b in row.breaks if "WON'T CONVERT" in b.type]
        # each warned compile has its GB0219 break: a site a compile, its frame's own line
        told = {c for b in row.breaks if b.gb_id == "GB0219" for c in b.compiles}
        assert {c for b in warned for c in b["compiles"]} == told
        assert len(row.breaks) == len(raw[key]["breaks"]) - len(warned)
    assert not [b for r in rows.values() for b in r.breaks if "WON'T CONVERT" in b.type]


def test_a_warning_with_no_break_of_its_compile_stays_one_type_at_its_frame(tmp_path):
    """The kept mixtral row with the GB0219 break of compile 0/0 taken out (a log whose break
    record was lost): the warning on that frame is then the only word on it, kept as one type
    at the frame's own file and first line; the warnings of the other compiles still fold."""
    path = DATA / "census-h100-speed" / "mixtral.train.amp.json.gz"
    data = json.loads(gzip.decompress(path.read_bytes()))
    strings = data["strings"]

    def text(v):
        return strings[v["$s"]] if isinstance(v, dict) else v

    gb0219 = [b for b in data["graph_breaks"] if b.get("gb_id") and b["compile_ids"] == ["0/0"]]
    assert len(gb0219) == 1
    data["graph_breaks"] = [b for b in data["graph_breaks"] if b not in gb0219]
    warned = [b for b in data["graph_breaks"] if text(b["type"]).startswith("WON'T CONVERT ")]
    (frame,) = [f for f in data["frames"] if f["id"] == 0]
    (tmp_path / "r.json.gz").write_bytes(gzip.compress(json.dumps(data).encode()))
    r = compiler.load(tmp_path / "r.json.gz")
    alone = [b for b in r.graph_breaks if b.gb_id is None]
    assert [(b.type, b.filename, b.line, b.compile_ids) for b in alone] == [
        ("WON'T CONVERT", text(frame["filename"]), frame["line"], ("0/0",))
    ]
    assert len(r.graph_breaks) == len(data["graph_breaks"]) - len(warned) + 1
