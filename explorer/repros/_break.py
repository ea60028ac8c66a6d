"""A starting point for reproducing one graph break: the function the break is in, copied from
its file, compiled with ``fullgraph=True`` (a break then raises instead of splitting the
graph) and called with tensors shaped as the recorded graph's inputs. Made only where the
report allows it: the break's function is the compiled frame's own (its parameters are the
graph's inputs) and its file is readable here. Clearly a starting point, not a promise."""

from __future__ import annotations

import ast
import builtins
import textwrap

from compiler import Report
from compiler._viewer import read_source, shape_dims
from compiler.types import Compile, GraphBreak

from ._compile import provenance_lines, token

_DTYPES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "u8": "uint8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "b8": "bool",
    "c64": "complex64",
}


def find_break(report: Report, site: str) -> GraphBreak:
    """The break at ``site`` ("file.py:12", the end of its path is enough)."""
    for b in report.graph_breaks:
        if b.filename and b.line is not None and f"{b.filename}:{b.line}".endswith(site):
            return b
    sites = ", ".join(f"{(b.filename or '?').rsplit('/', 1)[-1]}:{b.line}" for b in report.graph_breaks)
    raise ValueError(f"no graph break at {site} (breaks: {sites or 'none'})")


def _function(lines: tuple[str, ...], line: int, name: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):  # ValueError: a NUL byte in the file
        return None
    hits = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef)
        and n.name == name
        and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]
    return min(hits, key=lambda n: (n.end_lineno or n.lineno) - n.lineno) if hits else None


def _tensor(node) -> str | None:
    """``torch.randn(4, 8, dtype=torch.float32)`` for a placeholder torch printed with a dtype."""
    if node is None or node.dtype not in _DTYPES:
        return None
    dims = shape_dims(node.shape)
    sizes = ", ".join(d if d.isdigit() else "8" for d in dims)  # a symbolic size: any value
    dtype = _DTYPES[node.dtype]
    make = "randn" if dtype.startswith(("float", "bfloat", "complex")) else "ones"
    return f"torch.{make}({sizes}{', ' if sizes else ''}dtype=torch.{dtype})"


def _free_names(fn: ast.FunctionDef) -> list[str]:
    bound = {a.arg for a in (*fn.args.args, *fn.args.kwonlyargs, *fn.args.posonlyargs)}
    bound |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    used = [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return sorted({u for u in used if u not in bound and u != "torch" and not hasattr(builtins, u)})


def _inputs(c: Compile | None, fn: ast.FunctionDef) -> list[tuple[str, str]]:
    graph = c.stages.capture.graph if c and c.stages.capture else None
    holders = {n.name.lower(): n for n in (graph.nodes if graph else ()) if n.op == "placeholder"}
    out = []
    for a in fn.args.args:
        made = _tensor(holders.get(f"l_{a.arg.lower()}_"))
        if made is None:
            raise ValueError(
                f"parameter {a.arg!r} of {fn.name} is not a tensor input of the recorded graph "
                f"[{c.id if c else '?'}]: no starting point (start from the compile's repro)"
            )
        out.append((a.arg, made))
    return out


def break_program(report: Report, site: str, *, source: str | None = None) -> str:
    """The starting point for the break at ``site``, or a ValueError in one line saying why
    the report does not allow one. ``source``: the report's file, named in the header."""
    b = find_break(report, site)
    frame = b.user_frame
    if frame is None or b.filename is None or b.line is None:
        raise ValueError(f"the break at {site} has no user frame: no starting point")
    c = next((x for x in report.compiles if x.id == b.compile_id), None)
    if c is None or c.name != frame.name:
        raise ValueError(
            f"the break is in {frame.name}, called from the compiled frame {c.name if c else '?'}: "
            "its inputs are not the graph's; no starting point"
        )
    lines, why = read_source(b.filename)  # a regular file of a bounded size: the report names it
    if why is not None:
        raise ValueError(f"{b.filename} not read: {why}: no starting point")
    fn = _function(lines, b.line, frame.name) if lines else None
    if fn is None:
        raise ValueError(f"cannot read function {frame.name} from {b.filename}: no starting point")
    if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs:
        raise ValueError(f"{fn.name} takes *args/**kwargs: no starting point")
    args = _inputs(c, fn)
    # from the def line: decorators left out (a torch.compile one would compile it twice)
    copied = textwrap.dedent("".join(lines[fn.lineno - 1 : fn.end_lineno]))
    free = _free_names(fn)
    head = [
        f"# A STARTING POINT for reproducing the graph break at {token(b.filename)}:{b.line} ({token(b.type)}),",
        "# made by pt2-explorer from a report: not a promise that it reproduces the break. It",
        "# compiles the break's function with fullgraph=True, so the break raises instead of",
        "# splitting the graph, and calls it with random tensors shaped as the recorded inputs.",
    ]
    why = " ".join((b.explanation or b.reason.splitlines()[0]).split())
    head += textwrap.wrap(f"torch: {why}", 96, initial_indent="# ", subsequent_indent="#   ")
    head += provenance_lines(source)
    head.append(f"# The function below is copied from {token(b.filename)}, the file the report names.")
    if free:
        head.append(f"# names the function takes from its module (define or import them): {', '.join(free)}")
    body = [
        "import torch",
        "",
        "",
        copied.rstrip("\n"),
        "",
        "",
        "if __name__ == '__main__':",
        *(f"    {name} = {made}" for name, made in args),
        f"    torch.compile({fn.name}, fullgraph=True)({', '.join(name for name, _ in args)})",
    ]
    return "\n".join(head + body) + "\n"
