"""The notebooks under notebooks/ are tests: each runs headless, top to bottom, and any error
fails. They run with nbclient on this environment's "python3" kernel, importing this
checkout, in a temporary copy of notebooks/ so that outputs and the files they write stay out
of the repository. The tour's key outputs are asserted exactly."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
CELL_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def run_notebook(tmp_path_factory):
    """``run_notebook(name) -> (executed notebook, the folder it ran in)``, once per module."""
    done: dict[str, tuple[nbformat.NotebookNode, Path]] = {}

    def run(name: str):
        if name not in done:
            work = tmp_path_factory.mktemp("notebooks")
            shutil.copytree(ROOT / "notebooks", work, dirs_exist_ok=True)
            nb = nbformat.read(work / name, as_version=4)
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
            env["IPYTHONDIR"] = str(work / ".ipython")  # no profile or history in ~/.ipython
            client = NotebookClient(
                nb,
                kernel_name="python3",  # this venv's ipykernel: jupyter_client runs it with sys.executable
                timeout=CELL_TIMEOUT_S,
                resources={"metadata": {"path": str(work)}},  # the kernel's cwd
            )
            client.execute(env=env)  # raises CellExecutionError (with the traceback) on any error
            done[name] = (nb, work)
        return done[name]

    return run


def _cell(nb, snippet: str):
    """The one code cell whose source contains ``snippet``."""
    hits = [c for c in nb.cells if c.cell_type == "code" and snippet in c.source]
    assert len(hits) == 1, f"{len(hits)} code cells contain {snippet!r}"
    return hits[0]


def _if_line(nb) -> tuple[int, str]:
    """The line number and text of the model's data-dependent ``if`` in its cell."""
    src = _cell(nb, "class MLP(nn.Module):").source.splitlines()
    (line,) = [i for i, t in enumerate(src, start=1) if "if h.mean() > 0.5:" in t]
    return line, src[line - 1]


def _stdout(cell) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, f"{path.name}: outputs committed"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(run_notebook, path):
    nb, _ = run_notebook(path.name)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


@pytest.fixture(scope="module")
def tour(run_notebook):
    return run_notebook("00_tour.ipynb")


@pytest.mark.slow
def test_tour_shows_the_explorer(tour):
    nb, _ = tour
    for snippet in ("%%compile --name step", "%%compile --record"):
        outputs = _cell(nb, snippet).outputs
        widgets = [o for o in outputs if o.output_type == "display_data" and WIDGET in o.data]
        # the progress line is replaced in place by the explorer: one display, the widget
        assert len(widgets) == 1, outputs
        assert widgets[0].data["text/plain"].startswith("Explorer(")
        assert widgets[0].data[WIDGET]["model_id"] in nb.metadata.widgets[WIDGET_STATE]["state"]


def _break_heads(nb) -> list[str]:
    """The header line of each break site in the tour's text view (the unindented lines)."""
    text = _stdout(_cell(nb, "print(breaks_text(view))"))
    return [ln for ln in text.splitlines() if ln and not ln.startswith(" ")]


@pytest.mark.slow
def test_tour_break_view_names_the_model_cell_line(tour):
    nb, _ = tour
    line, if_text = _if_line(nb)
    model_cell = _cell(nb, "class MLP(nn.Module):")
    text = _stdout(_cell(nb, "print(breaks_text(view))"))
    heads = _break_heads(nb)
    assert len(heads) == 2, text
    # named as IPython's tracebacks name a cell: by the number it ran as
    assert heads[0] == (
        f"Cell In[{model_cell.execution_count}], line {line}  Data-dependent branching  "
        "(hit 4×: 0/0, 1/0, 4/0, 1/1)"
    )
    assert re.fullmatch(
        r"Cell In\[\d+\], line 3  Unsupported Tensor\.backward\(\) call  \(hit 1×: 3/0\)", heads[1]
    )
    # the break line itself, highlighted in its context
    assert re.search(rf"^  > +{line} \| {re.escape(if_text)}$", text, re.M), text
    assert re.search(r"^  > +3 \| loss\.backward\(\)$", text, re.M), text
    assert "  graph before: [0/0], graph after: [2/0]\n" in text
    assert "  hint: Use `torch.cond` to express dynamic control flow.\n" in text

    data = _stdout(_cell(nb, "for b in report.graph_breaks:"))
    assert data.startswith(f"line {line}: Data-dependent branching, first hint: ")


@pytest.mark.slow
def test_tour_compile_cell_named_by_its_own_number(tour):
    nb, _ = tour
    step = _cell(nb, "%%compile --name step")
    assert _break_heads(nb)[1].startswith(f"Cell In[{step.execution_count}], line 3  ")


@pytest.mark.slow
def test_tour_recompile_reasons(tour):
    nb, _ = tour
    text = _stdout(_cell(nb, "print(recompiles_text(view))"))
    reason = "1/0: tensor 'x' size mismatch at index 0. expected 8, actual 12"
    assert f"  [1/1] ok: {reason}\n" in text
    assert f"[1/1] forward: guards of [1/0] failed\n  reason: {reason}\n" in text
    resumed = "2/0: tensor 'h' size mismatch at index 0. expected 8, actual 12"
    line, _ = _if_line(nb)
    assert f"[2/1] forward (resumed after line {line}): guards of [2/0] failed\n  reason: {resumed}\n" in text

    # --record: batch 6 recompiles with a dynamic batch size, batch 10 reuses that compile
    loop = _stdout(_cell(nb, 'explorer.reports["loop"]'))
    assert (
        "[0/1] forward: guards of [0/0] failed\n  reason: 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6\n"
        in loop
    )
    assert "[0/2]" not in loop and "[1/2]" not in loop


@pytest.mark.slow
def test_tour_lists_the_kernels(tour):
    nb, _ = tour
    lines = _stdout(_cell(nb, 'report.kernels_of("1/0")')).splitlines()
    forward = [ln for ln in lines if ln.startswith("forward  cpp_fused_")]
    backward = [ln for ln in lines if ln.startswith("backward cpp_fused_")]
    assert len(forward) == 1 and backward, lines
    assert re.search(r"  \(cpp, \d+ lines\)  fused: .*\brelu\b.*\bmean\b", forward[0]), forward[0]


@pytest.mark.slow
def test_tour_saves_html_and_answers_the_exercise(tour):
    nb, work = tour
    page = (work / "out" / "tour.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "Data-dependent branching" in page

    answer = _cell(nb, "class MLPNoBreak(MLP):")
    assert answer.metadata["jupyter"]["source_hidden"] is True  # collapsed in JupyterLab
    assert _stdout(answer) == (
        "No graph breaks: each compiled frame is one graph.\nsame output as the model with the `if`\n"
    )
