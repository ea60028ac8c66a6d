"""An Inductor Triton kernel module read for people: the ``@triton.jit`` function first, and the
decorator's metadata (``size_hints``, ``triton_meta``, ``inductor_meta``) as a few named facts
instead of kilobyte dicts on one line.

Inductor writes each kernel as a small Python module: imports, one
``@triton_heuristics.<kind>(size_hints=…, triton_meta={…}, inductor_meta={…})`` decorator over
``@triton.jit def <name>(…)``, then a benchmark harness (``get_args``, ``call``, ``__main__``).
The decorator's arguments are Python literals except for a few calls (``DeviceProperties(…)``,
``set()``) and names (``__file__``); those are kept as their source text. Pure: a string in,
facts out; a source that is not such a module gives None.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TritonSource:
    """One Inductor Triton kernel, its body and the facts its decorator holds."""

    name: str  # the @triton.jit function's name
    body: str  # the @triton.jit function, decorator line included
    body_line: int  # the line of ``def`` in the kernel's source (Triton's locations use it), 1-based
    heuristic: str  # pointwise | reduction | persistent_reduction | template | foreach | …
    size_hints: dict[str, Any] = field(default_factory=dict)
    signature: dict[str, str] = field(default_factory=dict)  # argument -> Triton type ("*fp32", "i32")
    constants: dict[str, Any] = field(default_factory=dict)
    mutated: tuple[str, ...] = ()  # arguments written in place (inductor_meta mutated_arg_names)
    loads: int | None = None
    stores: int | None = None
    reductions: int | None = None
    num_gb: float | None = None  # bytes moved per launch, GB (benchmark_kernel=True)
    flops: int | None = None  # FLOPs per launch where Inductor counts them (kernel_flop)
    device: str | None = None  # the DeviceProperties the kernel was generated for, as written
    configs: tuple[str, ...] = ()  # Triton configs written in the decorator (templates, fixed configs)


_HEURISTIC_PREFIX = "triton_heuristics."


def read_triton_source(source: str) -> TritonSource | None:
    """The kernel of an Inductor Triton module; None when ``source`` is not one."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            return _read(source, node)
    return None


def _is_jit(d: ast.expr) -> bool:
    target = d.func if isinstance(d, ast.Call) else d
    return ast.unparse(target) in ("triton.jit", "jit")


def _read(source: str, fn: ast.FunctionDef) -> TritonSource:
    lines = source.splitlines()
    jit = next(d for d in fn.decorator_list if _is_jit(d))
    body = "\n".join(lines[jit.lineno - 1 : fn.end_lineno])
    heuristic, kw = "", {}
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and ast.unparse(d.func).startswith(_HEURISTIC_PREFIX):
            heuristic = ast.unparse(d.func)[len(_HEURISTIC_PREFIX) :]
            kw = {k.arg: _value(k.value) for k in d.keywords if k.arg}
    tmeta = kw.get("triton_meta") if isinstance(kw.get("triton_meta"), dict) else {}
    imeta = kw.get("inductor_meta") if isinstance(kw.get("inductor_meta"), dict) else {}
    sig = tmeta.get("signature") if isinstance(tmeta.get("signature"), dict) else {}
    return TritonSource(
        name=fn.name,
        body=body,
        body_line=fn.lineno,
        heuristic=heuristic,
        size_hints=kw.get("size_hints") if isinstance(kw.get("size_hints"), dict) else {},
        signature={str(k): str(v) for k, v in sig.items()},
        constants=tmeta.get("constants") if isinstance(tmeta.get("constants"), dict) else {},
        mutated=tuple(str(a) for a in imeta.get("mutated_arg_names") or ()),
        loads=_int(imeta.get("num_load")),
        stores=_int(imeta.get("num_store")),
        reductions=_int(imeta.get("num_reduction")),
        num_gb=_float(imeta.get("kernel_num_gb")),
        flops=_int(imeta.get("kernel_flop")),
        device=tmeta.get("device") if isinstance(tmeta.get("device"), str) else None,
        configs=tuple(str(c) for c in kw.get("configs") or ()) if isinstance(kw.get("configs"), list) else (),
    )


def _value(node: ast.expr) -> Any:
    """A literal's value; a call or a name as its source text (``DeviceProperties(…)``)."""
    if isinstance(node, ast.Constant):  # what literal_eval gives, without its walk
        return node.value
    if isinstance(node, ast.Dict):
        return {_key(k): _value(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    if isinstance(node, ast.List | ast.Tuple):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Set):
        return {_key(e) for e in node.elts}
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def _key(node: ast.expr) -> Any:
    v = _value(node)
    return tuple(v) if isinstance(v, list) else v


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
