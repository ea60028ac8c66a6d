"""Max-autotune on the GPU (issue 53, item 3): each GEMM Inductor tuned lists its candidates
(Triton templates with their configs, cuBLAS externs) with their times and the winner, from
select_algorithm's feedback hook; checked against the AUTOTUNE tables torch itself prints
during the same compile, and the winner against the output code torch wrote (the template
kernel with the winner's block sizes, stages and warps, or the extern call).

Run on a CUDA machine: ``python -m pytest -m gpu tests/test_max_autotune_gpu.py``."""

from __future__ import annotations

import re

import pytest
import torch

import compiler
import explorer
from tests.test_max_autotune import _torch_tables

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU with Triton"),
]

_ROW = re.compile(r"^  (\S+) ([\d.]+) ms ([\d.]+)% ?(.*)$")
_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", "num_warps")


def _printed_configs(stderr: str) -> dict[str, str]:
    """Each choice's description as torch printed it after its time in the AUTOTUNE table."""
    return {m.group(1): m.group(4).strip() for m in map(_ROW.match, stderr.splitlines()) if m}


def _kernel_for(config: str, name: str, inputs: tuple[str, ...], code: str) -> str:
    """What in torch's output code runs the winner: the template kernel whose source states the
    winner's block sizes, stages and warps and the op's M, N and K, or the extern call."""
    want = dict(p.split("=", 1) for p in re.split(r",\s*", config) if p.split("=", 1)[0] in _KEYS)
    if not want:
        assert f"extern_kernels.{name}(" in code, name
        return f"extern_kernels.{name}"
    (m, k), (_, n) = (s.split("x") for s in inputs[-2:])
    want.update(M=m, N=n, K=k)
    found = []
    for kname, src in re.findall(r"async_compile\.triton\('(triton_tem_\w+)', '''(.*?)'''", code, re.S):
        got = {}
        for key in want:
            v = re.search(rf"^\s*{key}\s*(?::\s*tl\.constexpr\s*)?=\s*(\w+)\s*$", src, re.M) or re.search(
                rf"\b{key}\s*=\s*(\w+)", src
            )
            if v:
                got[key] = v.group(1)
        if got == want:
            found.append(kname)
    assert len(found) == 1, (config, inputs, found)
    return found[0]


def test_gpu_gemm_candidates_times_winner_and_the_kernel_that_runs_it(capfd):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 256))
    model = model.to("cuda", torch.float16).eval()
    x = torch.randn(256, 512, device="cuda", dtype=torch.float16)
    # no cache: a cached choice is not benchmarked again and torch prints no table
    config = torch._inductor.config.patch(force_disable_caches=True, max_autotune_gemm_backends="ATEN,TRITON")
    with torch.no_grad(), config, compiler.recording() as rec:
        got = torch.compile(model, mode="max-autotune-no-cudagraphs")(x)
        expected = model(x)
    torch.testing.assert_close(got, expected, rtol=2e-2, atol=2e-2)
    err = capfd.readouterr().err
    tables, printed = _torch_tables(err), _printed_configs(err)
    (c,) = rec.report.compiles
    ours = c.stages.fuse.autotune
    assert len(ours) == len(tables) == 2, err[-3000:]
    code = open(c.stages.codegen.output_code[0].path).read()  # the wrapper module torch wrote
    codegen = explorer.text(rec.report, "codegen", compile="0/0").splitlines()
    for a, (op, inputs, rows, best) in zip(ours, tables):
        assert (a.op, a.inputs) == (op, inputs)
        # Triton templates and cuBLAS, each with its time; torch prints the fastest ten
        assert len(a.choices) >= len(rows) >= 2
        assert any(ch.name.startswith("triton_") for ch in a.choices)
        assert [(ch.name, f"{ch.time_ms:.4f}") for ch in a.choices[: len(rows)]] == rows
        assert [ch.config for ch in a.choices[: len(rows)]] == [printed[n] for n, _ in rows]
        assert a.winner == best == rows[0][0]
        runs = _kernel_for(printed[best], best, inputs, code)
        title = f"max-autotune: {op}({', '.join(inputs)}): {best} won, runs as {runs}"
        assert any(ln.startswith(title) for ln in codegen), (title, codegen[:12])
        assert a.precompile_s is not None and a.precompile_s > 0
