"""The notebooks under notebooks/ are tests: each runs headless, top to bottom, and any error
fails. They run with nbclient on this environment's "python3" kernel, importing this
checkout, in a temporary copy of notebooks/ so that outputs and the files they write stay out
of the repository. Key outputs are asserted exactly; the cells they come from are found by
their tags (cell metadata), not by position."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
import torch
from _nbclient import execute

from tests._caches import with_user_caches

pytestmark = pytest.mark.notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WIDGET = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
CELL_TIMEOUT_S = 300
# notebooks whose lesson is the user's compile caches: their kernel gets the caches as a user has
# them, not the session's switches that turn them off (tests/_caches.py)
USER_CACHES = {"15_cuda_graphs_and_caches.ipynb", "18_slow_compile.ipynb"}


@pytest.fixture(scope="module")
def run_notebook(tmp_path_factory):
    """``run_notebook(name) -> (executed notebook, the folder it ran in)``, once per module."""
    done: dict[str, tuple[nbformat.NotebookNode, Path]] = {}

    def run(name: str):
        if name not in done:
            work = tmp_path_factory.mktemp("notebooks")
            shutil.copytree(ROOT / "notebooks", work, dirs_exist_ok=True)
            nb = nbformat.read(work / name, as_version=4)
            env = with_user_caches(dict(os.environ)) if name in USER_CACHES else dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
            env["IPYTHONDIR"] = str(work / ".ipython")  # no profile or history in ~/.ipython
            # this venv's ipykernel ("python3": jupyter_client runs it with sys.executable), in
            # ``work``; raises CellExecutionError (with the traceback) on any error
            execute(nb, timeout=CELL_TIMEOUT_S, cwd=str(work), env=env)
            done[name] = (nb, work)
        return done[name]

    return run


def _cell(nb, snippet: str):
    """The one code cell whose source contains ``snippet``."""
    hits = [c for c in nb.cells if c.cell_type == "code" and snippet in c.source]
    assert len(hits) == 1, f"{len(hits)} code cells contain {snippet!r}"
    return hits[0]


def _tagged(nb, tag: str):
    """The one code cell tagged ``tag``."""
    hits = [c for c in nb.cells if c.cell_type == "code" and tag in c.metadata.get("tags", [])]
    assert len(hits) == 1, f"{len(hits)} code cells tagged {tag!r}"
    return hits[0]


def _stdout(cell) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def _line_of(cell, text: str) -> int:
    """The 1-based line of ``cell`` that contains ``text`` (exactly one)."""
    (line,) = [i for i, t in enumerate(cell.source.splitlines(), start=1) if text in t]
    return line


# ---- every notebook ------------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, f"{path.name}: outputs committed"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_ends_with_an_exercise_and_a_hidden_answer(path):
    """The last section is "## Exercise"; its answer is the last code cell, its source hidden
    (JupyterLab 4 collapses a cell's input when ``metadata.jupyter.source_hidden`` is true)."""
    nb = nbformat.read(path, as_version=4)
    headings = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown" and re.search(r"^## Exercise", c.source, re.M)
    ]
    assert headings, f"{path.name}: no '## Exercise' section"
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    answer = nb.cells[code[-1]]
    assert code[-1] > headings[-1], f"{path.name}: no code cell after the exercise"
    assert answer.metadata.get("jupyter", {}).get("source_hidden") is True, f"{path.name}: answer not hidden"
    later = [c for c in nb.cells[headings[-1] + 1 :] if c.cell_type == "markdown"]
    assert all(not c.source.startswith("## ") for c in later), f"{path.name}: a section after the exercise"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(run_notebook, path):
    nb, _ = run_notebook(path.name)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


def _errors(nb) -> list[str]:
    return [
        f"cell {i}: {o.ename}: {o.evalue}"
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]


# the notebooks that read what a cache hit skips (kernels' nodes, the IR around fusion) and the
# tour: run twice warm in CI. Every notebook passed it (2026-11-28, about 21 minutes on this
# 2-CPU machine, over the CI budget): `PT2X_ALL_WARM=1 pytest tests/test_notebooks.py -k warm` runs all
WARM = ("00_tour", "05_inductor_fusion", "06_code_generation", "08_transformers", "16_slow_model_to_fix")


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    [p for p in NOTEBOOKS if p.stem in WARM or os.environ.get("PT2X_ALL_WARM")],
    ids=lambda p: p.stem,
)
def test_notebook_runs_twice_with_warm_caches(tmp_path, path):
    """As a learner runs a notebook: twice in a row, torch's compile caches on (as a user has
    them) and kept between the runs in one cache directory, so that the second run's compiles
    are cache hits, which skip Inductor's lowering and fusion. Each run ends without an error
    (``test_notebook_runs`` is the run with the caches off)."""
    env = with_user_caches(dict(os.environ))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(tmp_path / "inductor-cache")  # both runs, this test's own
    for run in ("first", "second"):
        work = tmp_path / run
        shutil.copytree(ROOT / "notebooks", work)
        nb = nbformat.read(work / path.name, as_version=4)
        env["IPYTHONDIR"] = str(work / ".ipython")
        execute(nb, timeout=CELL_TIMEOUT_S, cwd=str(work), env=env)  # raises on a cell's error
        assert not _errors(nb), (run, _errors(nb))


# ---- 00: the tour --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tour(run_notebook):
    return run_notebook("00_tour.ipynb")


def _if_line(nb) -> tuple[int, str]:
    """The line number and text of the model's data-dependent ``if`` in its cell."""
    model = _tagged(nb, "model")
    line = _line_of(model, "if h.mean() > 0.5:")
    return line, model.source.splitlines()[line - 1]


@pytest.mark.slow
def test_tour_shows_the_explorer(tour):
    nb, _ = tour
    for tag in ("step", "loop"):
        outputs = _tagged(nb, tag).outputs
        widgets = [o for o in outputs if o.output_type == "display_data" and WIDGET in o.data]
        # the progress line is replaced in place by the explorer: one display, the widget
        assert len(widgets) == 1, outputs
        assert widgets[0].data["text/plain"].startswith("Explorer(")
        assert widgets[0].data[WIDGET]["model_id"] in nb.metadata.widgets[WIDGET_STATE]["state"]


def _break_heads(text: str) -> list[str]:
    """The header line of each break site in a breaks text view (the unindented lines)."""
    return [ln for ln in text.splitlines() if ln and not ln.startswith(" ")]


@pytest.mark.slow
def test_tour_break_view_names_the_model_cell_line(tour):
    nb, _ = tour
    line, if_text = _if_line(nb)
    model_cell = _tagged(nb, "model")
    text = _stdout(_tagged(nb, "breaks"))
    heads = _break_heads(text)
    assert len(heads) == 2, text
    # named as IPython's tracebacks name a cell: by the number it ran as
    assert heads[0] == (
        f"Cell In[{model_cell.execution_count}], line {line}  Data-dependent branching  GB0170  "
        "(hit 4×; logged in [0/0], [1/0], [4/0], [1/1])"
    )
    assert re.fullmatch(
        r"Cell In\[\d+\], line 3  Unsupported Tensor\.backward\(\) call  GB0123  \(hit 1×; logged in \[3/0\]\)",
        heads[1],
    )
    # the break line itself, highlighted in its context
    assert re.search(rf"^  > +{line} \| {re.escape(if_text)}$", text, re.M), text
    assert re.search(r"^  > +3 \| loss\.backward\(\)$", text, re.M), text
    # the graph that ends at the break is forward's own ([1/0]); the cell's [0/0] ends at the call
    assert "  graph before: [1/0], graph after: [2/0]\n" in text
    assert "  hint: Use `torch.cond` to express dynamic control flow.\n" in text

    data = _stdout(_tagged(nb, "break-data"))
    assert data.startswith(f"line {line}: Data-dependent branching, first hint: ")


@pytest.mark.slow
def test_tour_compile_cell_named_by_its_own_number(tour):
    nb, _ = tour
    step = _tagged(nb, "step")
    heads = _break_heads(_stdout(_tagged(nb, "breaks")))
    assert heads[1].startswith(f"Cell In[{step.execution_count}], line 3  ")


@pytest.mark.slow
def test_tour_recompile_reasons(tour):
    nb, _ = tour
    text = _stdout(_tagged(nb, "recompiles"))
    reason = "1/0: tensor 'x' size mismatch at index 0. expected 8, actual 12"
    assert f"  [1/1] ok: {reason}\n" in text
    assert f"[1/1] forward: guards of [1/0] failed\n  reason: {reason}\n" in text
    resumed = "2/0: tensor 'h' size mismatch at index 0. expected 8, actual 12"
    line, _ = _if_line(nb)
    assert f"[2/1] forward (resumed after line {line}): guards of [2/0] failed\n  reason: {resumed}\n" in text

    # --record: batch 6 recompiles with a dynamic batch size, batch 10 reuses that compile
    loop = _stdout(_tagged(nb, "loop-recompiles"))
    assert (
        "[0/1] forward: guards of [0/0] failed\n  reason: 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6\n"
        in loop
    )
    assert "[0/2]" not in loop and "[1/2]" not in loop


@pytest.mark.slow
def test_tour_lists_the_kernels(tour):
    nb, _ = tour
    lines = _stdout(_tagged(nb, "kernels")).splitlines()
    forward = [ln for ln in lines if ln.startswith("forward  cpp_fused_")]
    backward = [ln for ln in lines if ln.startswith("backward cpp_fused_")]
    assert len(forward) == 1 and backward, lines
    assert re.search(r"  \(cpp, \d+ lines\)  fused: .*\brelu\b.*\bmean\b", forward[0]), forward[0]


@pytest.mark.slow
def test_tour_saves_html_and_answers_the_exercise(tour):
    nb, work = tour
    page = (work / "out" / "tour.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "Data-dependent branching" in page

    answer = _tagged(nb, "answer")
    assert answer.metadata["jupyter"]["source_hidden"] is True  # collapsed in JupyterLab
    assert _stdout(answer) == (
        "No graph breaks: each compiled frame is one graph.\nsame output as the model with the `if`\n"
    )


def test_tour_uses_the_public_api_only():
    nb = nbformat.read(ROOT / "notebooks" / "00_tour.ipynb", as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            assert not re.search(r"\bexplorer\._|\bcompiler\._", c.source), c.source


# ---- 01: capture and graph breaks -----------------------------------------------------------


@pytest.mark.slow
def test_01_finds_the_print_break_at_its_line(run_notebook):
    nb, _ = run_notebook("01_capture_and_graph_breaks.ipynb")
    model = _tagged(nb, "model")
    line = _line_of(model, 'print(f"features: {tuple(h.shape)}")')
    text = _stdout(_tagged(nb, "breaks"))
    assert _break_heads(text) == [
        f"Cell In[{model.execution_count}], line {line}  Failed to trace builtin operator  GB0059  (hit 1×; logged in [0/0])"
    ]
    assert re.search(rf"^  > +{line} \|         print\(f\"features: ", text, re.M), text
    assert "  graph before: [0/0], graph after: [1/0]\n" in text
    data = _stdout(_tagged(nb, "break-data"))
    assert data.startswith(f"line {line}: Failed to trace builtin operator\n  compiles around it: ('0/0',)")
    assert "reorderable_logging_functions" in data
    # the graph before the break ends at the print: it returns the live tensor h
    graph = _stdout(_tagged(nb, "graph-before"))
    assert "torch.conv2d(" in graph and "torch.relu(conv2d)" in graph and "return (h,)" in graph
    guards = _stdout(_tagged(nb, "guards"))
    assert "TENSOR_MATCH: check_tensor(L['x'], Tensor," in guards
    assert "EQUALS_MATCH: L['self']._modules['conv'].padding == (1, 1)" in guards
    # the exercise: .item() breaks at its line; the fix compiles with fullgraph=True
    exercise = _tagged(nb, "exercise")
    answer = _stdout(_tagged(nb, "answer"))
    item_line = _line_of(exercise, ".item()")
    assert answer.startswith(
        f"Cell In[{exercise.execution_count}], line {item_line}  "
        "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    ), answer
    assert answer.endswith("fixed: 0 graph breaks, same output\n")


# ---- 02: recompiles and dynamic shapes ------------------------------------------------------


@pytest.mark.slow
def test_02_explains_each_recompile(run_notebook):
    nb, _ = run_notebook("02_recompiles_and_dynamic_shapes.ipynb")
    text = _stdout(_tagged(nb, "recompiles"))
    assert "  [0/1] ok: 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 12\n" in text
    assert "  [0/2] ok: 0/1: temperature == 1.0 " in text
    assert "[0/3]" not in text  # batch 20 reused the dynamic [0/1]
    assert _stdout(_tagged(nb, "recompile-data")).splitlines() == [
        "[0/1] replaced guards of [0/0]: TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrV",
        "[0/2] replaced guards of [0/1]: EQUALS_MATCH: L['temperature'] == 1.0",
    ]
    symbols = _stdout(_tagged(nb, "symbols")).splitlines()
    assert symbols[0] == "[0/0] x: [8, 16]    symbols: none"
    assert re.fullmatch(
        r"\[0/1\] x: \[(s\d+), 16\] +symbols: \1 = L\['x'\]\.size\(\)\[0\] in \[2, int_oo\]", symbols[1]
    )
    assert re.search(r"zf?\d+ = L\['temperature'\]", symbols[2]), symbols[2]
    limit = _stdout(_tagged(nb, "limit"))
    assert "(recompile limit hit)" in limit and limit.endswith(
        "predict: 3 compiles, recompile limit hit: True\n"
    )
    marked = _stdout(_tagged(nb, "mark-dynamic"))
    assert "No recompiles." in marked
    assert re.search(r"^s\d+ = x\.size\(\)\[0\] in \[2, int_oo\]$", marked, re.M), marked
    answer = _stdout(_tagged(nb, "answer")).splitlines()
    assert answer[0] == "an int step: 2 compiles" and answer[-1] == "a tensor step: 1 compile"
    assert answer[1].startswith("0/0: step == 0 ")


# ---- 03: AOTAutograd ------------------------------------------------------------------------


def _saved(cell) -> list[str]:
    return [ln.split()[0] for ln in _stdout(cell).splitlines() if ln.startswith("  ") and " B  " in ln]


@pytest.mark.slow
def test_03_lists_the_saved_tensors(run_notebook):
    nb, _ = run_notebook("03_aot_autograd.ipynb")
    assert (
        _stdout(_tagged(nb, "graphs"))
        == "{'joint': True, 'forward': True, 'backward': True, 'inference': False}\n"
    )
    default = _tagged(nb, "saved-default")
    assert _saved(default) == [
        *("primals_1", "primals_2", "primals_3", "primals_4", "primals_6"),
        *("getitem", "getitem_1", "getitem_2", "addmm", "tanh", "mul_3"),
    ]
    assert "  11 saved tensors; activations kept alive: 106,752 B\n" in _stdout(default)
    mincut = _tagged(nb, "saved-mincut")
    saved = _saved(mincut)
    assert "tanh" not in saved and "addmm" in saved and len(saved) == 9, saved
    assert _stdout(mincut).endswith("activation memory: 73,984 B with min-cut vs 106,752 B by default\n")
    assert _stdout(_tagged(nb, "answer")) == (
        "{'joint': False, 'forward': False, 'backward': False, 'inference': True}\nsaved tensors: 0\n"
    )


# ---- 04: decompositions ---------------------------------------------------------------------


@pytest.mark.slow
def test_04_counts_the_operators(run_notebook):
    nb, _ = run_notebook("04_decompositions.ipynb")
    sets = _stdout(_tagged(nb, "op-sets"))
    aten = re.search(r"^ATen: ([\d,]+) operators, ([\d,]+) overloads$", sets, re.M)
    core = re.search(r"^core ATen: ([\d,]+) overloads of (\d+) operators$", sets, re.M)
    assert aten and core, sets
    n_aten = int(aten.group(1).replace(",", ""))
    n_core = int(core.group(2))
    assert n_aten > 1000 and 100 < n_core < 300 and n_core < n_aten / 5, sets
    assert "def gelu(" in _stdout(_tagged(nb, "gelu-source"))
    assert _stdout(_tagged(nb, "census-before")).startswith("Dynamo graph: 14 calls of 8 functions\n")
    after = _stdout(_tagged(nb, "census-after"))
    assert after.startswith("after decomposition: 64 calls of 16 operators\n"), after
    assert re.search(r"^ +2  torch\.ops\.aten\.var_mean\.correction +ATen, not core$", after, re.M), after
    assert re.search(r"^ +3  torch\.ops\.aten\.addmm\.default +core ATen$", after, re.M), after
    assert after.endswith("Counter({'core ATen': 13, 'ATen, not core': 2, 'python': 1})\n")
    answer = _stdout(_tagged(nb, "answer")).splitlines()
    assert re.fullmatch(r"Counter\(\{'core': \d+\}\)", answer[-1]), answer


# ---- 05: Inductor fusion --------------------------------------------------------------------


@pytest.mark.slow
def test_05_names_the_nodes_of_each_kernel(run_notebook):
    nb, _ = run_notebook("05_inductor_fusion.ipynb")
    kernels = dict(ln.split(": ", 1) for ln in _stdout(_tagged(nb, "kernel-nodes")).splitlines())
    assert sorted(kernels) == ["cpp_fused_add_2", "cpp_fused_gelu_1", "cpp_fused_native_layer_norm_0"]
    assert set(kernels["cpp_fused_gelu_1"].split(", ")) == {"mul_2", "mul_3", "erf", "add_2", "mul_4"}
    assert {"var_mean", "rsqrt", "sub"} <= set(kernels["cpp_fused_native_layer_norm_0"].split(", "))
    assert _stdout(_tagged(nb, "ir-pre")).endswith("8 nodes before fusion\n")
    post = _stdout(_tagged(nb, "ir-post"))
    assert post.startswith("  op0_op1_op2_op3  OuterLoopFusedSchedulerNode\n") and post.endswith(
        "5 nodes after fusion\n"
    )
    assert "fusing op0_op1 with op2_op3\n" in _stdout(_tagged(nb, "fusion-log"))
    assert (
        _stdout(_tagged(nb, "traffic"))
        == "cpp_fused_gelu_1: 352 KiB moved unfused, 64 KiB fused (5.5x less)\n"
    )
    answer = _stdout(_tagged(nb, "answer"))
    assert re.search(r"^cpp_fused_gelu_mul_sigmoid_1: .*\bsigmoid\b", answer, re.M), answer
    assert len(answer.splitlines()) == 3  # no extra kernel


# ---- 06: code generation --------------------------------------------------------------------


@pytest.mark.slow
def test_06_reads_the_cpp_and_triton_kernels(run_notebook):
    nb, _ = run_notebook("06_code_generation.ipynb")
    kernels = _stdout(_tagged(nb, "kernels"))
    assert re.search(
        r"^cpp_fused_gelu_1 +cpp +\d+ lines  fused: mul_4, mul_2, add_2, erf, mul_3$", kernels, re.M
    )
    cpp = _stdout(_tagged(nb, "cpp-kernel"))
    assert '  2 | extern "C"  void  kernel(float* in_out_ptr0)\n' in cpp
    assert "#pragma omp for" in cpp and "tmp6.erf()" in cpp
    wrapper = _stdout(_tagged(nb, "wrapper"))
    assert wrapper.lstrip().startswith("def call(self, args):") and "extern_kernels.addmm(" in wrapper
    assert re.search(r"^ +cpp_fused_gelu_1\(buf\d+\)$", wrapper, re.M), wrapper
    gpu = _stdout(_tagged(nb, "gpu"))
    triton = _stdout(_tagged(nb, "triton-kernel"))
    if not torch.cuda.is_available():  # the shipped H100 recording, not a live run
        assert "triton_poi_fused_gelu_1: fused h; metadata {'autotune_cache_state': 'miss'," in gpu
        assert (
            " 17 | def triton_poi_fused_gelu_1(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n" in triton
        )
    assert "@triton.jit" in triton and "tl.program_id(0)" in triton and "libdevice.erf(" in triton
    answer = _stdout(_tagged(nb, "answer"))
    assert "cpp_fused_gelu_1: in place ['float* in_out_ptr0']; called as cpp_fused_gelu_1(buf" in answer


# ---- 07: modes and speed --------------------------------------------------------------------

H100_MODES = {  # label: the row printed by the "gpu-modes" cell from notebooks/data/h100-modes-mlp.json.gz
    "default": "default                           0.0561    0.0870 ( 0.0128)    0.65x     1.0s  ok, max abs 0.00011",
    "reduce-overhead": (
        "reduce-overhead                   0.0584    0.0659 ( 0.0011)    0.89x     0.6s  ok, max abs 0.00011"
    ),
    "max-autotune": (
        "max-autotune                      0.0565    0.0765 ( 0.0008)    0.74x    36.7s  FINDING, max abs 0.0015"
    ),
    "default · dynamic": (
        "default · dynamic                 0.1143    0.2640 ( 0.3735)    0.43x     1.4s  ok, max abs 0.00011"
    ),
    "default · dynamic · bfloat16": (
        "default · dynamic · bfloat16      0.2439    0.3876 ( 0.0375)    0.63x     1.7s  FINDING, max abs 0.002"
    ),
}


def _widget_state(nb) -> str:
    import json

    return json.dumps(nb.metadata.widgets[WIDGET_STATE]["state"], ensure_ascii=False)


@pytest.mark.slow
def test_07_times_the_block_on_cpu(run_notebook):
    nb, _ = run_notebook("07_modes_and_speed.ipynb")
    by_hand = _stdout(_tagged(nb, "by-hand")).splitlines()
    assert len(by_hand[0].split(": ")[1].split()) == 15, by_hand
    assert re.fullmatch(r"first [\d.]+, then median [\d.]+, min [\d.]+, max [\d.]+", by_hand[1])
    first = _stdout(_tagged(nb, "first-call")).splitlines()
    assert re.fullmatch(r"first compiled call: [\d.]+ s, of which torch's compile: [\d.]+ s", first[0])
    assert re.findall(r"(\w+) [\d.]+ s", first[1]) == ["capture", "decompose", "autograd", "fuse", "codegen"]
    assert len(first[2].split(": ")[1].split()) == 8

    bench = _stdout(_tagged(nb, "bench"))
    assert bench.startswith("GPT2MLP on ") and " (cpu, 1 threads)\n" in bench.splitlines(True)[0]
    assert re.search(
        r"^eager [\d.]+ ms \(IQR [\d.e-]+\), compiled [\d.]+ ms \(IQR [\d.e-]+\), 20 reps: ", bench, re.M
    )
    assert re.search(
        r"^outputs match: max abs [\d.e+-]+, max rel [\d.e+-]+ \(atol 0.001, rtol 0.001\)$", bench, re.M
    )
    assert re.search(r"^aten::addmm +extern +6 ", bench, re.M), bench
    assert re.search(
        r"^graph_\d+_cpp_fused_\w*tanh\w* \(cpp_fused_\w*tanh\w*\) +cpp +0/0 +3 ", bench, re.M
    ), bench

    reading = _stdout(_tagged(nb, "reading"))
    assert re.match(r"speedup ×[\d.]+ = eager [\d.]+ ms / compiled [\d.]+ ms \(medians\)\n", reading)
    assert re.search(
        r"^break-even: (never\. .*|[\d.]+ s compile / [\d.]+ ms saved a call = [\d,]+ calls)$", reading, re.M
    )
    assert re.search(
        r"^accuracy: ok=True, max abs \S+, max rel \S+ \(tolerance 0.001 \+ 0.001·\|eager\|, 1 output tensor\)$",
        reading,
        re.M,
    ), reading
    assert reading.endswith("threads: 1\n")
    kernels = _stdout(_tagged(nb, "kernels")).splitlines()
    assert [ln.split()[1] for ln in kernels].count("extern") == 1 and len(kernels) == 4, kernels
    assert sum(float(ln.rsplit(None, 1)[1].rstrip("%")) for ln in kernels) == pytest.approx(100, abs=0.3)
    # the Benchmark tab is there, in both explorers of the notebook
    assert _widget_state(nb).count('"Benchmark (1)"') == 2


@pytest.mark.slow
def test_07_refuses_a_mutating_function_and_skips_cuda_graphs_on_cpu(run_notebook):
    nb, _ = run_notebook("07_modes_and_speed.ipynb")
    assert _stdout(_tagged(nb, "state")) == (
        "StateMutationError: benchmarking normalise would call it many times, and it changes state in place: "
        "running_mean. Nothing was changed (restored). Pass mutates=True (%%compile --bench --mutates) to "
        "benchmark it anyway: that state is snapshotted and restored after the benchmark.\n"
        "running_mean unchanged: True\n"
    )
    modes = _stdout(_tagged(nb, "modes-cpu")).splitlines()
    assert re.fullmatch(r"default +speedup ×[\d.]+", modes[0]), modes
    assert modes[1:] == ["reduce-overhead  skipped: CUDA graphs need a CUDA device; the inputs are on CPU"]


@pytest.mark.slow
def test_07_reads_the_h100_recordings(run_notebook):
    nb, _ = run_notebook("07_modes_and_speed.ipynb")
    gpu = _stdout(_tagged(nb, "gpu-bench"))
    modes = _stdout(_tagged(nb, "gpu-modes")).splitlines()[1:]
    compiled_ms = {ln[:30].rstrip(): float(ln[30:].split()[1]) for ln in modes}
    assert compiled_ms["reduce-overhead"] < compiled_ms["default"]  # CUDA graphs: less overhead a call
    if torch.cuda.is_available():
        return  # measured live on this machine's GPU: only the above holds for any GPU
    assert (
        "eager 5.771 ms (IQR 0.0109), compiled 5.758 ms (IQR 0.00758), 50 reps: compiled is as fast as eager (×1.00)\n"
        in gpu
    )
    assert "; pays off after 330,372 calls (counted from 4.11 s, cold: no cache hit)\n" in gpu
    assert "peak memory: eager 705.0 MiB, compiled 513.0 MiB\n" in gpu
    assert re.search(r"^sm80_xmma_gemm_f32f32\w+ +extern +6 +16.39 +5.462 +95.0%$", gpu, re.M), gpu
    for name, gbs in (("addmm_gelu_view_1", 3053), ("add_addmm_view_2", 3172), ("native_layer_norm_0", 2933)):
        assert re.search(rf"^triton_\w+_fused_{name} +triton +0/0 +3 .* {gbs}$", gpu, re.M), name
    assert modes == list(H100_MODES.values())
    kernels = _stdout(_tagged(nb, "gpu-modes-kernels"))
    blocks = dict(b.split("\n", 1) for b in re.split(r"\n(?=\S)", kernels.strip()))
    assert list(blocks) == list(H100_MODES)
    assert "multi_tensor_apply_kerne extern  0.0155 ms  28.2%" in blocks["reduce-overhead"]
    assert "multi_tensor_apply" not in blocks["default"]
    assert "triton_tem_fused_addmm_gelu_t_view_3" in blocks["max-autotune"]
    assert blocks["default · dynamic · bfloat16"].startswith("  triton_poi_fused__to_copy_1 ")
    assert "MLPBlock, 8×32×1024: modes and settings" in _widget_state(nb)  # the modes chart
    assert _stdout(_tagged(nb, "gpu-verdict")).splitlines()[0] == (
        "default: compiled is 1.55× slower than eager: host-bound: 54% of the compiled call is the GPU "
        "waiting for the host; CUDA graphs are off (mode='reduce-overhead' turns them on)"
    )
    assert _stdout(_tagged(nb, "answer")) == (
        "Triton kernels: 0.285 ms of a 5.758 ms call (5.0%)\n"
        "at 3350 GB/s: 0.260 ms, at most 0.025 ms less (0.43% of the call)\n"
    )


def test_07_uses_the_public_api_only():
    nb = nbformat.read(ROOT / "notebooks" / "07_modes_and_speed.ipynb", as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            assert not re.search(r"\bexplorer\._|\bcompiler\._", c.source), c.source


# ---- 08: transformers -----------------------------------------------------------------------


@pytest.mark.slow
def test_08_follows_attention_down_the_stages(run_notebook):
    nb, _ = run_notebook("08_transformers.ipynb")
    assert re.fullmatch(r"1 compile, [\d.]+ s, \d+ generated kernels\n", _stdout(_tagged(nb, "whole-model")))
    assert _stdout(_tagged(nb, "sdpa-ops")) == (
        "capture  : ['torch._C._nn.scaled_dot_product_attention']\n"
        "decompose: ['torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default'] x [3]\n"
    )
    extern = _stdout(_tagged(nb, "sdpa-extern"))
    assert extern.startswith("3 extern attention calls in the wrapper, e.g.\n  buf")
    assert "= torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(" in extern
    assert _stdout(_tagged(nb, "sdpa-math")) == (
        "default: {'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default': 1}\n"
        "MATH   : {'torch.ops.aten.bmm.default': 2, 'torch.ops.aten._safe_softmax.default': 1}\n"
    )
    gpu = _stdout(_tagged(nb, "gpu-sdpa"))
    if not torch.cuda.is_available():  # the shipped H100 recording, not a live run
        assert gpu == (
            "cuda torch 2.11.0+cu130\n"
            "0/0 ['torch.ops.aten._scaled_dot_product_cudnn_attention.default']\n"
            "16 Triton kernels generated\n"
        )
    else:
        assert gpu.startswith("cuda torch ") and "scaled_dot_product" in gpu


@pytest.mark.slow
def test_08_compiles_one_block_for_all_layers(run_notebook):
    nb, _ = run_notebook("08_transformers.ipynb")
    regional = _stdout(_tagged(nb, "regional")).splitlines()
    assert regional[0] == "frame 'forward': compiled 1 time(s) for 3 blocks" and len(regional) == 2
    assert re.fullmatch(r"compile time: whole model [\d.]+ s, regional [\d.]+ s", regional[1])
    # the answer: 32 tokens recompile once (Block.forward, for all blocks); 48 reuse it
    model = _cell(nb, "class Block(nn.Module):")
    line = _line_of(model, "B, T, C = x.shape") - 1  # Block.forward's def line
    reason = "0/0: tensor 'x' size mismatch at index 1. expected 16, actual 32"
    answer = _stdout(_tagged(nb, "answer"))
    sym = re.search(r"\(s(\d+)\); later calls reuse it", answer)
    assert sym is not None, answer
    s = f"s{sym.group(1)}"
    assert answer == (
        "1 new compile(s)\n"
        f"forward  Cell In[{model.execution_count}], line {line}\n"
        f"  [0/1] ok: {reason}\n\n"
        f"[0/1] forward: guards of [0/0] failed\n  reason: {reason}\n"
        f"  compiled with dynamic x.size()[1] ({s}); later calls reuse it\n\n"
        f"Dynamic dimensions:\n  [0/1] {s} = x.size()[1] in [2, int_oo] (seen 32)\n\n"
    )


# ---- 09: distributed ------------------------------------------------------------------------


@pytest.mark.slow
def test_09_finds_the_planted_divergence(run_notebook):
    nb, work = run_notebook("09_distributed.ipynb")
    assert _stdout(_tagged(nb, "run")).splitlines() == [
        "done: DDP, 2 steps, world size 2",
        "['run.rank0.json', 'run.rank1.json']",
    ]
    ranks = _stdout(_tagged(nb, "ranks"))
    assert "Where the ranks diverge:" in ranks
    assert (
        "rank 1 recompiled [4/1] — 4/0: tensor 'x' size mismatch at index 0. expected 8, actual 6 — rank 0 did not"
        in ranks
    )
    assert _stdout(_tagged(nb, "splits")).startswith("[4/0] on rank 0: submod_0, submod_1\n")
    assert _stdout(_tagged(nb, "diff")).startswith("no differences")
    gpu = _stdout(_tagged(nb, "gpu"))
    assert "rank 1 recompiled [4/1]" in gpu and "cuda" in gpu
    assert _stdout(_tagged(nb, "answer")).splitlines() == [
        "divergence: none",
        "graphs per rank: [3, 3]",
        "DDP splits: 0",
    ]


# ---- 10: torch.export and AOTInductor ------------------------------------------------------


@pytest.mark.slow
def test_10_names_the_export_pipeline_and_its_kernels(run_notebook):
    nb, work = run_notebook("10_export_and_aot.ipynb")
    assert _stdout(_tagged(nb, "summary")) == (
        "[aoti/0] export → AOTInductor, 1 graph, 2 kernels (cpp); dynamic dims: x.size()[0] in [2, 64]\n"
        "dynamic dims: [('s77', 'x.size()[0]', '[2, 64]')]\n"
    )
    assert _stdout(_tagged(nb, "specs")) == (
        "inputs:\n"
        "  PARAMETER  p_fc_weight = fc.weight: float32 [4, 4]\n"
        "  PARAMETER  p_fc_bias = fc.bias: float32 [4]\n"
        "  USER_INPUT x: float32 [s77, 4]\n"
        "outputs: relu (USER_OUTPUT)\n"
        "range constraints: s77 in [2, 64]\n"
    )
    assert _stdout(_tagged(nb, "draft")) == (  # torch's expression and the cell's lines
        "data-dependent · zuf0 > 2.0 · if n > 2:\n"
        "unbacked · zuf0 · n = y.sum().item()\n"
        "guard · zuf0 > 2.0 · if n > 2:\n"
    )
    stages = _stdout(_tagged(nb, "stages")).splitlines()
    assert stages[1].startswith("aoti wrapper · ") and stages[2].startswith("aoti kernels · ")
    assert [ln.split(" · ")[0] for ln in stages[3:]] == ["cpp_fused_0", "cpp_fused_relu_1"]
    assert (work / "net.pt2").is_file()
    assert (
        _stdout(_tagged(nb, "answer"))
        == "True 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 5\n"
    )


# ---- 11: Compiled Autograd and FlexAttention -------------------------------------------------------------------


@pytest.mark.slow
def test_11_shows_each_captured_backward_and_the_flex_kernel(run_notebook):
    nb, _ = run_notebook("11_compiled_autograd_and_flex.ipynb")
    assert _stdout(_tagged(nb, "compiles")).splitlines()[1:] == [
        "[!0/1/0] compiled autograd: backward #1 (!0)",
        "[!1/2/0] compiled autograd: backward #2 (!1)",
    ]
    capture = _stdout(_tagged(nb, "capture")).splitlines()
    assert capture[1:] == ["hooks: ('tensor_pre_hook',)", "AOT backwards inlined: 1"]
    assert "'CompiledFunctionBackward0'" in capture[0]
    assert _stdout(_tagged(nb, "recapture")).startswith(
        "compiled autograd: backward #2 (!1) recaptured after !0\n"
    )
    assert _stdout(_tagged(nb, "answer")) == "new captures: []\n"
    # Part 2, FlexAttention: the mask on CPU, the kernel from the shipped H100 recording
    assert _stdout(_tagged(nb, "mask")).splitlines()[0] == (
        "BlockMask [1, 1, 512, 512], blocks 128×128, sparsity 56.25% (blocks skipped); "
        "per query block: partial [1, 2, 2, 2], full [0, 0, 0, 0]"
    )
    assert "████    " in _stdout(_tagged(nb, "mask")).splitlines()
    assert _stdout(_tagged(nb, "flex")) == (
        "cuda report, torch 2.11.0+cu130\n"
        "  [1/0] flex_attention f32[1, 2, 512, 64], 512×512 in 4×4 blocks of 128×128 → "
        "triton_tem_fused_flex_attention_0; score_mod distance_penalty (make_flex_data.py:31), "
        "mask_mod sliding_window_causal (make_flex_data.py:27)\n"
    )
    mods = _stdout(_tagged(nb, "mods")).splitlines()
    assert mods[:3] == [
        "score_mod: distance_penalty, line 31: return score - 0.01 * (q_idx - kv_idx)",
        "mask_mod: sliding_window_causal, line 27: return (q_idx >= kv_idx) & (q_idx - kv_idx <= WINDOW)",
        "class mask_fn_0(torch.nn.Module):",
    ]


# ---- 15: CUDA graphs and caches ----------------------------------------------------------------


def test_15_reads_cuda_graphs_and_caches(run_notebook):
    nb, _ = run_notebook("15_cuda_graphs_and_caches.ipynb")
    counts = _stdout(_cell(nb, "for c in cg.compiles:"))
    assert "[0/0] step_mutating   skipped  recordings=0" in counts
    assert "[1/0] step_pure       used     recordings=1" in counts
    assert "[3/0] layer           used     recordings=6 sizes=6" in counts
    modes = _stdout(_cell(nb, "for kwargs in"))
    assert "{'mode': 'reduce-overhead'}" in modes and "mode=reduce-overhead" in modes
    assert "CUDA graphs: skipped" in modes and "dynamic=True" in modes
    why = _stdout(_cell(nb, "d = explorer.diff(caches, changed"))
    assert "fx_graph key: inductor_config[max_fusion_size]: 64 → 32" in why
    answer = _stdout(_tagged(nb, "answer"))
    assert "('fx_graph', 'miss')" in answer and "inductor_config[max_autotune]: False → True" in answer


# ---- 14: why isn't it faster ----------------------------------------------------------------


def test_14_reads_the_verdicts_from_the_line_down(run_notebook):
    nb, _ = run_notebook("14_why_not_faster.ipynb")
    costs = _stdout(_tagged(nb, "costs")).splitlines()
    # the cuBLAS GEMM tied to both matmul calls of the wrapper, by torch's provenance
    assert costs[0].endswith("extern_kernels.mm:2, extern_kernels.mm:4")
    assert costs[1].strip() == "nodes mm_default_1, mm_default; modules ('up', 'down')"
    roofline = _stdout(_tagged(nb, "roofline")).splitlines()
    assert roofline[0].endswith("50.3 TFLOP/s  compute-bound, 75% of it")
    verdict = _stdout(_tagged(nb, "verdict")).splitlines()
    assert verdict[0] == (
        "compiled is as fast as eager (×1.00): compile has little left to win here: 95% of the compiled "
        "call is library kernels it does not change; the matmul is fp32 without TF32"
    )
    modes = _stdout(_tagged(nb, "modes"))
    assert (
        "compiled is 1.55× slower than eager: host-bound: 54% of the compiled call is the GPU waiting"
        in modes
    )
    assert _stdout(_tagged(nb, "live")).startswith("2 graphs; a call: 2 graphs, ")
    live = _stdout(_tagged(nb, "live-verdict")).splitlines()
    assert sorted(ln.split()[:3] for ln in live[:2]) == [
        ["extern", "aten::addmm", "[0/0]"],
        ["extern", "aten::addmm", "[1/0]"],
    ]
    assert "graph breaks: 1 site" in "\n".join(live)
    assert _stdout(_tagged(nb, "answer")).splitlines()[1] == (
        "recovered 0.0366 ms, 42% of the default compiled call"
    )


def test_12_takes_one_function_through_dynamo_and_a_repro(run_notebook):
    nb, _ = run_notebook("12_bytecode_and_repros.ipynb")
    fn = _tagged(nb, "fn")
    call = _line_of(fn, 'print("normalized"')
    steps = _stdout(_tagged(nb, "steps")).splitlines()
    assert [re.sub(r"__(compiled_fn|resume_at)_\w+", r"__\1_…", s) for s in steps] == [
        "line 1: graph   __compiled_fn_…",
        f"line {call}: python  CALL 2",
        f"line {call}: resume  __resume_at_…",
    ]
    view = _stdout(_tagged(nb, "view"))
    assert (
        f"continues in {steps[2].split()[-1]}: resume function torch_dynamo_resume_in_normalize_at_{call} (compile 1/0)"
        in view
    )
    resume = [ln for ln in _stdout(_tagged(nb, "resume")).splitlines() if ln.strip()]
    assert resume[0] == f"torch_dynamo_resume_in_normalize_at_{call} -> ('normalize', {call})"
    assert resume[-1].strip() in ("return torch.tanh(y) * 2", "RETURN_VALUE")  # depyf's Python, or dis
    assert "TENSOR_MATCH: check_tensor(L['x'], Tensor" in _stdout(_tagged(nb, "guards"))
    repro = _stdout(_tagged(nb, "repro")).splitlines()
    assert repro[1] == "# Runnable repro of compile [0/0] (forward graph) of wrapper, saved by pt2-explorer."
    assert "    reader.tensor(buf0, (2, 256), dtype=torch.int64, is_leaf=True)  # arg0_1" in repro
    answer = _stdout(_tagged(nb, "answer")).splitlines()
    assert answer[-1] == "('normalize_first', 2)"
    assert [s.split()[2] for s in answer[2:-1]] == ["python", "resume"]  # no graph before the print


# ---- 13: a census ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_13_census_of_five_models_and_two_torch_versions(run_notebook):
    nb, _ = run_notebook("13_census.ipynb")
    out = _stdout(_tagged(nb, "census"))
    assert "5 rows: one graph 1 (20%), graph break 2 (40%), recompiles 1 (20%), error 1 (20%)" in out
    assert "  GB0170 Data-dependent branching: 1 — branchy:eval" in out
    assert "  GB0291 logging.Logger method not supported for non-export cases: 1 — gpt2:eval" in out
    models = _cell(nb, "%%writefile my_models.py")
    line = _line_of(models, "if h.sum() > 0:") - 1  # the file starts below %%writefile
    assert _stdout(_tagged(nb, "select")) == (
        f"branchy:eval GB0170 Data-dependent branching my_models.py:{line} "
        "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html\n"
    )
    assert _stdout(_tagged(nb, "report")).startswith("0/0: self.steps == 0 ")
    # the shipped censuses of the zoo (notebooks/data): torch 2.13 against 2.14.1
    diff = _stdout(_tagged(nb, "diff"))
    assert "47 rows: one graph 45 (96%), graph break 2 (4%)" in diff
    assert (
        "census diff: torch 2.13.0, CPU, aot_eager → torch 2.14.1, CPU, aot_eager\n\n"
        "regressions (1):\n"
        "  switch_transformers:eval: break at output_capturing.py:332: GB4347 Missing tp_iternext → "
        "GB9493 C-implemented special method without VariableTracker model; "
        "break gone: GB0088 Observed exception at output_capturing.py:364\n"
        "fixes (0):\n"
        "  none\n"
    ) in diff
    assert diff.endswith(  # print() after diff_text's own newline
        "unchanged: 46\n"
        "noise: compile times: ×1.14 overall (median of 47 rows), row-to-row noise ×0.33–×3.06 around it\n"
        "noise: speedups: 0 rows in both, too few for a noise band (fixed thresholds only)\n\n"
    )
    # the encoder-decoder rows alone (fixed thresholds): each compile that moved names its head,
    # read from the rows (the files keep no reports)
    heads = _stdout(_tagged(nb, "heads"))
    assert (
        "regressions (2):\n"
        "  m2m_100:eval: compile 3.0 s → 6.3 s (+108%) — most moved: Dynamo tracing 2.34 s → 5.30 s\n"
        "  t5:eval: compile 3.6 s → 6.6 s (+83%) — most moved: Dynamo tracing 3.02 s → 5.39 s\n"
    ) in heads
    assert heads.endswith(
        "t5: {'dynamo': 3.022, 'aot': 0.573, 'unplaced': 0.016} → "
        "{'dynamo': 5.389, 'aot': 1.177, 'unplaced': 0.033}\n"
    )
    assert _stdout(_tagged(nb, "answer")) == "[('decoder', 1), ('moe', 1)]\n"


# ---- 16: from a slow model to its fix -------------------------------------------------------


def test_16_from_the_verdict_to_the_measured_fix(run_notebook):
    nb, _ = run_notebook("16_slow_model_to_fix.ipynb")
    verdict = _stdout(_tagged(nb, "verdict")).splitlines()
    # the live CPU run, timed under the program's no_grad: compiled and eager are close at this
    # size, so the headline either names the two .item() breaks or says the figures are within
    # their spread; either way the breaks come first, measured, with their fix
    speed = r"compiled is (as fast as eager \(×1\.00\)|\d+\.\d\d× (faster|slower) than eager)"
    clear = re.fullmatch(speed + r": graph breaks: 2 sites: \d+% of the compiled call", verdict[0])
    assert clear or re.fullmatch(
        r"no clear winner \(" + speed + r", as timed\): the medians differ by \S+ ms, within the wider IQR "
        r"\(\S+ ms\)(; .+)?; no cause is named from figures this unsteady; to tell, time it again with fewer "
        r"threads than free cores \(OMP_NUM_THREADS=N\), more calls \(--reps N\) on a quiet machine",
        verdict[0],
    ), verdict[0]
    assert re.fullmatch(
        r" +\d+\.\d%  breaks       graph breaks: 2 sites; fix: torch\._dynamo\.config\.capture_scalar_outputs = True",
        verdict[1],
    ), verdict[1]
    fixes = verdict[verdict.index("fixes:") + 1 :]
    assert fixes == (["  torch._dynamo.config.capture_scalar_outputs = True"] if clear else []), fixes
    advice = _stdout(_tagged(nb, "advise")).splitlines()
    assert advice[1].split()[:5] == ["#", "fix", "graphs", "breaks", "recompiles"]
    rows = {ln.split()[1]: ln.split() for ln in advice[2:4]}  # after the rank
    assert rows["capture_scalar_outputs"][2:5] == ["1", "0", "0"]  # one graph, no break, no recompile
    assert rows["baseline"][2:5] == ["3", "2", "0"]
    assert "  outputs:   yes: 1 tensor, " in "\n".join(advice)
    assert _stdout(_tagged(nb, "gpu")).splitlines() == [
        "item        graphs a call 3, breaks 2: compiled is 1.60× slower than eager: graph breaks: 2 sites: "
        "34% of the compiled call (named before host-bound: the GPU waits for the host, 59%: causes are named "
        "in a fixed order, fallback, backend, graph breaks, recompiles, CUDA-graph skips, host↔device copies, "
        "then the largest part)",
        "item-fixed  graphs a call 1, breaks 0: no clear winner (compiled is 1.10× faster than eager, as timed): "
        "the medians differ by 0.0311 ms, within the wider IQR (0.0335 ms); no cause is named from figures this "
        "unsteady; to tell, time it again with more calls (--reps N) on a quiet machine",
    ]
    assert _stdout(_tagged(nb, "answer")) == (
        'launch: 88% of the call; fix: torch.compile(model, mode="reduce-overhead")  # CUDA graphs\n'
    )


def test_17_names_the_first_diverging_module_and_kernel_on_cpu_and_gpu(run_notebook):
    nb, _ = run_notebook("17_why_outputs_differ.ipynb")
    cpu = _stdout(_cell(nb, "bf16 = compiler.numerics(")).splitlines()
    assert cpu[0] == "Net under torch.no_grad(), model.eval(): compiled diverges from eager (compiles [0/0])"
    assert "first module to diverge: blocks.0" in cpu
    # on the CPU the C++ kernel that fuses the first residual add into the second LayerNorm,
    # read from the wrapper's kernel calls, marked among the module's kernels
    (first,) = [x for x in cpu if x.startswith("first kernel to diverge")]
    assert re.fullmatch(
        r"first kernel to diverge \(measured, the wrapper's kernel calls\): "
        r"cpp_fused_add_native_layer_norm_view_1: max abs \S+",
        first,
    )
    marked = [x for x in cpu if x.endswith("← first to diverge") and x.startswith("  [0/0] ")]
    assert [x.split(":")[0] for x in marked] == ["  [0/0] cpp_fused_add_native_layer_norm_view_1"]
    assert "fix: torch._inductor.config.emulate_precision_casts = True" in cpu
    assert (
        _stdout(_cell(nb, "fixed = torch.compile(model)(x)")).splitlines()[0]
        == "max abs, fixed against eager: 0.0"
    )
    # the H200 recording: the Triton kernel of the same fusion, measured through DebugMode
    gpu = _stdout(_cell(nb, 'compiler.load("data/h200-numerics-bf16.json.gz")')).splitlines()
    assert (
        "first kernel to diverge (measured, DebugMode): triton_per_fused_add_native_layer_norm_view_1: max abs 0.0156"
        in gpu
    )
    bug = _stdout(_cell(nb, "bug = compiler.numerics(")).splitlines()
    assert bug[0] == (
        "an Inductor pass or lowering | torch's bisector: inductor - lowerings, application 0 "
        "(Inductor's lowering of relu)"
    )


# ---- 18: why it takes so long to compile -------------------------------------------------------

_HEAD_ROW = r"  (?P<head>[A-Za-z' ]+?) +(?P<s>\d+\.\d{3}) s +(?P<share>\d+\.\d)%"


def _heads(text: str) -> tuple[float, dict[str, float]]:
    """The Compile time view's first table: the total, and each head's seconds."""
    first, header, *rows = text.splitlines()
    total = re.fullmatch(r"Compile time by head: (\d+\.\d{3}) s over 1 compile", first)
    assert total, first
    assert re.fullmatch(r"  head +seconds +share", header), header
    heads = {}
    for row in rows:
        m = re.fullmatch(_HEAD_ROW, row)
        assert m, row
        heads[m["head"]] = float(m["s"])
    return float(total[1]), heads


@pytest.mark.slow
@pytest.mark.corpus
def test_18_regional_compilation_and_a_warm_start_measured(run_notebook):
    """A 12-layer GPT-2 compiled whole, then with its block a nested compile region, each from
    an empty cache: where the time goes under the heads (they add up to the total), the one
    block region called twelve times, compile time and steady state side by side with the
    heads that grow with the graph, the outputs as eager's; then the portable cache artifacts
    loaded into an empty cache: both of torch's caches hit. The figures are the recordings'
    (compiler.analysis.program_time), the counts Dynamo's graphs' and Inductor's kernels'."""
    nb, _ = run_notebook("18_slow_compile.ipynb")
    total, heads = _heads(_stdout(_tagged(nb, "whole")).rstrip("\n"))
    order = [
        "Dynamo tracing", "AOTAutograd", "Inductor passes", "lowering to Inductor's IR", "scheduling and fusion",
        "codegen", "kernel compiles", "autotuning", "cache lookups", "waiting on compile workers", "unplaced",
    ]  # fmt: skip
    assert [h for h in order if h in heads] == list(heads)  # the pipeline's order, a head per row
    assert {"Dynamo tracing", "AOTAutograd", "codegen", "unplaced"} <= set(heads)
    assert abs(sum(heads.values()) - total) <= 0.001 * len(heads)  # every second placed, once
    lines = _stdout(_tagged(nb, "regional")).splitlines()
    assert lines[:2] == [
        "Dynamo's graph calls the block's region 12 times",
        "             compile s  graph nodes  kernels  steady state",
    ]
    speed = r"\d+\.\d{3} ms: compiled is (as fast as eager \(×1\.00\)|\d+\.\d\d× (faster|slower) than eager)"
    # a third of the graph; the identical blocks' kernels compiled once either way (Inductor makes a
    # kernel whose source it has made already once): 10 distinct kernels whole, 7 with the region
    whole = re.fullmatch(r"whole model +(\d+\.\d\d) +715 +10  " + speed, lines[2])
    regional = re.fullmatch(r"regional +(\d+\.\d\d) +223 +7  " + speed, lines[3])
    assert whole and regional, lines
    assert abs(float(whole[1]) - total) <= 0.0051  # one figure: the view's to 3 places, this to 2
    assert lines[4:7] == ["outputs as eager's: True True", "", "head        whole model  regional"]
    side = [re.fullmatch(r"(\w+) +(\d+\.\d\d) s +(\d+\.\d\d) s", x) for x in lines[7:]]
    assert all(side), lines[7:]
    by_head = {m[1]: (float(m[2]), float(m[3])) for m in side}
    # the heads that grow with the graph, in the pipeline's order; none of the region's more
    # than a half of the whole model's (measured: a fifth to a third)
    grows = ["aot", "passes", "lowering", "fusion", "codegen"]
    assert [h for h in by_head if h in grows] == grows
    assert all(by_head[h][1] < by_head[h][0] / 2 for h in grows), by_head
    warm = _stdout(_tagged(nb, "artifacts")).splitlines()
    # the tiny warm-up's, the whole model's and the regional one's
    assert warm[0] == "saved: {'aot_autograd': 3, 'inductor': 3}"
    m = re.fullmatch(
        r"warm start: (\d+\.\d\d) s \(cold: (\d+\.\d\d) s\); cache hits: aotautograd, fx_graph", warm[1]
    )
    assert m and m[2] == regional[1], warm[1]
    assert warm[2] == "outputs as eager's: True"
    warm_total, warm_heads = _heads("\n".join(warm[3:]))
    assert abs(float(m[1]) - warm_total) <= 0.0051
    # a cache hit: Inductor's passes, lowering and fusion do not run again
    assert not {"Inductor passes", "lowering to Inductor's IR", "scheduling and fusion"} & set(warm_heads)
    answer = _stdout(_tagged(nb, "answer"))
    assert re.fullmatch(r"C\+\+ kernels built again: \d+%; Dynamo tracing: \d+%\n", answer), answer
