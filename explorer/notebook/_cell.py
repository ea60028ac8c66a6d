"""A notebook cell as the function ``%%compile`` compiles (see ``_magic``'s docstring).

Parsing (IPython's transforms, Python's own errors, the cells refused), the function's
source, and writing the names it binds back to the notebook.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import symtable
import types
from dataclasses import dataclass

from IPython.core.displayhook import DisplayHook
from IPython.core.error import UsageError

from ..model._summary import CELL_FUNCTION  # noqa: F401 - the name, said once; imported from here

UNSET_ARG = "__pt2_unset__"
BUILTINS_ARG = "__pt2_builtins__"
_LOCALS = f"{CELL_FUNCTION}.<locals>."


class _Unset:
    def __repr__(self) -> str:
        return "<not assigned by the cell>"


UNSET = _Unset()


@dataclass(frozen=True)
class Cell:
    source: str  # after IPython's transforms (%magics, !shell): what runs, what linecache holds
    filename: str  # <ipython-input-N-…>: IPython shows it as "Cell In[N]"
    tree: ast.Module
    quiet: bool  # ends with ";": the result is not displayed


def parse(shell, raw: str, number: int) -> Cell:
    """The cell as IPython would run it, or the error a plain cell would give (SyntaxError,
    incl. ``return``/``yield`` outside a function), or a refusal (``await``): all before
    anything runs."""
    source = shell.transform_cell(raw)
    filename = shell.compile.cache(source, number, raw_code=raw)
    tree = shell.compile.ast_parse(source, filename=filename)
    flags = shell.compile.flags | (ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if shell.autoawait else 0)
    code = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    if code.co_flags & inspect.CO_COROUTINE:
        raise UsageError(
            "%%compile: this cell uses await; torch.compile cannot compile a coroutine — run it "
            "as a plain cell, or move the model call into a function"
        )
    return Cell(source, filename, tree, DisplayHook.semicolon_at_end_of_expression(source))


def refusal(cell: Cell, ns: dict) -> str | None:
    """Why the cell cannot mean inside a function what it means at a notebook's top level."""
    bound = set(assigned_names(cell.tree)) | set(ns)
    for node in _cell_level_nodes(cell.tree):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            return "`from __future__ import …` only works in a plain cell"
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return "`from … import *` only works at a notebook's top level, not in a function"
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id not in bound and _reads_the_scope(f.id, node):
            return f"{f.id}() at the cell's top level would see the function's names, not the notebook's"
        if (
            isinstance(f, ast.Attribute)
            and f.attr in ("run_line_magic", "run_cell_magic")
            and isinstance(f.value, ast.Call)
            and getattr(f.value.func, "id", None) == "get_ipython"
        ):
            return "%magics run in the notebook's namespace, not in the compiled function"
    return None


def _reads_the_scope(name: str, call: ast.Call) -> bool:
    if name in ("locals", "vars", "dir"):
        return not call.args and not call.keywords
    return name == "exec" and len(call.args) + len(call.keywords) == 1


def _cell_level_nodes(tree: ast.Module):
    """Every node the cell's own scope evaluates (decorators and defaults included, bodies of
    functions, lambdas and classes not)."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo += node.decorator_list if not isinstance(node, ast.Lambda) else []
            todo += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        elif isinstance(node, ast.ClassDef):
            todo += node.decorator_list + node.bases + node.keywords
        else:
            todo += ast.iter_child_nodes(node)


def assigned_names(tree: ast.Module) -> list[str]:
    """Names a cell binds at its own level (not inside functions, classes, comprehensions,
    except for ``:=`` in a comprehension, which binds in the cell)."""
    names: dict[str, None] = {}

    def visit(node: ast.AST, in_comprehension: bool = False) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = None
            return  # their bodies have their own scope
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            in_comprehension = True
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names[node.target.id] = None
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if not in_comprehension:
                names[node.id] = None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name != "*":
                    names[(a.asname or a.name).split(".")[0]] = None
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names[node.name] = None
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names[node.name] = None
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names[node.rest] = None
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(dict.fromkeys(node.names))
        for child in ast.iter_child_nodes(node):
            visit(child, in_comprehension)

    for stmt in tree.body:
        visit(stmt)
    return list(names)


def global_names(cell: Cell) -> set[str]:
    """Cell names that stay the notebook's globals in the cell's function: those a function,
    lambda, method or generator defined in the cell uses (at a notebook's top level they are
    globals, looked up when called, not closures keeping the cell's values)."""
    found: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        for child in table.get_children():
            deferred = child.get_type() != "class" and child.get_name() not in _COMPREHENSIONS
            if deferred:
                found.update(s.get_name() for s in child.get_symbols() if s.is_global())
            walk(child)

    walk(symtable.symtable(cell.source, cell.filename, "exec"))
    return found & set(assigned_names(cell.tree))


_COMPREHENSIONS = ("listcomp", "setcomp", "dictcomp")


class _CellLevel(ast.NodeTransformer):
    """The cell's own statements as a function body: ``global x`` (a no-op at a notebook's top
    level) dropped, ``del x`` as ``x = __pt2_unset__`` (written back as a deletion), and
    ``except E as e`` keeping ``e`` bound (removed at the handler's end, as Python does)."""

    def visit_FunctionDef(self, node):  # other scopes: their statements are theirs
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_Global(self, node):
        return ast.copy_location(ast.Pass(), node)

    def visit_Delete(self, node):
        out: list[ast.stmt] = []
        for target in _flatten(node.targets):
            if isinstance(target, ast.Name):
                out.append(_assign(target.id, ast.Name(UNSET_ARG, ast.Load())))
            else:
                out.append(ast.Delete(targets=[target]))
        return [ast.copy_location(s, node) for s in out]

    def visit_ExceptHandler(self, node):
        self.generic_visit(node)
        if node.name:
            caught = f"__pt2_caught_{node.name}"
            first = ast.copy_location(_assign(node.name, ast.Name(caught, ast.Load())), node)
            last = ast.copy_location(_assign(node.name, ast.Name(UNSET_ARG, ast.Load())), node.body[-1])
            node.name, node.body = caught, [first, *node.body, last]
        return node


def _flatten(targets):
    for t in targets:
        if isinstance(t, (ast.Tuple, ast.List)):
            yield from _flatten(t.elts)
        else:
            yield t


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)


def cell_function_source_tree(
    cell: Cell, params: list[str], names: list[str], notebook_globals: set[str] = frozenset()
) -> ast.Module:
    """The module defining ``__pt2_cell__`` (see ``_magic``'s docstring), line numbers kept."""
    tree = _CellLevel().visit(copy.deepcopy(cell.tree))
    body = list(tree.body)
    value: ast.expr = ast.Constant(None)
    if body and isinstance(body[-1], ast.Expr):
        value = body.pop().value
    decl: list[ast.stmt] = [ast.Global(names=sorted(notebook_globals))] if notebook_globals else []
    init = [_assign(n, _initial(n)) for n in names if n not in params]
    values = ast.Dict(keys=[ast.Constant(n) for n in names], values=[ast.Name(n, ast.Load()) for n in names])
    ret = ast.Return(value=ast.Tuple(elts=[value, values], ctx=ast.Load()))
    fn = ast.FunctionDef(
        name=CELL_FUNCTION,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(p) for p in params],
            kwonlyargs=[ast.arg(UNSET_ARG), ast.arg(BUILTINS_ARG)],
            kw_defaults=[None, None],
            defaults=[],
        ),
        body=[*decl, *init, *body, ret],
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    mod = ast.Module(body=[fn], type_ignores=[])
    ast.fix_missing_locations(mod)
    return mod


def _initial(name: str) -> ast.expr:
    """A name the cell assigns, before it does: the builtin it shadows (``input = …``: read
    before, it is the builtin, as in a plain cell), else UNSET."""
    if hasattr(builtins, name):
        return ast.Subscript(ast.Name(BUILTINS_ARG, ast.Load()), ast.Constant(name), ast.Load())
    return ast.Name(UNSET_ARG, ast.Load())


@dataclass
class CellFunction:
    fn: types.FunctionType
    params: list[str]  # names the cell binds that the notebook already has: passed in
    names: list[str]  # names returned and written back
    notebook_globals: set[str]  # names kept as the notebook's globals (see global_names)
    seeded: dict[str, object]  # globals set before the call (Dynamo needs them to exist)

    def args(self, ns: dict) -> tuple:
        return tuple(ns[p] for p in self.params)

    @property
    def kwargs(self) -> dict:
        shadowed = {
            n: getattr(builtins, n) for n in self.names if n not in self.params and hasattr(builtins, n)
        }
        return {UNSET_ARG: UNSET, BUILTINS_ARG: shadowed}


def cell_function(cell: Cell, ns: dict, flags: int) -> CellFunction:
    notebook_globals = global_names(cell)
    names = [n for n in assigned_names(cell.tree) if n not in notebook_globals]
    params = [n for n in names if n in ns]  # `x = x + 1` reads the notebook's x
    tree = cell_function_source_tree(cell, params, names, notebook_globals)
    code = _plain_qualnames(compile(tree, cell.filename, "exec", flags=flags, dont_inherit=True))
    scratch: dict = {}
    exec(code, ns, scratch)  # noqa: S102 - defining the cell's function, globals = the namespace
    # Dynamo reads a global the frame stores before it existed from builtins (wrongly): give
    # each one a value first, the builtin it shadows or UNSET, taken away again if unchanged.
    seeded = {n: getattr(builtins, n, UNSET) for n in notebook_globals if n not in ns}
    return CellFunction(scratch[CELL_FUNCTION], params, names, notebook_globals, seeded)


def _plain_qualnames(code: types.CodeType) -> types.CodeType:
    """Functions and classes the cell defines get the qualnames a plain cell gives (``g``, not
    ``__pt2_cell__.<locals>.g``), so they pickle and print as in a plain cell."""

    def fix(value):
        if isinstance(value, types.CodeType):
            changes: dict = {"co_consts": tuple(fix(c) for c in value.co_consts)}
            if getattr(value, "co_qualname", "").startswith(_LOCALS):  # Python >= 3.11
                changes["co_qualname"] = value.co_qualname[len(_LOCALS) :]
            return value.replace(**changes)
        if isinstance(value, str) and value.startswith(_LOCALS):  # class bodies; 3.10 functions
            return value[len(_LOCALS) :]
        return value

    return fix(code)


def write_back(ns: dict, values: dict) -> None:
    """A value UNSET was never assigned on the path taken, or was deleted, and a builtin's own
    value needs no global: not in the notebook."""
    for n, v in values.items():
        if v is UNSET or v is getattr(builtins, n, UNSET):
            ns.pop(n, None)
        else:
            ns[n] = v


def clear_seeded(ns: dict, cf: CellFunction) -> None:
    for n in cf.notebook_globals:
        if ns.get(n, None) is UNSET or (n in cf.seeded and ns.get(n) is cf.seeded[n]):
            ns.pop(n, None)


def is_cell_level(code: types.CodeType, filename: str) -> bool:
    """The cell's function, or one of Dynamo's resume functions continuing it after a break."""
    return code.co_filename == filename and CELL_FUNCTION in code.co_name
