"""Triton all the way down, without a GPU: the IR location formats read line by line, occupancy,
and the capture's plumbing through Triton's listener slot (a stand-in for
``triton.knobs.compilation``: Triton does not import with a CPU build of torch). What the real
Triton hands over, and the register counts it reports, is checked on the GPU in
tests/test_gpu_why.py."""

from __future__ import annotations

import base64
import dataclasses
import json
import types
from pathlib import Path

import compiler
import compiler._viewer
import explorer
from compiler.listen._tritonir import TritonCapture, with_binaries
from compiler.model._irbounds import ir_function

FIXTURES = Path(__file__).parent / "fixtures" / "reports"
F = "/tmp/torchinductor_u/ab/cab12.py"

# the forms Triton writes (MLIR locations, LLVM debug metadata, PTX .loc, nvdisasm line info)
TTIR = f"""#loc = loc("{F}":19:0)
module {{
  tt.func public @k(%arg0: !tt.ptr<f32> loc("{F}":19:0)) attributes {{noinline = false}} {{
    %c1024_i32 = arith.constant 1024 : i32 loc(#loc1)
    %0 = tt.get_program_id x : i32 loc(#loc2)
    %1 = arith.muli %0, %c1024_i32 : i32 loc(#loc20)
    tt.store %arg0, %x : !tt.ptr<f32> loc(#loc4)
    tt.return loc(#loc5)
  }} loc(#loc)
}} loc(#loc)
#loc1 = loc(unknown)
#loc2 = loc("{F}":21:28)
#loc3 = loc("{F}":21:33)
#loc4 = loc("{F}":30:25)
#loc5 = loc("{F}":30:4)
#loc20 = loc("xoffset"(#loc3))"""
LLIR = """define ptx_kernel void @k(ptr addrspace(1) %0) local_unnamed_addr !dbg !7 {
  %2 = tail call i32 asm "mov.u32 $0, %ctaid.x;", "=r"() #1, !dbg !10
  %3 = shl i32 %2, 10, !dbg !11
  ret void, !dbg !12
}
!7 = distinct !DISubprogram(name: "k", linkageName: "k", scope: !1, file: !1, line: 19)
!10 = !DILocation(line: 21, column: 28, scope: !7)
!11 = !DILocation(line: 21, column: 33, scope: !7)
!12 = !DILocation(line: 30, column: 4, scope: !7)"""
PTX = f""".file	1 "{F}"
.visible .entry k(
)
{{
	.loc	1 21 28
	mov.u32 	%r1, %ctaid.x;

	.loc	1 30 4
	ret;
}}"""
SASS = f"""	.text.k:
        //## File "{F}", line 21
        /*0000*/                   S2R R0, SR_CTAID.X ;
        //## File "{F}", line 30
        /*0010*/                   EXIT ;"""


def test_ir_lines_tied_to_kernel_lines():
    ttir = dict(zip(TTIR.splitlines(), compiler.analysis.ir_source_lines("ttir", TTIR), strict=True))
    assert ttir["    %c1024_i32 = arith.constant 1024 : i32 loc(#loc1)"] is None  # loc(unknown)
    assert ttir["    %0 = tt.get_program_id x : i32 loc(#loc2)"] == 21
    assert ttir["    %1 = arith.muli %0, %c1024_i32 : i32 loc(#loc20)"] == 21  # a name around #loc3
    assert ttir["    tt.store %arg0, %x : !tt.ptr<f32> loc(#loc4)"] == 30
    assert ttir["    tt.return loc(#loc5)"] == 30
    assert all(s is None for ln, s in ttir.items() if ln.startswith("#loc"))
    assert compiler.analysis.ir_source_lines("llir", LLIR) == (None, 21, 21, 30, None, None, None, None, None)
    assert compiler.analysis.ir_source_lines("ptx", PTX) == (
        None,
        None,
        None,
        None,
        None,
        21,
        None,
        None,
        30,
        30,
    )
    assert compiler.analysis.ir_source_lines("sass", SASS) == (None, None, 21, None, 30)


def test_ir_bounded_to_the_kernels_function():
    """Each level's function, from its header to its closing brace: a PTX module's DWARF
    sections, LLVM's declarations and metadata, MLIR's location table and SASS's symbol table
    are outside it, and no line there is tied to a kernel line (a running ``.loc`` used to run
    on into ``.debug_abbrev``)."""
    ptx = PTX + '\n\t.file\t2 "/x/standard.py"\n\t.section\t.debug_abbrev\n\t{\n.b8 1\n\t}'
    sass = (
        "\t.target\tsm_90\n\n//----- .text.k -----\n"
        + SASS
        + "\n\n\n//----- SYMBOLS -----\n\t.type\tx,@object"
    )
    fn = ir_function
    assert fn("ttir", TTIR) == (2, 9)  # tt.func … to its "} loc(#loc)"
    assert TTIR.splitlines()[8] == "  } loc(#loc)"
    assert fn("llir", LLIR) == (0, 5)
    assert fn("ptx", ptx) == (1, 10)
    assert fn("sass", sass) == (2, 8)  # the banner of .text.k to its last instruction
    assert sass.splitlines()[7] == "        /*0010*/                   EXIT ;"
    assert fn("ptx", "not an IR") == (0, 1) and fn("cubin", PTX) == (0, 10)
    lines = compiler.analysis.ir_source_lines("ptx", ptx)
    assert lines[:10] == (None, None, None, None, None, 21, None, None, 30, 30)
    assert lines[10:] == (None,) * 5  # the .loc before ret no longer reaches the debug sections
    assert (
        compiler.analysis.ir_source_lines("sass", sass)
        == (None,) * 3 + (None, None, 21, None, 30) + (None,) * 4
    )


def test_occupancy():
    # 32 regs, 4 warps: 4 warps x 32 threads x 32 regs = 4096 regs a block; 16 blocks by
    # registers, 16 by threads (64 warps / 4): full occupancy, threads the limit
    assert compiler.analysis.occupancy(32, 4, 0) == (1.0, "threads")
    # 128 regs x 32 threads = 4096 a warp; 8 warps a block = 32768: 2 blocks, 16 of 64 warps
    assert compiler.analysis.occupancy(128, 8, 0) == (0.25, "registers")
    # 100 KiB of shared memory a block on a 228 KiB SM: 2 blocks of 4 warps, 8 of 64 warps
    assert compiler.analysis.occupancy(32, 4, 100 * 1024, shared_per_sm=228 * 1024) == (
        0.125,
        "shared memory",
    )
    assert compiler.analysis.occupancy(None, 4, 0) is None


def _module_text(kernel) -> str:
    return "\n" + kernel.source  # the file Inductor writes has one line before the kernel's source


def test_capture_wraps_the_listener_and_attaches_binaries(tmp_path):
    report = compiler.load(FIXTURES / "h100-torch211-gpu-block.json.gz")
    kernel = next(k for k in report.kernels if k.name == "triton_poi_fused_gelu_1" and k.compile_id == "0/0")
    module = tmp_path / "cab12.py"
    module.write_text(_module_text(kernel))
    fn = types.FunctionType(compile("def f(): pass", str(module), "exec").co_consts[0], {})
    heard_by_prior = []
    knobs = types.SimpleNamespace(listener=lambda **kw: heard_by_prior.append(kw["metadata"]["hash"]))
    prior = knobs.listener
    cap = TritonCapture(knobs)
    cap.attach()
    assert knobs.listener is cap
    for i, block in enumerate((512, 1024)):
        files = {}
        for level, text in (("ttir", TTIR), ("ptx", PTX)):
            p = tmp_path / f"v{i}" / f"triton_poi_fused_gelu_1.{level}"
            p.parent.mkdir(exist_ok=True)
            p.write_text(text)
            files[p.name] = str(p)
        meta = {"name": "triton_poi_fused_gelu_1", "hash": f"h{i}", "num_warps": 4, "num_stages": 1, "shared": 0,
                "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}  # fmt: skip
        src = types.SimpleNamespace(fn=types.SimpleNamespace(fn=fn, arg_names=["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"]),
                                    constants={(3,): block})  # fmt: skip
        knobs.listener(src=src, metadata=meta, metadata_group=files, times=None, cache_hit=False)
    assert heard_by_prior == ["h0", "h1"]  # the listener that was there still hears everything
    cap.detach()
    assert knobs.listener is prior
    # Inductor's autotuning choice, written beside the module
    module.with_suffix(".best_config").write_text(
        json.dumps({"XBLOCK": 1024, "num_warps": 4, "triton_cache_hash": "h1"})
    )
    found = cap.binaries(load=False)
    out = with_binaries(report, found)
    got = next(k for k in out.kernels if k.name == kernel.name and k.compile_id == "0/0")
    assert [(b.hash, b.chosen, b.config, b.target, sorted(b.ir)) for b in got.binaries] == [
        ("h0", False, {"XBLOCK": 512, "num_warps": 4, "num_stages": 1}, "cuda:90", []),
        ("h1", True, {"XBLOCK": 1024, "num_warps": 4, "num_stages": 1}, "cuda:90", ["ptx", "ttir"]),
    ]
    assert got.binaries[1].line_offset == 1
    other = [k for k in out.kernels if k.source != kernel.source or k.name != kernel.name]
    assert all(k.binaries == () for k in other)  # another module's kernel gets nothing
    # the codegen view: the chosen config, the binaries' table, the IR led by the kernel's lines
    r2 = dataclasses.replace(out, kernels=tuple(k for k in out.kernels if k.compile_id == "0/0"))
    text = explorer.text(r2, "codegen", compile="0/0", kernel=kernel.name)
    assert "config                       XBLOCK=1024, num_warps=4, num_stages=1 (chosen of 2)" in text
    assert "▶ XBLOCK=1024, num_warps=4, num_stages=1" in text
    store = "tt.store %arg0, %x : !tt.ptr<f32> loc(#loc4)"
    assert f"  29 │     {store}" in text  # file line 30 is the kernel source's line 29


def test_capture_leaves_a_listener_set_inside_the_block():
    knobs = types.SimpleNamespace(listener=None)
    cap = TritonCapture(knobs)
    cap.attach()

    def users(**kw):
        return None

    knobs.listener = users
    cap.detach()
    assert knobs.listener is users
    assert TritonCapture(types.SimpleNamespace()).available is False  # a Triton without the slot


def test_the_autotune_choice_found_where_torch_names_it_by_its_cache_key(tmp_path):
    """torch 2.11 writes a kernel's ``.best_config`` beside its module under its autotune cache
    key, with the chosen binary's Triton hash in base32; the listener hands hashes in hex (as
    seen on the H100: LKJ5K3FN… is 5a93d56cad…)."""
    from compiler.listen._tritonir import _best_beside, _hex

    chosen = "5a93d56cadc37048a28b8d3a42983e9b055fefa7f5b563e22fead6eaf06bbe7b"
    other = "36615b15c4" + "0" * 54
    b32 = base64.b32encode(bytes.fromhex(chosen)).decode().rstrip("=")
    assert b32 == "LKJ5K3FNYNYERIULRU5EFGB6TMCV735H6W2WHYRP5LLOV4DLXZ5Q"
    assert _hex(b32) == chosen and _hex(chosen) == chosen and _hex("not-a-hash!") is None
    module = tmp_path / "cy6abc.py"
    module.write_text("# kernel module")
    (tmp_path / "0a1b.best_config").write_text(json.dumps({"XBLOCK": 64, "triton_cache_hash": "AAAA"}))
    (tmp_path / "7c67a4.best_config").write_text(
        json.dumps({"XBLOCK": 1024, "num_warps": 4, "num_stages": 1, "triton_cache_hash": b32})
    )
    mine = [(str(module), types.SimpleNamespace(hash=h), None) for h in (chosen, other)]
    assert _best_beside(mine)["XBLOCK"] == 1024
    assert _best_beside([(str(module), types.SimpleNamespace(hash=other), None)]) is None


def test_shipped_kernel_body_numbered_as_its_ir_gutter():
    """The H100 recording with Triton's IR (notebooks/data/h100-why-gemm.json.gz): the kernel's
    body is numbered as its source counts lines, and each IR's gutter gives those numbers: a
    ``tt.store`` / ``st.global`` sits on the body's ``tl.store`` line. Each IR block is its
    function, from its header to its closing brace."""
    report = compiler.load(Path(__file__).parent.parent / "notebooks/data/h100-why-gemm.json.gz")
    for k in report.kernels:
        text = explorer.text(report, "codegen", kernel=k.name)
        blocks = text.split("\n\n")
        body = next(b for b in blocks if b.startswith(f"inference kernel {k.name} (triton)"))
        src = k.source.splitlines()
        numbered = [ln.strip().split(" │ ", 1) for ln in body.splitlines()[1:]]
        assert numbered[0] == [str(int(numbered[0][0])), "@triton.jit"]
        assert all(src[int(n) - 1].strip() == code.strip() for n, code in numbered), k.name
        stores = {n for n, code in numbered if "tl.store" in code}
        for level, op, head, last in (
            ("TTIR", "tt.store", "tt.func public @", "} loc(#loc)"),
            ("PTX", "st.global", ".visible .entry ", "}"),
        ):
            ir = next(b for b in blocks if b.startswith(f"{k.name}: {level}"))
            rows = [(n.strip(), code[1:]) for n, _, code in (ln.partition("│") for ln in ir.splitlines()[1:])]
            assert rows[0][1].lstrip().startswith(head + k.name) and rows[-1][1].strip() == last, (
                k.name,
                level,
            )
            assert {n for n, code in rows if op in code} == stores, (k.name, level)
            assert not any(".debug_" in code or code.startswith("#loc") for _, code in rows)
        assert "Triton's line" not in text
    ptx = (
        next(k for k in report.kernels if k.name == "triton_poi_fused_add_addmm_view_2").binaries[0].ir["ptx"]
    )
    assert len(ptx.splitlines()) == 215 and ptx.splitlines()[10].startswith(".visible .entry")
    assert ptx.splitlines()[91] == "}" and ptx.splitlines()[93] == "\t.section\t.debug_abbrev"
    assert (
        "triton_poi_fused_add_addmm_view_2: PTX, its function: lines 11–92 of 215 (the module's other 133"
        " lines left out); left: the kernel's line, as numbered in its body (the IR's own locations count"
        " the kernel's file: 1 more) (82 lines)"
    ) in text.splitlines()


def test_a_report_recorded_before_the_bounds_were_stored_gets_them_on_load(tmp_path):
    """The H100 GEMM recording (notebooks/data) was written before ``TritonBinary.ir_bounds``:
    each binary with IR gets them when it loads, each level's as ``ir_function`` reads its text,
    and a report written again keeps them."""
    path = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "h100-why-gemm.json.gz"
    import gzip

    raw = json.loads(gzip.open(path, "rt", encoding="utf-8").read())
    assert not any("ir_bounds" in b for k in raw["kernels"] for b in k.get("binaries", ()))
    report = compiler.load(path)
    binaries = [b for k in report.kernels for b in k.binaries if b.ir]
    assert len(binaries) == 3
    for b in binaries:
        assert sorted(b.ir_bounds) == sorted(b.ir) == ["llir", "ptx", "sass", "ttgir", "ttir"]
        assert b.ir_bounds == {level: ir_function(level, text) for level, text in b.ir.items()}
        text = b.ir["ttir"].splitlines()
        start, stop = b.ir_bounds["ttir"]
        assert text[start].lstrip().startswith("tt.func") and text[stop - 1].lstrip().startswith("}")
    again = tmp_path / "again.json"
    again.write_text(report.to_json())
    assert [b.ir_bounds for k in compiler.load(again).kernels for b in k.binaries if b.ir] == [
        b.ir_bounds for b in binaries
    ]
