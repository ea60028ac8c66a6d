"""torch.export's assumptions and draft_export's failures in the recorded report
(Report.exports), each with its user line; checked against torch's structured trace read
directly and draft_export's own report object."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest
import torch
from _torch_trace import RawTrace, read_log
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

import compiler
from explorer.model._stages import stage_view
from explorer.model._summary import summary_text

HERE = os.path.basename(__file__)


class Branchy(torch.nn.Module):
    def forward(self, x, y):
        n = y.sum().item()
        if n > 2:
            return x + n
        return x - 1


class Ranged(torch.nn.Module):
    def forward(self, x, y):
        if x.shape[0] > 4:
            x = x * 2
        return x[: y.shape[0]] + y


def _line(code: str) -> int:
    """The line of this file holding ``code`` (the user line torch should name)."""
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, ln in enumerate(f, 1) if ln.strip() == code)


def _user_line(records, body) -> tuple[str, int]:
    """torch's own answer: the last frame of the event's stack in a file of this test."""
    # torch logs each file name once per process ("str" records); later runs refer to its table
    strings = {i: name for name, i in torch._logging.structured.INTERN_TABLE.items()}
    strings.update({m["str"][1]: m["str"][0] for m, _ in records if "str" in m})
    frames = body["user_stack"] or body["stack"]
    (f,) = [f for f in frames if strings.get(f["filename"], "").endswith(HERE)][-1:]
    return os.path.basename(strings[f["filename"]]), f["line"]


def _where(records, body) -> str:
    name, line = _user_line(records, body)
    return f"{name}:{line}"


def test_draft_export_failure_has_kind_expression_and_line():
    with compiler.recording() as rec, RawTrace() as raw:
        ep = torch.export.draft_export(Branchy(), (torch.randn(4), torch.tensor([1.0, 2.0])))
    (body,) = [
        m["propagate_real_tensors_provenance"]
        for m, _ in raw.records
        if "propagate_real_tensors_provenance" in m
    ]
    (torch_failure,) = ep._report.failures  # draft_export's own report, from the same events
    assert torch_failure.failure_type.name == "DATA_DEPENDENT_ERROR"
    assert torch_failure.data["expr"] == body["expr"] == "zuf0 > 2.0"
    assert _user_line(raw.records, body) == (HERE, _line("if n > 2:"))

    (run,) = rec.report.exports
    assert (run.number, run.draft, run.compile_id) == (1, True, None)
    (f,) = run.failures
    assert (f.kind, f.expr, f.where, f.code, f.count) == (
        "data-dependent",
        body["expr"],
        f"{HERE}:{_line('if n > 2:')}",
        "if n > 2:",
        1,
    )
    assert f.detail == f"assumed {body['result']} from the real inputs" == "assumed True from the real inputs"
    (unbacked,) = [m["create_unbacked_symbol"] for m, _ in raw.records if "create_unbacked_symbol" in m]
    assert [(a.kind, a.expr, a.where) for a in run.assumptions] == [
        ("unbacked", unbacked["symbol"], f"{HERE}:{_line('n = y.sum().item()')}"),
        ("guard", body["expr"], f"{HERE}:{_line('if n > 2:')}"),
    ]
    assert not [e for e in rec.report.unknown_events if e.name in ("propagate_real_tensors", "guard_added")]
    text = summary_text(rec.report, width=400)
    assert "export #1 (draft_export): 2 assumptions, 1 failure draft_export found" in text
    assert (
        f"failure: data-dependent zuf0 > 2.0 at {HERE}:{_line('if n > 2:')} `if n > 2:`"
        " (assumed True from the real inputs)" in text
    )
    assert compiler.Report.from_dict(rec.report.to_dict()) == rec.report


def test_export_failing_on_a_data_dependent_guard_names_it_in_the_partial_report():
    with pytest.raises(GuardOnDataDependentSymNode) as failed, compiler.recording() as rec:
        torch.export.export(Branchy(), (torch.randn(4), torch.tensor([1.0, 2.0])))
    (run,) = rec.report.exports
    (f,) = run.failures
    assert (f.kind, f.expr, f.where, f.code) == (
        "data-dependent error",
        str(failed.value.cond),  # torch's own expression
        f"{HERE}:{_line('if n > 2:')}",
        "if n > 2:",
    )
    assert f.expr == "zuf0 > 2.0" and rec.report.error.startswith("GuardOnDataDependentSymNode: ")
    assert [(a.kind, a.where) for a in run.assumptions] == [
        ("unbacked", f"{HERE}:{_line('n = y.sum().item()')}")
    ]
    text = summary_text(rec.report, width=400)
    assert "export #1 (torch.export.export): 1 assumption; failed" in text
    assert f"failure: data-dependent error zuf0 > 2.0 at {HERE}:{_line('if n > 2:')} `if n > 2:`" in text


@pytest.mark.aoti
def test_export_with_dim_range_lists_each_assumption_in_the_aoti_capture_stage(tmp_path):
    m = Ranged()
    x, y = torch.randn(8, 3), torch.randn(5, 3)
    shapes = {
        "x": {0: torch.export.Dim.DYNAMIC(min=2, max=64)},
        "y": {0: torch.export.Dim("n", min=2, max=8)},
    }
    with compiler.recording() as rec, RawTrace() as raw:
        ep = torch.export.export(m, (x, y), dynamic_shapes=shapes)
        path = torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path / "r.pt2"))
    x2, y2 = torch.randn(6, 3), torch.randn(3, 3)
    torch.testing.assert_close(torch._inductor.aoti_load_package(path)(x2, y2), m(x2, y2))

    # torch's own: the dims and guards logged before AOTInductor's first graph
    first_aoti = next(i for i, (m_, _) in enumerate(raw.records) if "aot_inference_graph" in m_)
    before = raw.records[:first_aoti]
    syms = [m_["create_symbol"] for m_, _ in before if "create_symbol" in m_]
    guards = [m_["guard_added_fast"] for m_, _ in before if "guard_added_fast" in m_]
    expected = [("dim", s["symbol"], f"{s['source']} in {s['vr']}", _where(before, s)) for s in syms] + [
        ("guard", g["expr"], None, _where(before, g)) for g in guards
    ]
    (run,) = rec.report.exports
    assert (run.draft, run.compile_id, run.failures) == (False, "aoti/0", ())
    assert [(a.kind, a.expr, a.detail, a.where) for a in run.assumptions] == expected
    call = _line("ep = torch.export.export(m, (x, y), dynamic_shapes=shapes)")
    assert [(k, e, w) for k, e, _, w in expected] == [
        ("dim", "s77", f"{HERE}:{call}"),
        ("dim", "s17", f"{HERE}:{call}"),
        ("guard", "s77 > 4", f"{HERE}:{_line('if x.shape[0] > 4:')}"),
        ("guard", "s17 <= s77", f"{HERE}:{_line('return x[: y.shape[0]] + y')}"),
    ]
    assert [e[2] for e in expected[:2]] == ["L['x'].size()[0] in [2, int_oo]", "L['y'].size()[0] in [2, 8]"]

    c = rec.report.compile("aoti/0")
    (table,) = [
        b
        for b in stage_view(rec.report, c, "capture").blocks
        if getattr(b, "title", "").startswith("export #1")
    ]
    assert table.title == "export #1 (torch.export.export): what it assumed about the inputs"
    assert [r[:3] for r in table.rows] == [(k, e, w) for k, e, _, w in expected]
    text = summary_text(rec.report, width=400)
    assert "export #1 (torch.export.export) → [aoti/0]: 4 assumptions" in text
    assert f"assumed: guard s77 > 4 at {HERE}:{_line('if x.shape[0] > 4:')} `if x.shape[0] > 4:`" in text


_CALL = "torch.export.draft_export(Branchy(), (torch.randn(4), torch.tensor([1.0, 2.0])))\n"


def test_torch_trace_of_draft_export_loads_the_same(tmp_path):
    script = tmp_path / "draft_run.py"
    script.write_text("import torch\n\n\n" + inspect.getsource(Branchy) + "\n\n" + _CALL)
    line = script.read_text().splitlines().index("        if n > 2:") + 1
    # draft_export takes TORCH_TRACE's handler off for its run and writes its own structured
    # trace to TORCH_DTRACE's directory (the log `tlparse --export` reads)
    env = {**os.environ, "TORCH_DTRACE": str(tmp_path / "trace")}
    subprocess.run([sys.executable, str(script)], env=env, check=True, capture_output=True)
    (log,) = [tmp_path / "trace" / n for n in os.listdir(tmp_path / "trace")]
    gz = tmp_path / "trace.log.gz"
    import gzip

    gz.write_bytes(gzip.compress(log.read_bytes()))
    records = read_log(str(gz))
    (body,) = [
        m["propagate_real_tensors_provenance"] for m, _ in records if "propagate_real_tensors_provenance" in m
    ]
    strings = {m["str"][1]: m["str"][0] for m, _ in records if "str" in m}
    top = body["user_stack"][-1]
    assert (os.path.basename(strings[top["filename"]]), top["line"]) == ("draft_run.py", line)

    out = tmp_path / "r.json"
    cli = os.path.join(os.path.dirname(sys.executable), "pt2-explorer")
    subprocess.run([cli, "load", str(log), "--json", str(out)], check=True, capture_output=True)
    (run,) = compiler.load(str(out)).exports
    assert run.draft
    assert [(f.kind, f.expr, f.where, f.code) for f in run.failures] == [
        ("data-dependent", body["expr"], f"draft_run.py:{line}", "if n > 2:")
    ]
