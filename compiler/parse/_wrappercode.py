"""Inductor's generated code, read where a view or a run needs what it calls:

- ``kernel_call``: a line of a wrapper module's ``call`` that launches a kernel
  (``cpp_fused_…(buf0, arg1_1, …)``, ``extern_kernels.mm(…, out=buf4)``): the kernel and the
  names it is given (``compiler.numerics``'s first diverging kernel on the CPU);
- ``autotune_runs_as``: for each op max-autotune benchmarked, what in the output code runs the
  winner: an extern choice (``mm``, ``_mkl_linear``) as its ``extern_kernels.<name>(`` or
  ``torch.ops.<ns>.<name>…(`` call, a
  Triton template as the ``triton_tem_*`` kernel whose block sizes, stages and warps are the
  winner's config (torch's description of the choice) and whose static M, N and K are the op's, a C++ GEMM template
  (``cpp_CppMicroGemm…``) as the C++ kernel that defines its micro-GEMM."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model._stagetypes import Autotune

_CALL = re.compile(r"^\s*((?:cpp_|triton_)\w+|extern_kernels\.\w+)\((.*)\)\s*(?:#.*)?$")
_NAME = re.compile(r"^(?:\w+=)?([A-Za-z_]\w*)$")
_TEMPLATE = re.compile(r"async_compile\.triton\('(triton_tem_\w+)', '''(.*?)'''", re.S)
_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", "num_warps")
_PAIR = re.compile(r",\s*")


def kernel_call(line: str) -> tuple[str, list[str]] | None:
    """(the kernel, the names passed at the call's top level: ``out=buf4`` gives ``buf4``;
    expressions such as ``reinterpret_tensor(buf0, …)`` and numbers left out), or None for a
    line that launches no kernel."""
    m = _CALL.match(line)
    if m is None:
        return None
    out, depth, cur = [], 0, ""
    for ch in m.group(2) + ",":
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            name = _NAME.match(cur.strip())
            if name:
                out.append(name.group(1))
            cur = ""
        else:
            cur += ch
    return m.group(1), out


def _config(text: str) -> dict[str, str]:
    pairs = (p.split("=", 1) for p in _PAIR.split(text) if "=" in p)
    return {k.strip(): v.strip() for k, v in pairs if k.strip() in _KEYS}


def _template_config(source: str) -> dict[str, str]:
    """The template's config keys, and its GEMM's sizes where they are static (``M = 256``)."""
    out = {}
    for k in (*_KEYS, "M", "N", "K"):
        m = re.search(rf"^\s*{k}\s*(?::\s*tl\.constexpr\s*)?=\s*(\w+)\s*$", source, re.M)
        if m is None and k in _KEYS:  # the decorator's num_stages=…, num_warps=…
            m = re.search(rf"\b{k}\s*=\s*(\w+)", source)
        if m:
            out[k] = m.group(1)
    return out


def _sizes(inputs: Sequence[str]) -> dict[str, str]:
    """A GEMM's M, N and K from its last two inputs' sizes (``256x512``, ``512x1024``: the
    matrices of mm, addmm's after its bias); none where they are not two static matrices."""
    if len(inputs) < 2:
        return {}
    a, b = (x.split("x") for x in inputs[-2:])
    if len(a) != 2 or len(b) != 2 or not all(v.isdigit() for v in (*a, *b)) or a[1] != b[0]:
        return {}
    return {"M": a[0], "K": a[1], "N": b[1]}


def _fits(cfg: dict[str, str], want: dict[str, str], sizes: dict[str, str]) -> bool:
    """The template's config is the winner's, and its sizes (where it states them) the op's."""
    return all(cfg.get(k) == v for k, v in want.items()) and all(cfg.get(k, v) == v for k, v in sizes.items())


def autotune_runs_as(
    ops: Sequence[Autotune], code: str, cpp_kernels: Sequence[tuple[str, str]]
) -> dict[int, str]:
    """Index of each op -> the call or kernel that runs its winner; an op whose winner is not
    found is left out. ``code``: the compile's wrapper modules; ``cpp_kernels``: its C++
    kernels (name, source). Templates of one config are matched in order (the ops are lowered
    and their kernels defined in one order)."""
    templates = [(name, _template_config(src)) for name, src in _TEMPLATE.findall(code)]
    micro = [name for name, src in cpp_kernels if "micro_gemm" in src]
    used: set[int] = set()
    out: dict[int, str] = {}
    for i, a in enumerate(ops):
        won = next((ch for ch in a.choices if ch.name == a.winner), None)
        if won is None:
            continue
        want, sizes = _config(won.config), _sizes(a.inputs)
        if want:
            j = next(
                (j for j, (_, cfg) in enumerate(templates) if j not in used and _fits(cfg, want, sizes)), None
            )
            if j is not None:
                used.add(j)
                out[i] = templates[j][0]
        elif m := re.search(
            rf"\b(extern_kernels\.{re.escape(won.name)}|torch\.ops\.\w+\.{re.escape(won.name)}(?:\.\w+)?)\(",
            code,
        ):
            out[i] = m.group(1)  # an extern choice, or an op Inductor calls through torch.ops (MKL's linear)
        elif won.name.startswith("cpp_CppMicroGemm") and micro:
            out[i] = micro.pop(0)
    return out
