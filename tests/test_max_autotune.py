"""Max-autotune on CPU: the GEMM choices Inductor benchmarks (C++ micro-GEMM template vs
MKL), their times and the winner, from select_algorithm's feedback hook; checked against the
AUTOTUNE table torch itself writes to stderr during the same compile."""

from __future__ import annotations

import json
import re

import torch

import compiler
import explorer

_HEADER = re.compile(r"^AUTOTUNE (\w+)\((.*)\)$")
_CHOICE = re.compile(r"^  (\S+) ([\d.]+) ms ([\d.]+)%")


def _torch_tables(stderr: str) -> list[tuple[str, tuple[str, ...], list[tuple[str, str]], str]]:
    """torch's own AUTOTUNE tables: (op, input sizes, [(choice, ms as printed)], best_kernel)."""
    out, lines = [], stderr.splitlines()
    best = [
        json.loads(lines[i + 1])["best_kernel"]
        for i, ln in enumerate(lines)
        if ln == "Autotune Choices Stats:"
    ]
    for i, ln in enumerate(lines):
        m = _HEADER.match(ln)
        if m:
            rows = [(c.group(1), c.group(2)) for c in map(_CHOICE.match, lines[i + 3 :]) if c]
            rows = rows[
                : next((j for j, ln2 in enumerate(lines[i + 3 :]) if not _CHOICE.match(ln2)), len(rows))
            ]
            out.append((m.group(1), tuple(m.group(2).split(", ")), rows, best[len(out)]))
    return out


def test_cpu_gemm_choices_timings_and_winner(capfd):
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 32).eval()
    x = torch.randn(16, 64)
    # CPU GEMM templates are benchmarked with freezing under no_grad (a plain max-autotune
    # compile benchmarks nothing on CPU); no cache: a cached choice is not benchmarked again
    # (the hook still reports the cached times, torch prints no table)
    config = torch._inductor.config.patch(freezing=True, force_disable_caches=True)
    with torch.no_grad(), config, compiler.recording() as rec:
        got = torch.compile(model, mode="max-autotune")(x)
        expected = model(x)
    torch.testing.assert_close(got, expected)
    tables = _torch_tables(capfd.readouterr().err)
    r = rec.report
    (c,) = r.compiles
    ours = c.stages.fuse.autotune
    assert len(ours) == len(tables) == 1
    (a,), ((op, inputs, rows, best),) = ours, tables
    # the packed weight's size and the micro-GEMM's name depend on the CPU's instruction set
    # (1459233x1 and CppMicroGemmFP32Vec on one AVX-512 machine): what torch printed here
    packed = inputs[1]
    assert (a.op, a.inputs) == (op, inputs) and (op, inputs[0], inputs[2]) == (
        "packed_linear",
        "16x64",
        "32x64",
    )
    assert re.fullmatch(r"\d+x1", packed)
    # the same choices in the same order (fastest first), the times torch printed (4 decimals)
    assert [(ch.name, f"{ch.time_ms:.4f}") for ch in a.choices] == rows
    names = sorted(ch.name for ch in a.choices)
    assert len(names) == 2 and names[0] == "_mkl_linear" and re.fullmatch(r"cpp_CppMicroGemm\w+_0", names[1])
    assert a.winner == best == rows[0][0]
    # views: the summary line, the fuse stage's table, the page
    times = ", ".join(f"{n} {t} ms" for n, t in rows)
    line = f"  [0/0] packed_linear(16x64, {packed}, 32x64): {times}; won: {best}"
    assert line in explorer.text(r).splitlines()
    fuse = explorer.text(r, "fuse", compile="0/0").splitlines()
    assert f"max-autotune: packed_linear(16x64, {packed}, 32x64)" in fuse
    assert any(ln.startswith(best) and ln.rstrip().endswith("won") for ln in fuse)
    assert f"{rows[1][0]}" in explorer.html(r)
    # the codegen stage: the same table, with the kernel that runs the winner (a C++ GEMM
    # template: the C++ kernel that defines its micro-GEMM; MKL: its extern call)
    (kernel,) = r.kernels_of(c.id)
    code = c.stages.codegen.output_code[0].code
    if best.startswith("cpp_"):
        runs = kernel.name
        assert "micro_gemm" in kernel.source
    else:  # MKL won: Inductor calls its op (torch.ops.mkl._mkl_linear.default(...))
        (runs,) = set(re.findall(rf"\b((?:extern_kernels|torch\.ops\.mkl)\.{best}(?:\.default)?)\(", code))
    title = f"max-autotune: packed_linear(16x64, {packed}, 32x64): {best} won, runs as {runs}"
    codegen = explorer.text(r, "codegen", compile="0/0").splitlines()
    assert codegen[2] == title, codegen[:3]
    # the hook is gone after the recording
    from torch._inductor import select_algorithm

    assert not any(
        type(f).__name__ == "AutotuneFeedback"
        for f in select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
    )
