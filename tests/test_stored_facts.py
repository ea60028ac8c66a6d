"""Facts the views once read again from torch's text are typed fields of the report, read once
when it is built, and filled in when a report written before them loads (``UPGRADES``): the
CUDA-graph skip reason's first line and the count of sizes torch's warning gives, the extern
calls of Inductor's wrapper code, a recompile's reasons as one line each. Checked against torch's own text in the report, read here
with plain string operations; a report's JSON without the fields loads with the same ones."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import compiler
from tests import _torch_trace as oracle

ROOT = Path(__file__).resolve().parent.parent
CUDAGRAPHS = ROOT / "notebooks" / "data" / "h100-cudagraphs.json.gz"  # a skip, and torch's size warning
GPU_BLOCK = ROOT / "tests" / "fixtures" / "reports" / "h100-torch211-gpu-block.json.gz"


def _written(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def _without(report, drop: dict[str, str]) -> compiler.Report:
    """``report`` loaded again from its JSON form without the fields ``drop`` names (record
    path -> field), as a report written before them is."""
    data = report.to_dict()
    for r in data["recompiles"]:
        r.pop(drop.get("recompiles", ""), None)
        for f in r.get("failures") or []:
            f.pop(drop.get("failures", ""), None)
    for c in data["compiles"]:
        for where, name in drop.items():
            if where == "cudagraphs" and c.get("cudagraphs"):
                c["cudagraphs"].pop(name, None)
            if where == "output_code":
                for o in ((c.get("stages") or {}).get("codegen") or {}).get("output_code") or []:
                    o.pop(name, None)
    return compiler.Report.from_dict(data)


def test_the_cudagraph_reason_and_the_sizes_torch_warned_at():
    written = _written(CUDAGRAPHS)
    assert not any(
        "short_reason" in (c.get("cudagraphs") or {}) for c in written["compiles"]
    )  # written before
    report = compiler.load(CUDAGRAPHS)
    skipped = report.compile("0/0").cudagraphs
    # torch's reason: "skipping cudagraphs due to mutated inputs (1 instances). Found from : ..."
    first = skipped.reason.splitlines()[0]
    assert first.startswith("skipping cudagraphs due to ") and ". Found from" in first
    assert skipped.short_reason == "mutated inputs (1 instances)"
    assert skipped.warned_sizes == ()
    sized = report.compile("3/0").cudagraphs
    (warning,) = sized.warnings
    assert "We have observed 5 distinct sizes." in warning
    assert sized.warned_sizes == (5,) and sized.short_reason is None
    assert _without(report, {"cudagraphs": "short_reason"}).compiles == report.compiles
    assert _without(report, {"cudagraphs": "warned_sizes"}).compiles == report.compiles


def _calls_by_line(code: str) -> list[str]:
    """The extern calls of wrapper code read line by line: the first call of each line that
    is not a comment."""
    out = []
    for line in code.splitlines():
        s = line.strip()
        if s.startswith("#"):
            continue
        at = [i for p in ("extern_kernels.", "torch.ops.aten.") if (i := s.find(p)) >= 0]
        if not at:
            continue
        i = min(at)
        name = s[i:].split("(")[0]
        if "(" in s[i:] and name.replace(".", "").replace("_", "").isalnum():
            out.append(name)
    return out


def test_the_extern_calls_of_each_wrapper():
    written = _written(GPU_BLOCK)
    assert "extern_calls" not in json.dumps(written)  # written before the build read them
    report = compiler.load(GPU_BLOCK)
    outputs = [o for c in report.compiles if c.stages.codegen for o in c.stages.codegen.output_code]
    assert outputs and all(o.extern_calls == tuple(_calls_by_line(o.code)) for o in outputs)
    assert {x for o in outputs for x in o.extern_calls} >= {"extern_kernels.mm"}
    assert _without(report, {"output_code": "extern_calls"}).compiles == report.compiles


def test_the_build_stores_them():
    trace = ROOT / "tests" / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"
    report = compiler.load_trace(trace)
    outputs = [o for c in report.compiles if c.stages.codegen for o in c.stages.codegen.output_code]
    assert outputs and all(o.extern_calls == tuple(_calls_by_line(o.code)) for o in outputs)
    text = report.to_json()
    assert compiler.Report.from_dict(json.loads(text)).compiles == report.compiles


def _one_line(reason: str) -> str:
    """torch's reason as one line, read with string operations: its first line, the blanks
    before its ``#`` comment made two."""
    first = reason.strip().splitlines()[0]
    code, hash_, comment = first.partition("#")
    return (code.rstrip() + "  #" + comment) if hash_ and code.endswith("   ") else first


def test_a_recompiles_short_reasons_against_torchs_own():
    trace = ROOT / "tests" / "fixtures" / "traces" / "cpu-torch213-hf-llama-generate.log.gz"
    torchs = oracle.facts(oracle.read_log(str(trace))).recompiles
    report = compiler.load_trace(trace)
    assert report.recompiles and {r.compile_id for r in report.recompiles} == set(torchs)
    for r in report.recompiles:
        assert r.short_reasons == tuple(_one_line(x) for x in torchs[r.compile_id] if x.strip())
        for f in r.failures:  # each entry tried: its reason's first line without "0/0: "
            entry, _, rest = f.reason.strip().splitlines()[0].partition(": ")
            assert f.short_reason == rest and entry == f.entry.rpartition(":")[2] if f.entry else True
    assert _without(report, {"recompiles": "short_reasons"}) == report
    assert _without(report, {"failures": "short_reason"}) == report
