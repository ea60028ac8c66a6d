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
import re
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
    """The kernel of an Inductor Triton module; None when ``source`` is not one. Where the
    ``@triton.jit`` function is the module's last statement, as Inductor writes kernels, only
    its decorators and signature are parsed (its body, most of the module, is taken as text:
    a page of a big log reads ~900 kernels)."""
    got = _read_header(source)
    if got is not None:
        return got
    try:
        tree = ast.parse(source)
    except (SyntaxError, MemoryError, RecursionError):  # the last two: nesting too deep for the parser
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            return _read(source, node, node.end_lineno or node.lineno)
    return None


_JIT_LINE = re.compile(r"^@[ \t]*(?:triton[ \t]*\.[ \t]*)?jit\b", re.M)
# line ends str.splitlines knows besides "\n" (ast counts lines otherwise): the whole module is read
_OTHER_LINE_ENDS = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def _read_header(source: str) -> TritonSource | None:
    """The kernel from its decorators and ``def`` line(s) alone; None where the function is not
    the module's last statement or its header does not parse (the whole module is read then)."""
    m = _JIT_LINE.search(source)
    if m is None or _OTHER_LINE_ENDS.search(source):
        return None
    lines = source.split("\n")
    jit = source.count("\n", 0, m.start())
    start = _decorators_start(lines, jit)
    found = _function_lines(lines, jit)
    if found is None:
        return None
    def_line, end = found
    for k in range(def_line, min(end, def_line + 24)):  # the signature may span lines
        try:
            tree = ast.parse("\n" * start + "\n".join(lines[start : k + 1]) + "\n    pass\n")
        except (SyntaxError, MemoryError, RecursionError):
            continue
        fn = tree.body[-1] if tree.body else None
        if (
            isinstance(fn, ast.FunctionDef)
            and fn.lineno == def_line + 1
            and any(map(_is_jit, fn.decorator_list))
        ):
            return _read(source, fn, end)
        return None
    return None


def _decorators_start(lines: list[str], jit: int) -> int:
    """The first line (0-based) of the decorators over the one at ``jit``: up past their
    indented or closing-bracket continuation lines to the first ``@`` line."""
    start = jit
    for i in range(jit - 1, -1, -1):
        line = lines[i]
        if line.startswith("@"):
            start = i
        elif line and line[0] not in " \t#)]}":
            break
    return start


def _function_lines(lines: list[str], jit: int) -> tuple[int, int] | None:
    """The function under the decorator at ``jit``: its ``def`` line (0-based) and its last
    line that is not blank or a comment (1-based), where no statement at column 0 follows it;
    None otherwise."""
    def_line = end = None
    for i in range(jit + 1, len(lines)):
        line = lines[i]
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        end = i + 1
        if line[0] in " \t" or (def_line is not None and line[0] in ")]}"):
            continue
        if def_line is None and line.startswith("@"):
            continue
        if def_line is None and line.startswith("def "):
            def_line = i
            continue
        return None  # another statement at column 0 (or a line of a string: the module is read)
    return None if def_line is None or end is None else (def_line, end)


def _is_jit(d: ast.expr) -> bool:
    target = d.func if isinstance(d, ast.Call) else d
    return ast.unparse(target) in ("triton.jit", "jit")


def _read(source: str, fn: ast.FunctionDef, end: int) -> TritonSource:
    lines = source.splitlines()
    jit = next(d for d in fn.decorator_list if _is_jit(d))
    body = "\n".join(lines[jit.lineno - 1 : end])
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
