"""explorer.diff: what is comparable, the normalisation rules, the summary and sections of real
compiles (a shape recompile, a relu → gelu edit, the H100 fixture), the payload, the HTML
fallback (escaping, collapsing, marks), caps and bad input."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import compiler
import explorer
from compiler._viewer import kernel_base
from compiler.analysis import normalize
from explorer.diffs._view import MIME, fit_payload

GPU_REPORT = Path(__file__).parent / "fixtures" / "reports" / "h100-torch211-gpu-block.json.gz"


def scale(x):
    return torch.relu(x * 2) + 1


def make(act):
    def model(x):  # one code object for both activations: the two reports' frames match
        return act(x * 2) + 1

    return model


@pytest.fixture(scope="module")
def recompiled() -> compiler.Report:
    """aot_eager, a new shape: compile 0/1 recompiles 0/0 (its size guard failed)."""
    torch._dynamo.reset()
    with compiler.recording() as rec:
        f = torch.compile(scale, backend="aot_eager")
        f(torch.randn(4, 4))
        f(torch.randn(6, 4))
    torch._dynamo.reset()
    return rec.report


@pytest.fixture(scope="module")
def edited() -> tuple[compiler.Report, compiler.Report]:
    """Inductor on CPU, the same function before and after an edit: relu → gelu."""
    reports = []
    for act in (torch.relu, F.gelu):
        torch._dynamo.reset()
        with compiler.recording(fusion_ir=True) as rec:
            torch.compile(make(act))(torch.randn(8, 8))
        reports.append(rec.report)
    torch._dynamo.reset()
    return reports[0], reports[1]


@pytest.fixture(scope="module")
def gpu() -> compiler.Report:
    return compiler.load(GPU_REPORT)


def _section(d, id):
    (s,) = [s for s in d.sections if s.id == id]
    return s


# ---- normalisation: one test per rule --------------------------------------------------------

RULE_CASES = [
    (
        "cache paths",
        "# kernel path: /tmp/torchinductor_root/3z/c3zq4ph2x2ikta22hxy7nbxig4pa7guxvzc23kt4ylydvng4uier.py",
        "# kernel path: <inductor-cache>/<hash>.py",
    ),
    (
        "cache paths",
        "os.environ['TORCHINDUCTOR_CACHE_DIR'] = '/tmp/torchinductor_root'",
        "os.environ['TORCHINDUCTOR_CACHE_DIR'] = '<inductor-cache>'",
    ),
    (
        "cache paths",
        "path = /data/cache/ab/cabcdefghijklmnopqrstuvwxyz0123456789abcdefghij.cpp",
        "path = <inductor-cache>/<hash>.cpp",
    ),
    (
        "hashes",
        "'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336'",
        "'backend_hash': '<hash>'",
    ),
    (
        "object ids",
        "ID_MATCH: ___check_obj_id(G['torch'], 140180984574368), type=<class 'module'>",
        "ID_MATCH: ___check_obj_id(G['torch'], <id>), type=<class 'module'>",
    ),
    (
        "object ids",
        'type=<code object layer_norm at 0x7f46ea1c52f0, file "functional.py", line 2914>',
        'type=<code object layer_norm at <id>, file "functional.py", line 2914>',
    ),
    ("object ids", " # graph id: 139932824520560", " # graph id: <id>"),
    ("AOT ids", "# AOT ID: ['3_forward']", "# AOT ID: ['<n>_forward']"),
    (
        "notebook cells",
        'File "/tmp/ipykernel_21655/1892539066.py", line 3 in Cell In[12]  # return x  # mp/ipykernel_2/3.py:6',
        'File "<ipykernel cell>", line 3 in Cell In[n]  # return x  # <ipykernel cell>:6',
    ),
    ("timings", "Guard latency = 82.59 us", "Guard latency = <t> us"),
    (
        "timings",
        "{'compile_time_us': 423642, 'only_config': []}",
        "{'compile_time_us': <t>, 'only_config': []}",
    ),
    ("timestamps", "recorded 2026-11-22T10:31:02.512Z on", "recorded <time> on"),
    (
        "kernel names",
        "triton_poi_fused_add_3.run(buf); cpp_fused_mul_relu_0(x)",
        "triton_poi_fused_add_N.run(buf); cpp_fused_mul_relu_N(x)",
    ),
    (
        "kernel names",
        "triton_poi_fused_mul_0 triton_poi_fused_mul_1 triton_poi_fused_mul_0 triton_poi_fused_atan2_4",
        "triton_poi_fused_mul_N triton_poi_fused_mul_N2 triton_poi_fused_mul_N triton_poi_fused_atan2_N",
    ),
    (
        "buffer numbers",
        "buf3 = empty(); buf12 = buf3; del buf3  # op7_op9, op9",
        "buf0 = empty(); buf1 = buf0; del buf0  # op0_op1, op1",
    ),
    (
        "FX node names",
        "class <lambda>(torch.nn.Module):\n    def forward(self, arg0_1):\n"
        '        mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 2)\n'
        '        mul_5: "f32[4]" = torch.ops.aten.mul.Tensor(mul, 3);  mul = None\n'
        "        sum_3 = torch.ops.aten.sum.default(mul_5);  mul_5 = None\n"
        "        mul_12 = torch.ops.aten.mul.Tensor(sum_3, arg0_1)\n        return (mul_12,)",
        "class <lambda>(torch.nn.Module):\n    def forward(self, arg0_1):\n"
        '        mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 2)\n'
        '        mul_1: "f32[4]" = torch.ops.aten.mul.Tensor(mul, 3);  mul = None\n'
        "        sum_1 = torch.ops.aten.sum.default(mul_1);  mul_1 = None\n"
        "        mul_2 = torch.ops.aten.mul.Tensor(sum_1, arg0_1)\n        return (mul_2,)",
    ),
]


@pytest.mark.parametrize(
    "rule, text, expected", RULE_CASES, ids=[f"{r}-{i}" for i, (r, *_) in enumerate(RULE_CASES)]
)
def test_normalisation_rule(rule, text, expected):
    assert normalize(text) == (expected, [rule])


@pytest.mark.parametrize(
    "text",
    [
        "mul_2 = torch.ops.aten.mul.Tensor(mul, 0.7071067811865476)",  # a float is not an id
        "xnumel = 2147483647",
        "tmp3 = tmp0 * tmp1; x0 = xindex",
        "s77 <= 9223372036854775807",
        "x * 123456789012 + 0xFFFFFFFFF",  # long numbers in code are values, not ids
        "buf = torch.empty_strided((1099511627776,), (1,))",
        "def f(x): return x.view(4, 4)  # file.py:12",
    ],
)
def test_normalisation_leaves_code_alone(text):
    assert normalize(text) == (text, [])


def _static_dynamic(x, w):
    z = (x * 2 @ w) * 3
    return (z * z).sum(-1) * x.shape[0]


def test_fx_renames_are_not_changes_static_vs_dynamic():
    """torch numbers a dynamic compile's AOT nodes further on (``mul_5`` where the static one
    has ``mul_1``: the size arithmetic took the numbers between); only the shapes differ."""
    from _torch_trace import RawTrace

    graphs, reports = [], []
    for dynamic in (False, True):
        torch._dynamo.reset()
        with RawTrace() as raw, compiler.recording() as rec:
            torch.compile(_static_dynamic, backend="aot_eager", dynamic=dynamic)(
                torch.randn(4, 8), torch.randn(8, 8)
            )
        graphs.append(next(p for m, p in raw.records if "aot_inference_graph" in m))
        reports.append(rec.report)
    torch._dynamo.reset()
    names = [re.findall(r"^\s+(mul\w*): ", g, re.M) for g in graphs]
    assert names == [["mul", "mul_1", "mul_2", "mul_3"], ["mul", "mul_5", "mul_8", "mul_12"]]
    d = explorer.diff(reports[0].compiles[0], reports[1].compiles[0], labels=("static", "dynamic"))
    (aot,) = [s for s in d.sections if s.title == "AOT inference graph"]
    assert "FX node names" in aot.note
    # the changed lines are the ones whose shapes (or inputs) differ: the output line is not
    changed = [ln for ln in aot.b.splitlines() if ln not in aot.a.splitlines()]
    assert [ln for ln in changed if "s77" not in ln and "s27" not in ln and "arg" not in ln] == []
    assert "            mul_3,  # PlainAOTOutput(idx=0)" in aot.b.splitlines()
    assert aot.changes == "8 lines changed, 2 added"  # 6 shapes, 2 inputs renumbered; 2 Sym inputs
    assert d.to_payload()["sections"][[s.id for s in d.sections].index(aot.id)]["changes"] == aot.changes


def test_kernel_base():
    assert kernel_base("triton_poi_fused_add_3") == "triton_poi_fused_add"
    assert kernel_base("cpp_fused_add_mul_relu_0") == "cpp_fused_add_mul_relu"
    assert kernel_base("extern_kernels.mm") == "extern_kernels.mm"


# ---- two compiles of one frame ---------------------------------------------------------------


def test_recompile_marks_the_failing_guard(recompiled):
    r = recompiled
    (rc,) = r.recompiles
    assert (rc.compile_id, rc.failed_entry) == ("0/1", "0/0")
    raw = r.compile("0/0").stages.capture.guards.strip("\n").splitlines()
    (line,) = [n for n, text in enumerate(raw, start=1) if text.rstrip().endswith(rc.failing_guard)]

    d = explorer.diff_compiles(r, "0/0", "0/1")
    guards = _section(d, "guards")
    assert guards.changed
    assert guards.a_marks == [line] and guards.b_marks == []
    assert guards.a.splitlines()[line - 1].rstrip().endswith(rc.failing_guard)
    assert "marked in 0/0: the guard whose failure recompiled 0/1" in guards.note
    assert (d.title, d.a_label, d.b_label) == ("compile 0/0 vs 0/1", "0/0", "0/1")
    shown = rc.failing_guard if len(rc.failing_guard) <= 240 else rc.failing_guard[:239] + "…"
    assert rc.reasons[0].startswith("0/0: tensor 'x' size mismatch at index 0")
    assert d.summary == [
        f"failing guard (0/0 line {line}): {shown}",
        f"0/1 recompiled because {rc.reasons[0]}",
        "guards: 1 changed, 1 added",
        "Dynamo graph: 4 lines changed",
        "AOT inference graph: 5 lines changed, 1 added",
    ]
    assert [s.id for s in d.sections] == ["guards", "capture", "autograd:inference"]
    # the same two compiles without the report: nothing to mark
    plain = explorer.diff(r.compile("0/0"), r.compile("0/1"))
    assert _section(plain, "guards").a_marks == []
    # the mark is highlighted in the HTML, and named in the text
    assert 'class="del mark"' in d.html()
    assert f"   ! A line {line}: " in str(d)


def test_gpu_recompile(gpu):
    d = explorer.diff_compiles(gpu, "0/0", "0/1")
    assert _section(d, "guards").a_marks == [8]
    assert (
        d.summary[1]
        == "0/1 recompiled because 0/0: tensor 'x' size mismatch at index 0. expected 32, actual 48"
    )
    assert d.summary[2:] == [
        "guards: 1 changed, 4 added",
        "Dynamo graph: 4 lines changed",
        "AOT forward graph: 23 lines changed, 2 added",
        "AOT backward graph: 26 lines changed, 2 added",
        "Post-grad forward graph: 19 lines changed",
        "Post-grad backward graph: 19 lines changed",
        "IR before fusion: 106 lines changed, 15 added, 3 removed",
        "IR after fusion: 126 lines changed, 15 added, 3 removed",
        "Output code (forward): 80 lines changed, 9 added, 3 removed",
        "Output code (backward): 122 lines changed, 20 added, 12 removed",
        "kernels: 6 changed (triton_per_fused_native_layer_norm_0, triton_poi_fused_gelu_1, "
        "triton_red_fused_mean_2, triton_per_fused_gt_mean_3, "
        "triton_per_fused_gelu_gelu_backward_sum_0 → triton_red_fused_gelu_gelu_backward_sum_0, … 1 more)",
    ]
    kernels = [s for s in d.sections if ":" in s.id and s.id.startswith("kernel:")]
    assert [(s.id, s.language) for s in kernels][:2] == [
        ("kernel:forward:0", "triton"),
        ("kernel:forward:1", "triton"),
    ]
    # the compile against itself: nothing changed
    same = explorer.diff_compiles(gpu, "0/0", "0/0")
    assert not same.changed and same.summary == ["no differences after normalisation"]


def _renumbered(c: compiler.types.Compile) -> compiler.types.Compile:
    """``c`` as another run would write it: kernel counters, buffers, cache paths, AOT ids."""

    def edit(code: str) -> str:
        code = code.replace("triton_poi_fused_gelu_1", "triton_poi_fused_gelu_7")
        code = code.replace("triton_red_fused_mean_2", "triton_red_fused_mean_5")
        code = re.sub(r"\bbuf(\d+)\b", lambda m: f"buf{int(m.group(1)) + 10}", code)
        code = code.replace("/tmp/torchinductor_root/3z/c3zq4ph2", "/tmp/torchinductor_ci/qq/cqq00000")
        return code.replace("# AOT ID: ['0_", "# AOT ID: ['7_")

    cg = c.stages.codegen
    out = tuple(
        dataclasses.replace(o, code=edit(o.code), path="/tmp/torchinductor_ci/x/y.py") for o in cg.output_code
    )
    return dataclasses.replace(
        c, id="0/9", stages=dataclasses.replace(c.stages, codegen=dataclasses.replace(cg, output_code=out))
    )


def test_kernels_renamed_only_by_number_are_not_changed(gpu):
    c = gpu.compile("0/0")
    d = explorer.diff(c, _renumbered(c))
    assert not d.changed
    assert d.summary == ["no differences after normalisation"]
    gelu = [s for s in d.sections if s.title.startswith("Kernel triton_poi_fused_gelu")]
    assert [s.title for s in gelu] == ["Kernel triton_poi_fused_gelu_1 → triton_poi_fused_gelu_7 (forward)"]
    assert not gelu[0].changed
    code = _section(d, "codegen:forward")
    assert code.note.startswith("normalised (cache paths, hashes, AOT ids, kernel names, buffer numbers)")
    assert "triton_poi_fused_gelu_N" in code.a and "triton_poi_fused_gelu_7" not in code.b


# ---- two reports: a code edit ------------------------------------------------------------------


@pytest.mark.slow
def test_report_diff_relu_to_gelu(edited):
    before, after = edited
    d = explorer.diff(before, after, labels=("relu", "gelu"))
    assert d.summary == [
        "0/0: Dynamo graph: 2 lines changed; Post-grad inference graph: 3 lines changed, 4 added",
        "kernels: 1 changed (0/0 cpp_fused_add_mul_relu_0 → cpp_fused_add_gelu_mul_0)",
        "Dynamo ops: torch.relu −1, torch._C._nn.gelu +1",
        "ATen ops: aten.relu.default −1, aten.add.Tensor +1, aten.erf.default +1, aten.mul.Tensor +3",
    ]
    assert [(s.id, s.changed) for s in d.sections] == [
        ("overview", False),
        ("ops:dynamo", True),
        ("ops:aten", True),
        ("0/0:guards", False),
        ("0/0:capture", True),
        ("0/0:decompose:inference", True),
        ("0/0:kernel:inference:0", True),
        ("compile-time", True),  # two runs' times: the heads side by side
    ]
    kernel = _section(d, "0/0:kernel:inference:0")
    assert kernel.title == "0/0 · Kernel cpp_fused_add_mul_relu_0 → cpp_fused_add_gelu_mul_0"
    assert kernel.language == "cpp"
    assert d.title == "relu vs gelu"
    # the same report twice: no change at all
    assert explorer.diff(before, before).summary == ["no differences after normalisation"]


@pytest.mark.slow
def test_compare_stages(edited, recompiled):
    before, _ = edited
    d = explorer.compare_stages(before, "0/0", "capture", "decompose")
    assert d.title == "compile 0/0: capture vs decompose"
    assert (d.a_label, d.b_label) == ("capture", "decompose")
    assert d.summary == [
        "Dynamo graph vs Post-grad inference graph: 5 lines changed, 2 removed",
        "ops: operator.add −1, operator.mul −1, torch.relu −1, "
        "aten.add.Tensor +1, aten.mul.Tensor +1, aten.relu.default +1",
    ]
    fuse = explorer.compare_stages(before, "0/0", "fuse:pre", "fuse:post")
    assert fuse.sections[0].language == "text"
    assert fuse.sections[0].a.startswith("BEFORE FUSION") and fuse.sections[0].b.startswith("AFTER FUSION")
    code = explorer.compare_stages(before, "0/0", "codegen", "codegen")
    assert not code.changed
    with pytest.raises(ValueError, match=r"compile 0/0 has no decompose: it did not run"):
        explorer.compare_stages(recompiled, "0/0", "capture", "decompose")  # aot_eager: no Inductor
    with pytest.raises(
        ValueError, match=r"unknown stage 'lowering'; choose one of: capture, guards, autograd"
    ):
        explorer.compare_stages(before, "0/0", "capture", "lowering")


def test_stage_and_graph_diffs(recompiled, gpu):
    a, b = recompiled.compile("0/0"), recompiled.compile("0/1")
    g = explorer.diff(a.stages.capture.graph, b.stages.capture.graph)
    assert g.summary == ["Graph: 4 lines changed"]
    assert g.title == "graph: A vs B"
    cap = explorer.diff(a.stages.capture, b.stages.capture)
    assert [s.id for s in cap.sections] == ["guards", "capture"]
    k0, k1 = gpu.kernels_of("0/0")[1], gpu.kernels_of("0/1")[1]
    k = explorer.diff(k0, k1)
    assert (k.a_label, k.b_label, k.sections[0].language) == (
        "A triton_poi_fused_gelu_1",
        "B triton_poi_fused_gelu_1",
        "triton",
    )
    cg = explorer.diff(gpu.compile("0/0").stages.codegen, gpu.compile("0/1").stages.codegen)
    assert cg.summary[-1].startswith("kernels: 6 changed (triton_per_fused_native_layer_norm_0,")


# ---- what cannot be compared ---------------------------------------------------------------------


def test_not_comparable(recompiled, gpu):
    c = recompiled.compile("0/0")
    with pytest.raises(TypeError) as e:
        explorer.diff(recompiled, c)
    assert str(e.value) == (
        "cannot diff a Report with a Compile: a report holds many compiles: take one out with "
        "report.compile('0/0') and compare two compiles. Comparable: two Reports, two Compiles, two "
        "stages of one kind (Capture, Autograd, Decompose, Fuse or Codegen), two Graphs, two Kernels, "
        "two OutputCodes, or two texts (str or bytes)."
    )
    with pytest.raises(
        TypeError, match=r"^cannot diff a Graph with a Kernel: a Graph and a Kernel hold different things"
    ):
        explorer.diff(c.stages.capture.graph, gpu.kernels[0])
    with pytest.raises(
        TypeError, match=r"^cannot diff an int with an int: an int is not something a report holds"
    ):
        explorer.diff(1, 2)
    with pytest.raises(
        TypeError, match=r"they are different stages; to compare two stages of one compile use compare_stages"
    ):
        explorer.diff(c.stages.capture, c.stages.autograd)


# ---- payload, HTML, text -------------------------------------------------------------------------


def test_payload_and_mimebundle():
    d = explorer.diff("a\nb\nc\n", "a\nB\nc\n", labels=("old", "new"))
    payload = d.to_payload()
    assert payload == {
        "schema": 1,
        "title": "text: old vs new",
        "a_label": "old",
        "b_label": "new",
        "summary": ["Text: 1 line changed"],
        "sections": [
            {
                "id": "text",
                "title": "Text",
                "language": "text",
                "a": "a\nb\nc\n",
                "b": "a\nB\nc\n",
                "a_marks": [],
                "b_marks": [],
                "changed": True,
                "note": None,
                "changes": "1 line changed",  # counted once here; the extension shows it as is
            }
        ],
    }
    json.dumps(payload)
    bundle = d._repr_mimebundle_()
    assert (
        set(bundle) == {MIME, "text/html", "text/plain"} and MIME == "application/vnd.pt2-explorer.diff+json"
    )
    assert bundle[MIME] == payload and bundle["text/html"] == d.html() and bundle["text/plain"] == str(d)
    assert set(d._repr_mimebundle_(include=[MIME])) == {MIME}
    assert set(d._repr_mimebundle_(exclude=["text/html"])) == {MIME, "text/plain"}
    assert str(d) == (
        "text: old vs new\n--- A: old\n+++ B: new\n  Text: 1 line changed\n== Text (1 line changed)\n"
        "--- A: old\n+++ B: new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    )


def test_html_collapses_unchanged_runs():
    a = [f"line {i}" for i in range(1, 51)]
    b = list(a)
    b[24] = "line twenty-five"
    html = explorer.diff("\n".join(a), "\n".join(b), context=3).html()
    # 24 equal lines before the change: 3 kept; 25 after: 3 kept
    assert "… 21 unchanged lines …" in html and "… 22 unchanged lines …" in html
    assert '<td class="n">22</td><td class="">line 22</td>' in html
    assert "line 21<" not in html
    assert '<td class="del">line <span class="x">25</span></td>' in html
    assert '<td class="ins">line <span class="x">twenty-five</span></td>' in html
    assert "<script" not in html and "http" not in html


def test_html_escapes_everything(recompiled):
    bad = "<script>alert('pwned')</script>"
    c = recompiled.compile("0/0")
    graph = dataclasses.replace(c.stages.capture.graph, code=c.stages.capture.graph.code + f"\n# {bad}\n")
    hostile = dataclasses.replace(
        c,
        name=bad,
        stages=dataclasses.replace(c.stages, capture=dataclasses.replace(c.stages.capture, graph=graph)),
    )
    report = dataclasses.replace(
        recompiled,
        frames=tuple(dataclasses.replace(f, name=bad) for f in recompiled.frames),
        compiles=(hostile, *recompiled.compiles[1:]),
    )
    for d in (
        explorer.diff(recompiled, report, labels=(bad, "b")),
        explorer.diff(bad, bad + "!", labels=(bad, bad)),
    ):
        html = d.html()
        assert "<script" not in html.lower()
        assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in html


# ---- caps and bad input ------------------------------------------------------------------------


def test_max_lines_cap():
    a = "\n".join(f"a{i}" for i in range(100))
    d = explorer.diff(a, "x\ny", max_lines=10)
    s = d.sections[0]
    assert s.a == "\n".join(f"a{i}" for i in range(10)) and s.b == "x\ny"
    assert s.note == "cut to 10 lines of 100 (from the top); counts are of the whole texts"
    assert s.changed and d.summary == ["Text: 2 lines changed, 98 removed"]


def test_a_cut_text_shows_its_first_change_and_counts_them_all():
    a = "\n".join(f"line {i}" for i in range(200_000))
    lines = a.split("\n")
    lines[150_000] = "CHANGED"
    for i in range(160_000, 200_000, 1000):
        lines[i] = f"also {i}"
    d = explorer.diff(a, "\n".join(lines))
    s = d.sections[0]
    assert d.summary == ["Text: 41 lines changed"]  # of the whole texts, not of what is shown
    shown_a, shown_b = s.a.splitlines(), s.b.splitlines()
    assert shown_a[0] == shown_b[0] == "… 149,980 lines before, the same on both sides …"
    assert (shown_a[21], shown_b[21]) == ("line 150000", "CHANGED") and len(shown_b) == 5001
    assert s.note == (
        "cut to 5,000 lines of 200,000 (from line 149,981, 20 before the first change); "
        "counts are of the whole texts"
    )
    assert "counts" not in d.to_payload()["sections"][0]


def test_binary_bytes_are_a_hex_dump_and_labels_are_checked():
    d = explorer.diff(bytes(range(20)), bytes(range(1, 21)))
    s = d.sections[0]
    assert (
        s.a.splitlines()[0] == "00000000  00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f  |................|"
    )
    assert s.note == (
        "A: binary data (20 bytes): shown as a hex dump, 16 bytes a line; "
        "B: binary data (20 bytes): shown as a hex dump, 16 bytes a line"
    )
    assert explorer.diff("a\udcffb", "ab").sections[0].a == "a\ufffdb"  # one U+FFFD a surrogate
    with pytest.raises(TypeError, match=r"labels must be two strings, got 1 \(int\)"):
        explorer.diff("a", "b", labels=(1, 2))


ACT = torch.relu


def _uses_act(x):
    return ACT(x) + 1


def test_id_match_recompile_keeps_the_id_that_failed():
    """Two compiles of one process: the only guard that differs is an object id (ID_MATCH on
    a global rebound to another function); it is shown, not normalised away."""
    global ACT
    torch._dynamo.reset()
    f = torch.compile(_uses_act, backend="eager")
    with compiler.recording() as rec:
        f(torch.ones(2))
        ACT = torch.sigmoid
        try:
            f(torch.ones(2))
        finally:
            ACT = torch.relu
    torch._dynamo.reset()
    r = rec.report
    (rc,) = r.recompiles
    assert "ACT" in rc.failing_guard and "___check_obj_id" in rc.failing_guard
    d = explorer.diff_compiles(r, "0/0", "0/1")
    guards = _section(d, "guards")
    (mark,) = guards.a_marks
    failed = guards.a.splitlines()[mark - 1]
    assert f"{id(torch.relu)}" in failed and "<id>" not in failed and guards.changed
    assert f"{id(torch.sigmoid)}" in guards.b
    assert guards.note.endswith("; marked in 0/0: the guard whose failure recompiled 0/1")


def test_payload_byte_cap():
    line = "x" * 999
    a = "\n".join(f"{i} {line}" for i in range(3000))  # 3 MB a side
    d = explorer.diff(a, a.replace("1 x", "1 y"))
    size = len(json.dumps(d.to_payload()))
    assert 1_500_000 < size <= 2_000_000
    s = d.sections[0]
    assert s.changed
    assert re.search(r"A: cut to \d+ of 3000 lines to keep the payload under 2 MB", s.note)
    # fit_payload leaves small payloads alone
    assert fit_payload(d.sections, {"title": "t"}, limit=10**9) is d.sections


def test_bytes_and_nul_input():
    d = explorer.diff(b"caf\xe9\nok\n", b"cafe\nok\n")
    s = d.sections[0]
    assert s.a == "caf\ufffd\nok\n" and s.changed
    assert s.note == "A: not valid UTF-8: undecodable bytes shown as \ufffd"
    d = explorer.diff("a\x00b", "ab")
    assert d.sections[0].a == "a\ufffdb"
    assert d.sections[0].note == "A: binary data: NUL characters shown as \ufffd"
    json.dumps(d.to_payload())
    d.html().encode("utf-8")


def test_exported():
    from explorer.diffs import _diff

    assert {"diff", "diff_compiles", "compare_stages"} <= set(explorer.__all__)
    assert explorer.diff is _diff.diff
    assert explorer.diff_compiles is _diff.diff_compiles
    assert explorer.compare_stages is _diff.compare_stages
