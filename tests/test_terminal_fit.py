"""A terminal that fits: the CLI's text at ``COLUMNS=100`` on a pseudo-terminal, no line wider,
tables wrapped inside their cells (a row never across the next), a figure never split from its
unit, ``--view codegen`` the kernel table by default and one kernel's code with ``--kernel``.

The GPT-2 training step (tests/hf_corpus.py ``gpt2_train``, Inductor on CPU) is recorded once
with torch's own log beside it (TORCH_TRACE): the kernels the codegen view names are those
torch's ``inductor_output_code`` defines."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _corpus_run import env_with_root, record_scenario
from _one_number import check
from _torch_trace import read_log
from rich.cells import cell_len

import compiler
import explorer
from explorer.base._types import CodeBlock
from explorer.base._words import where
from explorer.lower._fit import continued, table_lines, text_width
from explorer.lower._text import block_text

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
COLUMNS = 100


def _env() -> dict[str, str]:
    env = env_with_root()
    env.pop("COLUMNS", None)  # the terminal's size says the width
    return env


def _shown(*args: str) -> str:
    """``pt2-explorer ARGS`` with its stdout on a terminal ``COLUMNS`` wide, without colours."""
    from tests._pty import run_in_pty

    status, out = run_in_pty([sys.executable, "-m", "explorer", *args], COLUMNS, 40, _env())
    assert status == 0, out.decode()[-2000:]
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode()).replace("\r\n", "\n")


def _fits(text: str) -> list[str]:
    lines = text.splitlines()
    assert lines
    wide = [ln for ln in lines if cell_len(ln) > COLUMNS]
    assert not wide, wide[:3]
    return lines


def test_table_wraps_inside_cells_never_a_row_across_lines():
    name = "cpp_fused_" + "add_" * 30 + "0"
    rows = [("forward", name, "303", "a.py:1, b.py:2, transformers/models/bert/modeling_bert.py:335")]
    with text_width(50):
        lines = table_lines(("role", "kernel", "lines", "from"), rows, keep=(2,))
    assert lines[0].split() == ["role", "kernel", "lines", "from"]
    assert all(cell_len(ln) <= 50 for ln in lines)
    # the row's narrow cells on its first line; the kernel's name cut in its middle, its end kept
    col, end = lines[0].index("kernel"), lines[0].index("lines")
    cut = lines[1][col:end].strip()
    assert lines[1].startswith("forward  cpp") and " 303 " in lines[1]
    head, tail = cut.split("…")
    assert name.startswith(head) and name.endswith(tail) and len(tail) > len(head) > 0
    # the places an item a line, each file and line whole: a long one's directories cut
    assert [ln[lines[0].index("from") :] for ln in lines[1:]] == [
        "a.py:1,",
        "b.py:2,",
        "…/modeling_bert.py:335",
    ]
    assert all(ln[:col].strip() == "" for ln in lines[2:])  # continuation lines: the role's column blank
    with text_width(None):  # piped: whole lines, as before
        assert table_lines(("a", "b"), [("x", "y" * 300)]) == ["a  b", "x  " + "y" * 300]


def test_a_code_line_wider_than_the_terminal_goes_on_after_a_mark():
    """Graph code and IR are wide by nature: a line goes on, at its indent, after "↪ ", cut
    after an argument's comma or between words, never inside a place's file and line."""
    code = (
        '    def forward(self, L_input_ids_: "i64[8, 64][64, 1]cuda:0", L_self_modules_wte_weight_: '
        '"f32[2048, 256][256, 1]cuda:0"):'
    )
    assert continued(code, 70) == [
        '    def forward(self, L_input_ids_: "i64[8, 64][64, 1]cuda:0",',
        '    ↪ L_self_modules_wte_weight_: "f32[2048, 256][256, 1]cuda:0"):',
    ]
    where = "        # File: /site-packages/transformers/integrations/sdpa_attention.py:168 in forward, code: x = y"
    assert continued(where, 100) == [
        "        # File: /site-packages/transformers/integrations/sdpa_attention.py:168 in forward,",
        "        ↪ code: x = y",
    ]
    assert continued(where, 70) == [  # the place too long for a line: cut in its directories
        "        # File:",
        "        ↪ /site-packages/transformers/integrations/",
        "        ↪ sdpa_attention.py:168 in forward, code: x = y",
    ]
    assert continued("    x = 1", 60) == ["    x = 1"]
    block = CodeBlock("graph (code)", "python", code)
    with text_width(70):
        assert (
            block_text(block).splitlines()[0]
            == "graph (code) (1 lines; a line wider than the terminal goes on after ↪)"
        )
    assert block_text(block).splitlines() == ["graph (code) (1 lines)", "    " + code]  # piped: whole


def test_census_show_fits_a_terminal():
    path = ROOT / "notebooks" / "data" / "census-cpu-torch213.json"
    from explorer.census._table import load_census

    census = load_census(str(path))
    lines = _fits(_shown("census", "show", str(path)))
    head = next(i for i, ln in enumerate(lines) if ln.startswith("model "))
    starts = [ln.split()[0] for ln in lines[head + 1 :] if ln and not ln.startswith(" ")]
    # each row starts a line with its model (a long name folds inside its cell) and its mode
    for r in census.rows:
        assert any(r.model.startswith(s) for s in starts), r.model
    gpt2 = next(ln for ln in lines if ln.startswith("gpt2 "))
    assert gpt2.split()[1:5] == ["eval", "graph", "break", "2"] and "GB0291" in gpt2
    # the break types named in their own lines below the table, as torch's registry names them
    assert any(ln.startswith("  GB0291 ") and "logging.Logger" in ln for ln in lines)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    """The GPT-2 training step, recorded with ``pt2-explorer record -q --json`` and torch's own
    log of the same run: (report path, the kernels torch's output code defines, per role)."""
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("gpt2fit")
    path = out / "gpt2.json"
    run = record_scenario(
        [sys.executable, "-m", "explorer"], out, "gpt2_train", ["--json", str(path)], _env()
    )
    assert run.returncode == 0, run.stderr
    (log,) = (out / "trace").glob("*.log")
    return path, read_log(str(log))


def _defined(records) -> dict[str, list[str]]:
    """compile id -> the kernels torch's output code (forward and backward) defines."""
    defined: dict[str, list[str]] = {}
    for meta, payload in records:
        if "inductor_output_code" in meta:
            cid = f"{meta.get('frame_id')}/{meta.get('frame_compile_id')}"
            defined.setdefault(cid, []).extend(re.findall(r"^(cpp_fused_\w+) = async_compile", payload, re.M))
    return defined


@pytest.mark.slow
@pytest.mark.corpus
def test_gpt2_step_fits_a_terminal(gpt2):
    path, records = gpt2
    defined = _defined(records)
    report = compiler.load(path)
    summary = _fits(_shown("report", str(path)))
    # "compile time 29.78 s" is one phrase: its figure and unit on one line
    assert any(re.search(r"compile time \d+(\.\d+)? m?s\b", ln) for ln in summary)

    cid = max(defined, key=lambda c: len(defined[c]))  # the forward-and-backward compile
    codegen = _fits(_shown("report", str(path), "--view", "codegen", "--compile", cid))
    assert len(codegen) < 200
    head = next(i for i, ln in enumerate(codegen) if ln.startswith("role "))
    table = codegen[head + 1 : codegen.index("", head)]
    rows = [ln for ln in table if ln.startswith(("forward ", "backward "))]
    assert len(rows) == len(defined[cid]) == len(report.kernels_of(cid))
    # each row's role, name, language and size on its first line: a name too long for its
    # column cut in its middle ("cpp_fus…_view_2"), its start and end those of one kernel
    col, end = codegen[head].index("kernel"), codegen[head].index("language")
    names = []
    for ln in table:
        if ln[:col].strip():
            names.append(ln[col:end].strip())
            assert re.match(r"(forward|backward) +\S+ +cpp +\d+", ln), ln
        else:
            assert not ln[col:end].strip(), ln  # a name takes one line
    named = [
        [k for k in defined[cid] if k.startswith(n.split("…")[0]) and k.endswith(n.split("…")[-1])]
        for n in names
    ]
    assert all(named) and sorted(n for ks in named for n in ks[:1]) == sorted(defined[cid]), (names, named)

    name = defined[cid][0]
    one = _fits(_shown("report", str(path), "--view", "codegen", "--compile", cid, "--kernel", name))
    k = next(k for k in report.kernels_of(cid) if k.name == name)
    body = "\n".join(" ".join(ln.split()) for ln in one)
    assert all(" ".join(ln.split()) in body for ln in k.source.splitlines() if len(ln) < COLUMNS - 10)
    assert not any(other in body for other in defined[cid] if other != name)  # that kernel alone

    time = _fits(_shown("report", str(path), "--view", "time"))
    bars = [ln for ln in time if "█" in ln]
    assert bars and all(re.search(r"\d+\.\d{3} \+ *\d+\.\d{3} s", ln) for ln in bars)
    words = " ".join(" ".join(time).split())  # torch's phase names said in words beside them
    assert words.count("(bytecode_hooks_0)") == words.count(
        "bytecode hook 1 (a tool reading the code Dynamo made) (bytecode_hooks_0)"
    )

    compiles = _fits(_shown("report", str(path), "--view", "compiles", "--compile", cid))
    tree = compiles[compiles.index(next(ln for ln in compiles if ln.startswith("time per phase"))) + 1 :]
    # the tree: Dynamo's whole frame at the top, Inductor's parts under it, further in
    top = next(ln for ln in tree if "(dynamo)" in ln)
    inner = next(ln for ln in tree if "(inductor_compile)" in ln)
    assert len(inner) - len(inner.lstrip()) > len(top) - len(top.lstrip())


def test_kernel_option_is_for_codegen(tmp_path):
    with gzip.open(ROOT / "notebooks" / "data" / "h100-gpt2-train-bench.json.gz") as f:
        (tmp_path / "r.json").write_bytes(f.read())
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "report",
            str(tmp_path / "r.json"),
            "--view",
            "time",
            "--kernel",
            "x",
        ],
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert (run.returncode, run.stderr.strip()) == (
        2,
        "pt2-explorer: error: --kernel is a kernel of --view codegen, not of --view time",
    )
    run = subprocess.run(
        [sys.executable, "-m", "explorer", "report", str(tmp_path / "r.json"), "--kernel", "no_such_kernel"],
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and run.stderr.startswith(
        "pt2-explorer: error: no kernel or code block 'no_such_kernel' in the codegen of ["
    )


@pytest.mark.slow
@pytest.mark.corpus
def test_every_backward_kernel_has_nodes_or_says_why(gpt2):
    """The backward compile's kernels: torch's provenance maps kernels to post-grad nodes for
    the forward, and for the backward gives no map (read from its log here); each backward
    kernel's row then says so, and its lines are those of torch's stacks for the kernel."""
    path, records = gpt2
    report = compiler.load(path)
    defined = _defined(records)
    cid = max(defined, key=lambda c: len(defined[c]))
    maps, stacks = [], {}
    for meta, payload in records:
        name = (meta.get("artifact") or {}).get("name")
        if f"{meta.get('frame_id')}/{meta.get('frame_compile_id')}" != cid:
            continue
        if name == "inductor_provenance_tracking_node_mappings":
            maps.append(json.loads(payload))
        elif name == "inductor_provenance_tracking_kernel_stack_traces":
            stacks |= {k.rsplit(":", 1)[0]: v for k, v in json.loads(payload).items()}
    mapped = {
        k.rsplit(":", 1)[0] for m in maps for key, v in m.items() if key.endswith("CodeToPost") for k in v
    }
    kernels = report.kernels_of(cid)
    backward = [k for k in kernels if k.role == "backward"]
    assert backward and {k.name for k in backward} <= set(defined[cid])
    text = explorer.text(report, "codegen", compile=cid)
    rows = {ln.split()[1]: ln for ln in text.splitlines() if ln.startswith(("forward ", "backward "))}
    for k in kernels:
        if k.name in mapped:  # torch maps it: the nodes it names
            assert k.nodes and f" {len(k.nodes)} " in rows[k.name], rows[k.name]
        else:
            assert not k.nodes and " torch maps none " in rows[k.name], rows[k.name]
            frame = re.findall(r'File "([^"]+)", line (\d+)', stacks[k.name][0])[-1]
            assert f"{where(frame[0], int(frame[1]))}" in rows[k.name], (rows[k.name], frame)
    assert all(k.name not in mapped for k in backward)  # torch's backward map is empty (2.13)
    assert "torch's provenance maps no backward kernel to its nodes" in text


@pytest.mark.slow
@pytest.mark.corpus
def test_gpt2_step_one_number_per_fact(gpt2):
    """The GPT-2 training step: one number per fact (tests/_one_number.py), its guards as
    torch's own log counts them (``compilation_metrics``' guard_count)."""
    path, records = gpt2
    report = compiler.load(path)
    counted = {
        f"{m.get('frame_id')}/{m.get('frame_compile_id')}": json.loads(p).get("guard_count")
        for m, p in records
        if "compilation_metrics" in m and p
    }
    for c in report.compiles:
        if c.stages.capture and counted.get(c.id):
            assert c.stages.capture.guard_count == counted[c.id]
    assert check(report, explorer.html(report)) >= len(report.compiles)


@pytest.mark.slow
@pytest.mark.corpus
def test_gpt2_bytecode_names_the_python_at_the_break(gpt2):
    """[1/0] (GPT-2's forward): after the compiled graph, the frame's own ``self.loss_function(...)``
    call runs in Python (the break is inside it, at ``logger.warning_once``), and with it the rest
    of the frame: the line and its code as torch's own break record for [1/0] names them."""
    path, records = gpt2
    report = compiler.load(path)
    (reason,) = [
        p
        for m, p in records
        if (m.get("artifact") or {}).get("name") == "dynamo_graph_break_reason"
        and (m.get("frame_id"), m.get("frame_compile_id")) == (1, 0)
    ]
    frames = re.findall(
        r'File "([^"]+)", line (\d+), in (\S+)\n +(\S.*)', reason.split("User code traceback:")[1]
    )
    (own,) = [
        (f, int(n), code)
        for f, n, fn, code in frames
        if f.endswith("gpt2/modeling_gpt2.py") and fn == "forward"
    ]
    inner = re.search(r"Graph break in user code at (\S+):(\d+)", reason)
    assert own[2] == "loss = self.loss_function("
    (effects,) = [
        p
        for m, p in records
        if (m.get("artifact") or {}).get("name") == "dynamo_side_effects"
        and (m.get("frame_id"), m.get("frame_compile_id")) == (1, 0)
    ]
    objects = re.findall(r"^Mutating object of type (\S+)", effects, re.M)
    mutations = len(objects) + len(re.findall(r"^ *\*{8}$", effects, re.M))  # a stack each
    shown = explorer.text(report, "bytecode", compile="1/0").splitlines()
    at = next(i for i, ln in enumerate(shown) if "calls the compiled graph" in ln)
    # after the graph: the side effects its code replays, then the call that breaks
    assert shown[at + 1].strip() == (
        f"replays {mutations} mutations of {len(objects)} objects ({', '.join(dict.fromkeys(objects))}) "
        "in Python: Dynamo's side effects (their lines: --view capture)"
    )
    assert shown[at + 2] == (
        f"    line {own[1]} runs `loss = self.loss_function(…)` ({where(own[0], own[1])}) itself, in Python, "
        f"and the frame's code after it: the graph break inside it, at {where(inner[1], int(inner[2]))} "
        "(logging.Logger method not supported for non-export cases)"
    )
