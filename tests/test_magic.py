"""%%compile through IPython's run_cell_magic and run_cell: write-back, results, errors, --record,
progress; and the cell meaning what it means as a plain cell (compared with one, in the same shell)."""

from __future__ import annotations

import pickle
import re
import sys

import pytest
import torch

import explorer
from explorer.notebook._magic import assigned_names

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
    for n in ("y", "z", "w", "q", "e", "g", "C", "f", "scale", "count", "inc", "input", "_pt2_report"):
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
    import explorer.notebook._magic as m
    import explorer.notebook._progress as p

    shown, lines = [], []

    class Handle:
        def update(self, obj):
            shown.append(getattr(obj, "data", obj))

    monkeypatch.setattr(m, "display", lambda *a, **k: Handle())
    monkeypatch.setattr(p, "EVERY_S", -1.0)  # every change shown
    # what the progress says, whether ipywidgets draws it (its line's value) or HTML does
    monkeypatch.setattr(p.CellProgress, "_show", lambda self, text, *a: lines.append(text))
    ip.run_cell_magic("compile", "--fresh", "w = (x @ x).relu()")  # cold: the kernels are compiled
    assert any(t.startswith("PT2 Explorer: compiling [0/0] capture ") for t in lines), lines
    assert any(
        re.match(r"PT2 Explorer: compiling \[0/0\] codegen .* · kernel 1 of \d+ ", t) for t in lines
    ), lines
    assert lines[-1] == "PT2 Explorer: compiled [0/0] · running the cell…"  # the compile is over
    assert type(shown[-1]).__name__ == "Explorer"  # the progress is replaced by the explorer


def test_progress_bar_shows_the_line_and_goes_when_the_cell_fails(ip, monkeypatch):
    """A bar of the kernels compiled and the line (HTML-escaped) in one display; a cell that
    fails before any report leaves an empty display, not the progress."""
    import explorer.notebook._progress as p
    from compiler.types import Progress

    shown = []

    class Handle:
        def update(self, obj):
            shown.append(obj)

    progress = p.CellProgress(lambda *a, **k: Handle())
    assert "running the cell" in progress.shown.data
    progress(Progress("0/0", "codegen", frame="<f>", kernel_n=2, kernels=5, kernel="k_1", stage_since=0.0))
    assert '<progress value="2" max="5"' in shown[-1].data
    assert "kernel 2 of 5 k_1 · &lt;f&gt;" in shown[-1].data and "<f>" not in shown[-1].data
    progress.done()
    assert shown[-1].data == ""


def test_progress_is_replaced_when_the_cell_raises(ip, monkeypatch):
    """A cell that raises: its partial recording's explorer takes the progress's place."""
    import explorer.notebook._magic as m

    shown, made = [], []

    class Handle:
        def update(self, obj):
            shown.append(obj)

    class Kept(m.CellProgress):
        def __init__(self, show=None):
            super().__init__(show)
            made.append(self)

    monkeypatch.setattr(m, "display", lambda *a, **k: Handle())
    monkeypatch.setattr(m, "CellProgress", Kept)
    with pytest.raises(ValueError, match="^cell error$"):
        ip.run_cell_magic("compile", "--backend eager", "w = x.sin()\nraise ValueError('cell error')")
    (progress,) = made
    assert type(shown[-1]).__name__ == "Explorer" and progress.handle.update is not None


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


# ---- the cell means what it means as a plain cell ------------------------------------------------


@pytest.fixture
def run(ip, capsys, monkeypatch):
    """Runs a cell as IPython does (run_cell), returning its result and what it printed, with
    cell numbers and file hashes normalised; the magic's progress line and explorer not shown."""
    import explorer.notebook._magic as m

    class Handle:
        def update(self, obj):
            pass

    monkeypatch.setattr(m, "display", lambda *a, **k: Handle())

    def run(cell: str):
        capsys.readouterr()
        result = ip.run_cell(cell, store_history=True)
        captured = capsys.readouterr()
        out = captured.out + captured.err  # tracebacks go to stdout, UsageErrors to stderr
        out = re.sub(r"In\[\d+\]", "In[n]", out)
        out = re.sub(r"Out\[\d+\]", "Out[n]", out)
        return result, re.sub(r"<ipython-input-\d+-\w+>", "<ipython-input>", out)

    return run


COMPILE = "%%compile --backend eager\n"


@pytest.mark.parametrize(
    "body", ["w = (", "w = 1\nreturn w", "w = 1\nyield w", "nonlocal w", "def f():\n  w = 1\n    q = 2"]
)
def test_syntax_errors_show_as_in_a_plain_cell_before_anything_runs(ip, run, body):
    result, shown = run(COMPILE + body)
    assert isinstance(result.error_before_exec, SyntaxError)
    assert "w" not in ip.user_ns and "_pt2_report" not in ip.user_ns  # nothing ran, nothing recorded
    plain_result, plain = run(body)  # (a plain cell runs `w = 1` before failing on `return w`)
    assert type(plain_result.error_before_exec) is type(result.error_before_exec)
    assert shown == plain and "Traceback" not in shown and "_magic" not in shown, shown
    with pytest.raises(SyntaxError):  # called directly, the magic raises it
        ip.run_cell_magic("compile", "--backend eager", body)


def test_await_is_refused_before_anything_runs(ip, run):
    body = "import asyncio\nw = 1\nawait asyncio.sleep(0)\nw"
    result, shown = run(COMPILE + body)
    assert shown == (
        "UsageError: %%compile: this cell uses await; torch.compile cannot compile a coroutine — run it "
        "as a plain cell, or move the model call into a function\n"
    )
    assert "w" not in ip.user_ns and not result.success
    result, shown = run(body)  # IPython's autoawait runs it as a plain cell
    assert result.result == 1 and shown == "Out[n]: 1\n"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("from math import *", "`from … import *` only works at a notebook's top level"),
        ("from __future__ import annotations", "`from __future__ import …` only works in a plain cell"),
        ("w = x.sin()\nprint(locals())", "locals() at the cell's top level would see the function's names"),
        ("exec('w = 1')", "exec() at the cell's top level would see the function's names"),
        ("w = x.sin()\n%time q = w + 1", "%magics run in the notebook's namespace"),
    ],
)
def test_cells_a_function_cannot_mean_are_refused(ip, run, body, why):
    result, shown = run(COMPILE + body)
    assert shown.startswith(f"UsageError: %%compile: {why}") and shown.count("\n") == 1, shown
    assert not result.success and "w" not in ip.user_ns and "_pt2_report" not in ip.user_ns
    ip.run_cell_magic("compile", "--record", body)  # as written, it runs
    ip.user_ns.pop("w", None)


def test_top_level_global_is_a_no_op_as_in_a_plain_cell(ip):
    ip.run_cell_magic("compile", "--backend eager --fullgraph", "global w\nw = x.cos()")
    torch.testing.assert_close(ip.user_ns["w"], ip.user_ns["x"].cos())


def test_functions_and_classes_defined_in_the_cell_are_plain_and_pickle(ip, run, monkeypatch):
    monkeypatch.setitem(sys.modules, "__main__", ip.user_module)  # as in a kernel
    body = "def g(t):\n    return t + 1\nclass C:\n    def m(self):\n        return g\n    class Inner:\n        pass\n"
    seen = {}
    for cell in (body, COMPILE + body):
        assert run(cell)[0].success
        g, C = ip.user_ns["g"], ip.user_ns["C"]
        seen[cell] = (g.__qualname__, g.__module__, C.__qualname__, C.m.__qualname__, C.Inner.__qualname__)
        assert pickle.loads(pickle.dumps(g)) is g
        assert (
            type(pickle.loads(pickle.dumps(C()))) is C and pickle.loads(pickle.dumps(C.Inner())) is not None
        )
    assert seen[COMPILE + body] == seen[body] == ("g", "__main__", "C", "C.m", "C.Inner")


def test_a_trailing_semicolon_hides_the_result_as_in_a_plain_cell(ip, run):
    for hidden in ("w = x.sin()\nw.sum();", "w = x.sin()\nw.sum();  # comment"):
        result, shown = run(COMPILE + hidden)
        plain_result, plain = run(hidden)
        assert result.result is plain_result.result is None and shown == plain == ""
    result, shown = run(COMPILE + "w = x.sin()\nw.shape")
    assert result.result == torch.Size([4, 4]) and shown == "Out[n]: torch.Size([4, 4])\n"


@pytest.mark.parametrize(
    "body",
    [
        "w = x.sin()\nq = 1 / 0",
        "def f(t):\n    raise ValueError('bad')\nw = x.sin()\nq = f(w)",
        "w = x.sin()\nprint('graph break')\nq = w + 1\nq = q + undefined_name",  # in Dynamo's resume function
        "w = x.sin()\nif w.sum() > 0:\n    q = 1 / 0",  # after a data-dependent break
    ],
)
def test_errors_show_the_cells_frames_as_a_plain_cell_does(ip, run, body):
    result, shown = run(COMPILE + body)
    plain_result, plain = run(body)
    assert type(result.error_in_exec) is type(plain_result.error_in_exec)
    assert shown == plain, shown
    assert shown.count("Cell In[n]") == plain.count("Cell In[n]")  # the same frames, the cell's first
    assert re.search(r"Traceback \(most recent call last\)\nCell In\[n\], line \d+\n", shown)
    assert "__pt2_cell__" not in shown and "_magic" not in shown and "torch" not in shown


def test_errors_dynamo_raises_while_compiling_show_its_message_not_its_frames(ip, run):
    # nothing of the cell ran (Dynamo raises while tracing it): torch's ~30 frames left out, as
    # Dynamo leaves them out of its own errors unless TORCHDYNAMO_VERBOSE; its message says where
    result, shown = run(COMPILE + "w = x.sin()\nq = x[10]")
    assert isinstance(result.error_in_exec, IndexError)
    assert re.match(
        r"-+\nIndexError +Traceback \(most recent call last\)\nIndexError: index 10 is out", shown
    )
    assert 'File "<ipython-input>", line 2, in __pt2_cell__\n    q = x[10]' in shown  # from user code:
    assert "File " not in shown.replace('File "<ipython-input>"', "")
    result, shown = run("%%compile --backend eager --fullgraph\nw = x.sin()\nprint(w)")
    assert type(result.error_in_exec).__name__ == "Unsupported" and "\nFile " not in shown


def test_errors_the_shells_formatter_cannot_show_fall_back_to_its_plain_mode(ip, run):
    # a graph break inside a function the cell calls: Dynamo's code for the cell then holds a
    # dict constant, which IPython's Context formatter (stack_data) fails to hash
    result, shown = run(COMPILE + "def f(t):\n    return t / undefined_name\nw = x.sin()\nq = f(w)")
    assert isinstance(result.error_in_exec, NameError)
    assert shown == (
        "Traceback (most recent call last):\n"
        "  Cell In[n], line 4\n    q = f(w)\n"
        "  Cell In[n], line 2 in f\n    return t / undefined_name\n"
        "NameError: name 'undefined_name' is not defined\n\n"
    )


def test_a_cell_that_raises_keeps_what_it_assigned_before(ip):
    x = ip.user_ns["x"]
    with pytest.raises(ZeroDivisionError):
        ip.run_cell_magic("compile", "--backend eager", "w = x.sin()\nq = 1 / 0")
    torch.testing.assert_close(ip.user_ns["w"], x.sin())
    assert "q" not in ip.user_ns
    ip.user_ns.pop("w")
    with pytest.raises(NameError):  # after a graph break: the names are in Dynamo's resume frame
        ip.run_cell_magic(
            "compile", "--backend eager", "w = x.sin()\nprint('break')\nq = w * 2\nz = undefined_name"
        )
    torch.testing.assert_close(ip.user_ns["q"], x.sin() * 2)
    assert "z" not in ip.user_ns
    ip.user_ns["y"] = "notebook's y"
    with pytest.raises(KeyError):  # raised in a function the cell calls; y rebound first
        ip.run_cell_magic("compile", "--backend eager", "y = x.cos()\nz = {}['missing']")
    torch.testing.assert_close(ip.user_ns["y"], x.cos())


def test_functions_defined_in_the_cell_see_the_notebooks_names(ip):
    cell = (
        "scale = 2\n"
        "def f(t):\n    return t * scale\n"
        "count = 0\n"
        "def inc():\n    global count\n    count += 1\n"
        "inc()\ninc()\n"
        "w = f(x)"
    )
    ip.run_cell_magic("compile", "--backend eager", cell)
    ns, x = ip.user_ns, ip.user_ns["x"]
    assert ns["count"] == 2  # the nested `global count` wrote the same count the cell reads
    torch.testing.assert_close(ns["w"], x * 2)
    ns["scale"] = 3  # a later cell rebinding a name: the function sees it, as in a plain cell
    torch.testing.assert_close(ns["f"](x), x * 3)
    assert [c.status for c in ns["_pt2_report"].compiles] == ["ok"]


def test_names_like_builtins_del_and_except_as_in_a_plain_cell(ip, run):
    body = (
        "w = list(range(3))\n"  # the builtin, though the cell assigns `list` below
        "list = None\n"
        "del list\n"
        "q = 1\ndel q\nq = 2\n"
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    z = str(e)\n"
        "del y\n"
    )
    seen = []
    for cell in (body, COMPILE + body):
        ip.user_ns.update(y=1, e="notebook's e")
        assert run(cell)[0].success
        seen.append({n: ip.user_ns.get(n, "-") for n in ("w", "list", "q", "e", "z", "y")})
    assert (
        seen[1]
        == seen[0]
        == {"w": [0, 1, 2], "list": "-", "q": 2, "e": "-", "z": "division by zero", "y": "-"}
    )


@pytest.mark.filterwarnings("ignore:Dynamo does not know how to trace")  # IPython's getoutput: a break
def test_ipython_syntax_in_the_cell_is_transformed_as_in_a_plain_cell(ip):
    ip.run_cell_magic("compile", "--backend eager", "w = !echo hi\nq = x.sin()")
    assert list(ip.user_ns["w"]) == ["hi"]
