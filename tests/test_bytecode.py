"""The code Dynamo ran instead of the user's: the recording's bytecode listings checked against
``dis`` of the code objects torch handed its bytecode hook (a hook of the test's own, beside
the recording's), every resume function of the graph-break cases shown with its resume line,
depyf's Python where it is installed, and what torch's own logs hold (resume functions only,
torch >= 2.12). Run it on every supported torch (2.13 in CI, 2.14.1, 2.11 on the GPU machine)."""

from __future__ import annotations

import dataclasses
import dis
import logging
import os
import re
import textwrap

import pytest
import torch

import compiler
import compiler._viewer
import explorer
from compiler.analysis import bytecode_steps
from compiler.listen import _capture
from explorer import text
from tests._torch_trace import read_log

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "traces")

SOURCE = textwrap.dedent(
    """
    import torch

    def f(x):
        y = x.sin()
        print("between graphs")  # BREAK call
        y = y * 2
        if y.sum() > 0:  # BREAK branch
            y = y + 1
        return y.cos()
    """
)


def _line(marker: str) -> int:
    return next(i for i, ln in enumerate(SOURCE.splitlines(), 1) if marker in ln)


@pytest.fixture(autouse=True)
def _reset():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def fn(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(SOURCE)
    scope: dict = {"__name__": "prog"}
    exec(compile(SOURCE, str(path), "exec"), scope)
    return scope["f"], str(path)


def _record(fn):
    """Record ``fn`` (eager backend) with the test's own bytecode hook registered beside the
    recording's: what torch handed the hooks, keyed by compile id."""
    handed: dict[str, tuple] = {}

    def oracle(code, new_code):
        handed[str(torch._guards.CompileContext.current_compile_id())] = (code, new_code)

    handle = torch._dynamo.convert_frame.register_bytecode_hook(oracle)
    try:
        with compiler.recording() as rec:
            torch.compile(fn, backend="eager")(torch.ones(4))
        hooks_after = [h.__name__ for h in torch._dynamo.convert_frame._bytecode_hooks.values()]
    finally:
        handle.remove()
    return rec.report, handed, hooks_after


def test_listings_are_dis_of_the_codes_torch_handed_the_hook(fn):
    report, handed, hooks_after = _record(fn[0])
    assert hooks_after == ["oracle"]  # the recording's own hook is gone, the test's stays
    assert [c.id for c in report.compiles] == ["0/0", "1/0", "2/0"] == sorted(handed)
    for c in report.compiles:
        code, new_code = handed[c.id]
        cap = c.stages.capture
        assert c.name == code.co_name
        assert cap.bytecode_original == dis.Bytecode(code).dis()
        assert cap.bytecode_modified == dis.Bytecode(new_code).dis()


def test_every_resume_function_is_shown_with_its_resume_line(fn):
    f, path = fn
    report, handed, _ = _record(f)
    call, branch = _line("# BREAK call"), _line("# BREAK branch")
    names = [handed[cid][0].co_name for cid in ("0/0", "1/0", "2/0")]
    assert names == ["f", f"torch_dynamo_resume_in_f_at_{call}", f"torch_dynamo_resume_in_f_at_{branch}"]

    # what runs in each frame's place: the graph, the break's instruction in Python, the resume
    steps = {c.id: bytecode_steps(c.stages.capture.bytecode_modified) for c in report.compiles}
    assert [(s.kind, s.line) for s in steps["0/0"]] == [("graph", 4), ("python", call), ("resume", call)]
    assert steps["0/0"][1].name == "CALL 1"  # print("between graphs"), run by Python
    assert [(s.kind, s.line) for s in steps["1/0"]] == [
        ("graph", call),
        ("python", branch),
        ("resume", branch),
        ("resume", branch),  # both sides of the branch continue in a resume function
    ]
    assert [s.kind for s in steps["2/0"]] == ["graph"]

    shown = text(report, "bytecode")
    assert f"[1/0] torch_dynamo_resume_in_f_at_{call} ({path}:{call})\n" in shown
    assert f"  resume function: continues f after line {call} ({path}:{call})\n" in shown
    assert f"  resume function: continues f after line {branch} ({path}:{branch})\n" in shown
    resume_at = steps["0/0"][2].name
    assert (
        f"    {f'line {call}':<8} continues in {resume_at}: resume function "
        f"torch_dynamo_resume_in_f_at_{call} (compile 1/0)\n" in shown
    )
    assert f"resume function torch_dynamo_resume_in_f_at_{branch} (compile 2/0)\n" in shown


def test_decompiled_python_where_depyf_manages_it(fn):
    pytest.importorskip("depyf")
    report, handed, _ = _record(fn[0])
    first, _resume1, last = report.compiles
    import depyf

    # the frame's own code, as the user wrote it; what runs instead: the graph, then print, then the resume
    assert first.stages.capture.bytecode_original_source == depyf.decompile(handed["0/0"][0])
    instead = first.stages.capture.bytecode_modified_source
    assert "__builtins_dict___" in instead and "['print']('between graphs')" in instead
    assert f"return {bytecode_steps(first.stages.capture.bytecode_modified)[-1].name}(" in instead
    body = last.stages.capture.bytecode_original_source
    assert body.startswith(f"def torch_dynamo_resume_in_f_at_{_line('# BREAK branch')}(")
    assert "return y.cos()" in body


def test_without_depyf_the_view_says_so(fn, monkeypatch):
    monkeypatch.setattr(_capture, "decompiler", lambda: None)
    report, _handed, _ = _record(fn[0])
    for c in report.compiles:
        assert c.stages.capture.bytecode_original_source is None
        assert c.stages.capture.bytecode_source_note == (
            "depyf is not installed: no Python (pip install 'pt2-explorer[bytecode]')"
        )
    assert text(report, "bytecode").count("depyf is not installed") == 3


@pytest.mark.parametrize(
    ("log", "resumes"),
    [("cpu-torch213-breaks.log.gz", 2), ("cpu-torch271-breaks.log.gz", 0), ("cpu-torch260-breaks.log.gz", 0)],
)
def test_what_torchs_logs_hold(log, resumes):
    """torch >= 2.12 logs the listings of resume functions only (2.13's log: 1/0 and its recompile
    1/1); older torch none."""
    path = os.path.join(FIXTURES, log)
    artifacts = {}
    for meta, payload in read_log(path):
        name = (meta.get("artifact") or {}).get("name", "")
        if name.endswith(("_ORIGINAL_BYTECODE", "_MODIFIED_BYTECODE")):
            artifacts[(f"{meta['frame_id']}/{meta['frame_compile_id']}", name.rsplit("_", 2)[1])] = payload
    assert len(artifacts) == 2 * resumes
    report = compiler.load_trace(path)
    with_listing = {
        c.id: c.stages.capture
        for c in report.compiles
        if c.stages.capture and c.stages.capture.bytecode_original
    }
    assert {(cid, kind) for cid in with_listing for kind in ("ORIGINAL", "MODIFIED")} == set(artifacts)
    for cid, cap in with_listing.items():
        assert (cap.bytecode_original, cap.bytecode_modified) == (
            artifacts[cid, "ORIGINAL"],
            artifacts[cid, "MODIFIED"],
        )
    shown = text(report, "bytecode")
    if resumes:
        assert "no Python: torch's log holds the listings only" in shown
        assert "resume function: continues f after line 15" in shown  # make_cpu_trace.py's break
    else:
        assert shown.startswith("No bytecode recorded")


def test_steps_read_python_313_listings():
    """Python 3.13 prints labels and, by default, no offsets: the only number is the line."""
    listing = textwrap.dedent(
        """\
          3           RESUME                   0
                      LOAD_GLOBAL              1 (__compiled_fn_1_abc + NULL)
                      LOAD_FAST                0 (x)
                      CALL                     1
          5           LOAD_GLOBAL              3 (print + NULL)
                      CALL                     1
                      LOAD_GLOBAL              5 (__resume_at_30_2 + NULL)
                      CALL_FUNCTION_EX         0
                      RETURN_VALUE
          --   L1:    RETURN_CONST             0 (None)
        """
    )
    assert [(s.kind, s.name, s.line) for s in bytecode_steps(listing)] == [
        ("graph", "__compiled_fn_1_abc", 3),
        ("python", "CALL 1", 5),  # print's load is a global's: not listed as a step
        ("resume", "__resume_at_30_2", 5),
    ]


def test_the_steps_table_is_capped_and_says_how_many_were_left_out(tmp_path):
    """A listing that calls 250 graphs: the text and the page show the first STEP_ROWS (200)
    steps and say how many of all were left out (a 15 MB report made a 178 MB page)."""
    report = compiler.load_trace(os.path.join(FIXTURES, "cpu-torch213-breaks.log.gz"))
    listing = "\n".join(
        f"  3 {2 * i:>11} LOAD_GLOBAL              1 (NULL + __compiled_fn_{i})" for i in range(250)
    )
    c = report.compiles[1]
    capture = dataclasses.replace(c.stages.capture, bytecode_modified=listing)
    c = dataclasses.replace(c, stages=dataclasses.replace(c.stages, capture=capture))
    report = dataclasses.replace(report, compiles=[c])
    head = "what runs instead (first 200 of 250 steps, 50 left out: the transformed bytecode has them all)"
    shown = text(report, "bytecode").splitlines()
    at = shown.index(f"  {head}:")
    assert shown[at + 1 : at + 202] == [
        *(f"    line 3   calls the compiled graph __compiled_fn_{i}" for i in range(200)),
        "  guards checked before it runs (8 guards torch counted) (first 8 of 15 lines: --view capture)",
    ]
    explorer.save_html(report, tmp_path / "page.html")
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    table = page[page.index(f"<th>{head}</th>") :].split("</table>")[0]
    assert table.count("<tr><td>line 3</td>") == 200
    assert "__compiled_fn_199<" in table and "__compiled_fn_200" not in table


def test_a_journal_replays_the_bytecode_events(fn, tmp_path):
    """The hook's facts are events like torch's: a recording's journal rebuilds them."""
    journal = tmp_path / "run.journal"
    with compiler.recording(journal=journal) as rec:
        torch.compile(fn[0], backend="eager")(torch.ones(4))
    replayed = compiler._viewer.load_journal(journal)
    assert [c.stages.capture for c in replayed.compiles] == [c.stages.capture for c in rec.report.compiles]
    assert all(c.stages.capture.bytecode_modified for c in replayed.compiles)


NESTED = textwrap.dedent(
    """
    import torch

    def helper(t):
        print("inside")  # BREAK inside
        return t

    def g(x):
        y = x.sin()
        z = helper(y)  # CALL helper
        return z.cos()
    """
)


def test_the_python_that_runs_at_a_break_is_named_with_its_line(tmp_path):
    """A break inside a called function: the frame's code calls the graph, then runs the call
    itself in Python; the steps name that call's source line (the frame's entry in the break's
    stack, as torch's break record gives it) and where inside it the break was."""
    path = tmp_path / "nested.py"
    path.write_text(NESTED)
    scope: dict = {"__name__": "nested"}
    exec(compile(NESTED, str(path), "exec"), scope)
    with compiler.recording() as rec:
        torch.compile(scope["g"], backend="eager")(torch.ones(4))
    report = rec.report
    lines = NESTED.splitlines()
    call = next(i for i, ln in enumerate(lines, 1) if "# CALL helper" in ln)
    inside = next(i for i, ln in enumerate(lines, 1) if "# BREAK inside" in ln)
    (site,) = [b for b in report.graph_breaks if b.line == inside]
    assert [(f.name, f.line) for f in site.user_stack if f.filename == str(path)] == [
        ("g", call),
        ("helper", inside),
    ]
    shown = text(report, "bytecode", compile="0/0").splitlines()
    at = next(i for i, ln in enumerate(shown) if "calls the compiled graph" in ln)
    assert shown[at + 1] == (
        f"    {f'line {call}':<8} runs `z = helper(y)  # CALL helper` ({path}:{call}) itself, in Python: "
        f"the graph break inside it, at {path}:{inside} ({site.type})"
    )


MUTATES = textwrap.dedent(
    """
    import torch

    class Box:
        pass

    def h(box, x):
        box.seen = x.shape[0]  # SET seen
        box.kept = x.sum()  # SET kept
        return x.sin()
    """
)


def test_the_side_effects_replayed_after_the_graph_are_a_step(tmp_path):
    """torch's ``dynamo_side_effects`` for a frame that sets attributes of an object it was
    given: the capture stage reads the object's type, its source and each mutation's line, and
    the bytecode view says the code replays them after the graph (their lines in --view capture)."""
    path = tmp_path / "mutates.py"
    path.write_text(MUTATES)
    scope: dict = {"__name__": "mutates"}
    exec(compile(MUTATES, str(path), "exec"), scope)
    seen: list[str] = []

    class Oracle(logging.Handler):  # torch's own record of the artifact, beside the recording
        def emit(self, record):
            if (record.metadata.get("artifact") or {}).get("name") == "dynamo_side_effects":
                seen.append(record.payload)

    trace_log = torch._logging._internal.trace_log
    oracle = Oracle()
    trace_log.addHandler(oracle)
    try:
        with compiler.recording() as rec:
            torch.compile(scope["h"], backend="eager")(scope["Box"](), torch.ones(4))
    finally:
        trace_log.removeHandler(oracle)
    lines = MUTATES.splitlines()
    at = [next(i for i, ln in enumerate(lines, 1) if mark in ln) for mark in ("# SET seen", "# SET kept")]
    (payload,) = seen
    assert payload.startswith("Mutating object of type Box (source name: L['box'])")
    (effect,) = rec.report.compiles[0].stages.capture.side_effects
    assert (effect.type, effect.source) == ("Box", "L['box']")
    assert [(f.filename, f.line, f.code) for f in effect.sites] == [
        (str(path), at[0], "box.seen = x.shape[0]  # SET seen"),
        (str(path), at[1], "box.kept = x.sum()  # SET kept"),
    ]
    shown = text(rec.report, "bytecode", compile="0/0").splitlines()
    graph = next(i for i, ln in enumerate(shown) if "calls the compiled graph" in ln)
    assert shown[graph + 1] == (
        "             replays 2 mutations of 1 object (Box) in Python: Dynamo's side effects (their lines: --view capture)"
    )
    capture = text(rec.report, "capture", compile="0/0")
    assert re.search(rf"^Box +L\['box'\] +2 +{re.escape(str(path))}:{at[0]}, {at[1]}$", capture, re.M)
