"""The verdict on a real H100 census row (notebooks/data/census-h100-speed/switch_transformers:
transformers' SwitchTransformers in eval, fp32, recorded by ``census --bench`` on the H100):
outer frames that failed while their inner frames compiled cost the call almost nothing, so
the graph breaks lead and the fallback is listed by its share; the host↔device copies are
grouped with their counts; the library GEMMs say the dtype their kernel names give. And the
why view of every shipped H100 report fits a terminal of 100 columns, whole lines when piped.
Each fact is checked against the report's own records of the run (its frames, failed
compiles, the profiler's launches), read here directly. Torch-free."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from rich.cells import cell_len

import compiler
from compiler.analysis import cost_groups, kernel_costs, verdict
from compiler.parse._kernelnames import operand_dtype
from explorer.census._speed import cause_of
from explorer.lower._fit import table_lines, text_width
from explorer.views._registry import Subject, view
from explorer.views._why import change_lines
from tests._verdicts import cause, judged, steady

DATA = Path(__file__).parent.parent / "notebooks" / "data"
SWITCH = DATA / "census-h100-speed" / "switch_transformers.eval.json.gz"
COLUMNS = 100


@pytest.fixture(scope="module")
def switch():
    return judged(SWITCH)


def test_failed_outer_frames_are_ranked_by_their_share_and_the_breaks_lead(switch):
    r, b, v = switch
    failed = {f.name for f in r.frames if f.compiles == 0}
    assert {"wrapper", "forward", "torch_dynamo_resume_in_forward_at_170"} <= failed
    assert b.timeline.graphs == 88  # the inner frames ran compiled: 88 graphs a call
    calls = b.profiled_calls
    outside = [x for x in b.launch_rows if x.compile_id is None]
    fb = cause(v, "fallback")  # still listed, with what it costs: the kernels outside the graphs
    assert fb.ms == pytest.approx(sum(x.total_ms for x in outside) / calls)
    assert fb.share < 0.01
    assert fb.evidence[0].startswith(
        f"{sum(x.calls for x in outside) / calls:.0f} of 1504 kernels a call ran outside the compiled graphs"
    )
    # the frames that fell back alike are one line: each with its compile, the failure once
    stage = {c.id: (c.failed_stage, c.error.splitlines()[0]) for c in r.compiles if c.status == "failed"}
    alike = ["0/0", "1/0", "2/0", "3/0", "4/0"]
    assert {stage[i] for i in alike} == {("capture", "Unsupported: Observed exception")}
    # each group's reason is its break's registered type and GB id; the groups whose every
    # call runs eagerly first, the most frames leading, then the recompile limit's
    gb = {c: (x.type, x.gb_id) for x in r.graph_breaks if x.gb_id for c in x.compile_ids}
    assert {gb[i] for i in alike} == {("Observed exception", "GB0088")}
    assert gb["13/0"] == ("Dynamic shape operator", "GB0036")
    assert fb.evidence[1:] == (
        "wrapper (generic.py:933) [0/0], forward (modeling_switch_transformers.py:824) [1/0], "
        "wrapper (generic.py:1006) [2/0], wrapper (output_capturing.py:249) [3/0], "
        "forward (modeling_switch_transformers.py:698) [4/0]: failed in capture: Observed exception "
        "(GB0088): every call of them runs eagerly",
        "torch_dynamo_resume_in_forward_at_170 (modeling_switch_transformers.py:170): [13/0] failed in "
        "capture: Dynamic shape operator (GB0036): every call of it runs eagerly",
        "forward (modeling_switch_transformers.py:533), forward (modeling_switch_transformers.py:143): the "
        "recompile limit was hit (8 entries each): a call whose guards fail on every entry runs eagerly",
    )
    assert fb.title == "eager fallback: Observed exception (GB0088) in wrapper, forward (and 3 more frames)"
    # the leading frames' break has no fix as code: its advice is the registry's hint
    assert (fb.fix, fb.advice) == (None, next(x.hints[0] for x in r.graph_breaks if x.gb_id == "GB0088"))
    limit = [(f.line, f.compiles) for f in r.frames if f.recompile_limit_hit]
    assert sorted(limit) == [(143, 8), (533, 8)]
    brk = cause(v, "breaks")
    assert (brk.title, round(brk.share, 2)) == ("graph breaks: 2 sites", 0.41)
    # the breaks of frames that compiled; those of the failed frames are their fallback's
    fallen = {c.id for c in r.compiles for f in r.frames if c.frame == f.id and f.compiles == 0}
    live = [x for x in r.graph_breaks if not fallen.intersection(x.compile_ids)]
    assert [(x.line, x.gb_id) for x in live] == [(95, "GB0264"), (170, "GB0036")]
    # as timed, the medians are within the spread: no clear winner, no cause named (the breaks
    # that lead are a share read from the timings); the same figures timed steadily name them
    assert v.main is None and v.headline.startswith("no clear winner (compiled is 1.02× faster than eager")
    v = verdict(r, steady(b))
    assert v.main == "breaks"
    assert (
        v.headline == "compiled is 1.02× faster than eager: graph breaks: 2 sites: 41% of the compiled call"
    )
    # the changes in the order of what they cost: the fallback's after the host's
    changes = [ln.split(":")[0] for ln in change_lines(v)]
    assert changes[0] == "fix (graph breaks"
    assert changes.index("fix (host-bound") < changes.index(
        "advice (eager fallback"
    )  # fmt: skip


def test_a_fallback_that_costs_the_call_still_leads():
    """notebooks/data/h100-cause-fallback: the frame that fell back ran the loop's kernels and
    its Python; it is more than half the call, and leads."""
    r = compiler.load(DATA / "h100-cause-fallback.json.gz")
    b = r.benchmarks[-1]
    v = verdict(r, b)
    fb = cause(v, "fallback")
    assert v.main == "fallback" and fb.share > 0.5 and b.timeline.graphs == 4
    (brk,) = r.graph_breaks
    assert brk.gb_id == "GB0124"
    assert v.headline.endswith(
        f": eager fallback: {brk.type} (GB0124) in forward: {fb.share:.0%} of the compiled call"
    )
    # no compiled code at all ran (the recompile limit): the fallback leads whatever its share
    r = compiler.load(DATA / "h100-cause-recompile.json.gz")
    b = r.benchmarks[-1]
    assert b.timeline.graphs == 0 and verdict(r, b).main == "fallback"


def test_the_same_copy_is_one_line_with_its_count(switch):
    _r, b, v = switch
    copies = [x for x in b.launch_rows if x.name.startswith("Memcpy DtoH")]
    assert len(copies) == 94  # a row per launch site in the profile
    counts = Counter((x.name, x.op, x.compile_id) for x in copies for _ in range(x.calls))
    assert {k: n / b.profiled_calls for k, n in counts.items()} == {
        ("Memcpy DtoH (Device -> Pinned)", "aten::nonzero", "12/0"): 50,
        ("Memcpy DtoH (Device -> Pinned)", "aten::_local_scalar_dense", "12/0"): 44,
    }
    assert cause(v, "sync").evidence == (
        "50 a call: Memcpy DtoH (Device -> Pinned) from aten::nonzero in [12/0]",
        "44 a call: Memcpy DtoH (Device -> Pinned) from aten::_local_scalar_dense in [12/0]",
        "the host waits for the device at each copy: launches stop until it arrives",
    )


def test_a_library_gemm_says_the_dtype_its_name_gives(switch):
    r, b, v = switch
    lib = cause(v, "library")
    top = [k for k in compiler.analysis.kernel_costs(r, b) if k.library][:3]
    assert all(k.dtype is None and k.name.startswith("sm80_xmma_gemm_f32f32_f32f32_f32_") for k in top)
    assert b.matmul_precision == "highest"
    assert all(
        e.endswith("ms a call (matmul, fp32 on the CUDA cores, no TF32 (its kernel name says so))")
        for e in lib.evidence[:3]
    )
    assert lib.fix == 'torch.set_float32_matmul_precision("high")  # TF32 tensor cores for fp32 matmuls'
    names = {
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64": "bf16",
        "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn": "f16",
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>": "f32",
        "void gemmSN_TN_kernel<float, 128, 16, 2, 4, 6, 7, false>": "f32",
        "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_bias_TNN": None,
    }
    assert {n: operand_dtype(n.lower()) for n in names} == names


def _shipped() -> list[Path]:
    paths = sorted((DATA / "census-h100-speed").glob("*.json.gz")) + sorted(DATA.glob("h100-*.json.gz"))
    return [p for p in paths if p.name != "h100-modes-mlp.json.gz"]  # a compare_modes result, no report


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _census_rows() -> dict[str, dict]:
    """The shipped H100 census's rows by the report each keeps."""
    rows = json.loads((DATA / "census-h100-speed.json").read_text())["rows"]
    return {r["report"]: r for r in rows if r.get("report")}


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: p.name.removesuffix(".json.gz"))
def test_the_why_view_fits_a_terminal_of_100_columns(path, monkeypatch):
    """As ``pt2-explorer report PATH --view why`` prints it to a terminal of 100 columns; a
    census row's cause is its kept report's verdict, as the census page says it."""
    r = compiler.load(path)
    if not r.benchmarks:
        pytest.skip("no benchmark")
    row = _census_rows().get(path.relative_to(DATA).as_posix())
    if row is not None and "cause_key" in row:
        keys = ("cause_key", "cause", "verdict")  # the row's group, cause_group, is newer than the rows
        want = cause_of(verdict(r, r.benchmarks[-1]), r.benchmarks[-1].device)
        assert {k: row[k] for k in keys} == {k: want[k] for k in keys}
    monkeypatch.setenv("COLUMNS", str(COLUMNS))
    out = _Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    view("why").terminal(Subject(r))
    wide = [ln for ln in out.getvalue().splitlines() if cell_len(ln) > COLUMNS]
    assert out.getvalue() and not wide, wide[:3]


def test_the_why_view_piped_keeps_whole_lines(switch):
    r, _b, v = switch
    env = {**os.environ, "COLUMNS": str(COLUMNS)}
    run = subprocess.run(
        [sys.executable, "-m", "explorer", "report", str(SWITCH), "--view", "why"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    row = next(ln for ln in run.stdout.splitlines() if ln.startswith("host↔device copies inside the call "))
    assert row.endswith("; ".join(cause(v, "sync").evidence))


def test_a_rows_lines_name_their_file_once(switch):
    """The line table: a group's lines of one file are that file named once ("x.py:241, 244"),
    whole when piped; at 100 columns the path's folders are cut ("…/") and the file and its
    lines stay whole, the lines wrapping after a comma, never inside a ``file:line``."""
    r, b, _v = switch
    groups = cost_groups(kernel_costs(r, b), "line", b)
    (g,) = [
        g for g in groups if [k.rpartition(":")[2] for k in g.key.split(", ")] == ["241", "244", "247", "249"]
    ]
    assert f"{g.ms:.4g}" == "0.1585"
    path = "transformers/models/switch_transformers/modeling_switch_transformers.py"
    assert {k.rpartition(":")[0].endswith(path) for k in g.key.split(", ")} == {True}
    piped = explorer_text(r)
    assert any(ln.startswith(f"{path}:241, 244, 247, 249  ") for ln in piped.splitlines())
    with text_width(COLUMNS):
        fitted = explorer_text(r).splitlines()
    at = fitted.index(next(ln for ln in fitted if "0.1585" in ln))
    assert fitted[at].startswith("…/models/switch_transformers/modeling_switch_transformers.py:241, 244, ")
    assert fitted[at + 1] == "247, 249"


def test_prose_with_commas_wraps_between_words_a_list_an_item_a_line():
    prose = (
        "wrapper (a.py:3) [0/0], forward (b.py:9) [1/0]: failed in capture: every call of them runs eagerly"
    )
    places = "a.py:1, 5, b.py:2, c.py:3, d.py:4, e.py:5, f.py:6"
    with text_width(40):
        lines = table_lines(("cause", "evidence"), [("fallback", prose), ("lines", places)])
    assert lines[1:] == [
        "fallback  wrapper (a.py:3) [0/0],",
        "          forward (b.py:9) [1/0]: failed",
        "          in capture: every call of them",
        "          runs eagerly",
        "lines     a.py:1, 5,",
        "          b.py:2,",
        "          c.py:3,",
        "          d.py:4,",
        "          e.py:5,",
        "          f.py:6",
    ]


def explorer_text(r) -> str:
    from explorer.views._why import why_text

    return why_text(r)
