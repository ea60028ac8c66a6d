"""%%compile through IPython's run_cell_magic: write-back, results, errors, --record, progress."""

from __future__ import annotations

import pytest
import torch

import explorer
from explorer._magic import assigned_names

CELL = """\
y = x.sin()
if y.sum() > 0:
    y = y * 2
z = y + 1
z.shape
"""


@pytest.fixture(scope="module")
def ip():
    shell = pytest.importorskip("IPython.testing.globalipapp").get_ipython()
    shell.run_line_magic("load_ext", "explorer")
    return shell


@pytest.fixture(autouse=True)
def _namespace(ip):
    ip.run_cell("import torch\nx = torch.linspace(-1, 1, 16).reshape(4, 4)")
    yield
    for n in ("y", "z", "w", "q", "_pt2_report"):
        ip.user_ns.pop(n, None)


def test_cell_is_compiled_names_written_back_and_value_returned(ip):
    result = ip.run_cell_magic("compile", "--backend eager", CELL)
    x = ip.user_ns["x"]
    y = x.sin()
    y = y * 2 if y.sum() > 0 else y
    assert result == torch.Size([4, 4])
    torch.testing.assert_close(ip.user_ns["y"], y)
    torch.testing.assert_close(ip.user_ns["z"], y + 1)
    report = ip.user_ns["_pt2_report"]
    (b,) = report.graph_breaks
    cell_file = b.filename
    assert b.type == "Data-dependent branching" and b.line == 2
    assert cell_file.startswith("<ipython-input-") or cell_file.endswith(".py")
    # the cell's own code object is what Dynamo compiled
    assert report.compiles[0].name == "__pt2_cell__"


def test_cell_reading_and_rebinding_a_notebook_name(ip):
    ip.run_cell_magic("compile", "--backend eager", "x = x + 1\nq = x.sum()")
    torch.testing.assert_close(ip.user_ns["x"], torch.linspace(-1, 1, 16).reshape(4, 4) + 1)
    torch.testing.assert_close(ip.user_ns["q"], ip.user_ns["x"].sum())


def test_flags_reach_torch_compile(ip):
    ip.run_cell_magic("compile", "--backend eager --fullgraph", "w = x.cos() * 3")
    r = ip.user_ns["_pt2_report"]
    assert [c.status for c in r.compiles] == ["ok"] and r.graph_breaks == ()
    with pytest.raises(torch._dynamo.exc.Unsupported):
        ip.run_cell_magic("compile", "--backend eager --fullgraph", "if x.sum() > 0:\n    w = x\n")
    r = ip.user_ns["_pt2_report"]  # the partial recording is kept and shown
    assert r.compiles[0].status == "failed" and "Data-dependent branching" in r.compiles[0].error


def test_errors_surface_unchanged(ip):
    with pytest.raises(ValueError, match="^cell error$"):
        ip.run_cell_magic("compile", "--backend eager", "w = x.sin()\nraise ValueError('cell error')")
    assert ip.user_ns["_pt2_report"].error == "ValueError: cell error"
    with pytest.raises(ZeroDivisionError):
        ip.run_cell_magic("compile", "--record", "1 / 0")


def test_record_mode_runs_the_cell_as_written(ip):
    out = ip.run_cell_magic(
        "compile",
        "--record --name first",
        "f = torch.compile(lambda a: a.cos(), backend='eager')\nf(x).sum()",
    )
    torch.testing.assert_close(out, ip.user_ns["x"].cos().sum())
    assert "f" in ip.user_ns
    r = explorer.reports["first"]
    assert r is ip.user_ns["_pt2_report"] and [c.status for c in r.compiles] == ["ok"]


def test_progress_shows_stage_and_elapsed(ip, monkeypatch):
    import explorer._magic as m

    shown = []

    class Handle:
        def update(self, obj):
            shown.append(getattr(obj, "data", obj))

    monkeypatch.setattr(m, "display", lambda *a, **k: Handle())
    monkeypatch.setattr(m._Progress, "__call__", _unthrottled(m._Progress.__call__))
    ip.run_cell_magic("compile", "", "w = (x @ x).relu()")
    texts = [s for s in shown if isinstance(s, str)]
    assert any("compiling [0/0], stage capture" in t for t in texts), texts
    assert any("stage codegen" in t for t in texts), texts
    assert type(shown[-1]).__name__ == "Explorer"  # the progress line is replaced by the explorer


def _unthrottled(call):
    def wrapper(self, cid, stage):
        self.last = -1.0  # no throttling: every stage change is shown
        return call(self, cid, stage)

    return wrapper


def test_assigned_names():
    import ast

    tree = ast.parse(
        "import numpy as np\na, (b, c) = 1, (2, 3)\nfor i in []: pass\ndef f(): g = 1\nwith open('x') as fh: pass\n[k for k in []]"
    )
    assert assigned_names(tree) == ["np", "a", "b", "c", "i", "f", "fh"]


def test_names_unused_after_a_graph_break_are_written_back(ip):
    ip.run_cell_magic("compile", "--backend eager", "a = x * 2\nb = a + 1\nprint('break')\nc = b + 1")
    assert {n: n in ip.user_ns for n in "abc"} == {"a": True, "b": True, "c": True}
    torch.testing.assert_close(ip.user_ns["a"], ip.user_ns["x"] * 2)
    ip.run_cell_magic("compile", "--backend eager", "if x.sum() > 100:\n    never = 1\nq = 2")
    assert "never" not in ip.user_ns and ip.user_ns["q"] == 2
    for n in "abc":
        ip.user_ns.pop(n, None)
    ip.user_ns.pop("q", None)


def test_diff_with_a_kept_report(ip, monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: shown.extend(a))
    ip.run_cell_magic("compile", "--backend aot_eager --name before", "w = x.sin() + 1")
    ip.run_cell_magic("compile", "--backend aot_eager --diff-with before --name before", "w = x.cos() + 1")
    (d,) = [s for s in shown if type(s).__name__ == "Diff"]
    assert (d.a_label, d.b_label) == ("before", "this cell")  # against the kept one, not itself
    assert d.summary == [
        # the guards quote the source line they come from: 6 of them, on x, quote the edited line
        f"{d.sections[3].id.split(':')[0]}: guards: 6 changed; Dynamo graph: 3 lines changed",
        "Dynamo ops: sin −1, cos +1",
        "ATen ops: aten.sin.default −1, aten.cos.default +1",
    ]
    # the two cells' own names and files are normalised: only what they hold differs
    assert "at Cell In[n], line 1" in d.sections[0].a and not d.sections[0].changed
    assert "ipython-input" not in d.sections[4].a + d.sections[4].b
    ip.run_cell_magic("compile", "--backend aot_eager --diff-with nope", "w = x.cos() + 1")
    kept = ", ".join(sorted(explorer.reports))  # "before", and others kept by earlier tests
    assert shown[-1].data == (
        f"<b>--diff-with nope</b>: no report kept under that name (kept: {kept}; keep one with %%compile --name NAME)"
    )
    torch.testing.assert_close(ip.user_ns["w"], ip.user_ns["x"].cos() + 1)  # the cell still ran
