"""explorer/'s shape, read from its source: modules in layers that import only downwards (no
import circle; an import inside a function or under TYPE_CHECKING counts as any other), and
only compiler's public names (``from compiler import NAME``), never its modules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

EXPLORER = Path(__file__).parent.parent / "explorer"

# explorer/_program.py runs the user's program under `pt2-explorer record`, a path being changed
# on its own: there `from compiler.model._report import StackFrame` is to become
# `from compiler import StackFrame` (exported for it); then this entry goes.
PENDING = {"_program.py: from compiler.model._report import StackFrame"}


def _modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in sorted(EXPLORER.glob("*.py"))}


def _edges(name: str, tree: ast.Module, names: set[str]) -> set[str]:
    """The explorer modules ``name`` imports (``__init__`` is the package itself)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:  # from ._x import y
                out.add(node.module)
            elif node.level == 1 or node.module == "explorer":  # from . import _x; from explorer import y
                out |= {a.name if a.name in names else "__init__" for a in node.names}
            elif node.module and node.module.startswith("explorer."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out |= {
                a.name.split(".")[1] if "." in a.name else "__init__"
                for a in node.names
                if a.name.split(".")[0] == "explorer"
            }
    return (out & names) - {name}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_circles_are_found():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    tree = ast.parse("def f():\n    from ._b import x\nif TYPE_CHECKING:\n    from . import _c\n")
    assert _edges("_a", tree, {"_a", "_b", "_c"}) == {"_b", "_c"}


def test_no_import_circle_in_explorer():
    modules = _modules()
    graph = {name: _edges(name, tree, set(modules)) for name, tree in modules.items()}
    assert _circles(graph) == []


def test_explorer_imports_only_compilers_public_names():
    found = set()
    for name, tree in _modules().items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and (node.module or "").startswith("compiler.")
            ):
                found.add(f"{name}.py: from {node.module} import {', '.join(a.name for a in node.names)}")
            elif isinstance(node, ast.Import):
                found |= {f"{name}.py: import {a.name}" for a in node.names if a.name.startswith("compiler.")}
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.fullmatch(r"compiler(\.\w+)+", node.value):  # importlib, sys.modules
                    found.add(f"{name}.py: {node.value!r}")
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                private = node.attr.startswith("_") and not node.attr.startswith("__")
                if node.value.id in ("compiler", "_compiler") and private:
                    found.add(f"{name}.py: {node.value.id}.{node.attr}")
    assert found - PENDING == set()
