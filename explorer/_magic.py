"""``%%compile``: thin sugar over ``compiler.recording()``.

    %%compile [--mode M] [--dynamic] [--fullgraph] [--backend B]
    <cell>

expands to (the cell keeps its own line numbers, and its globals are the notebook's)::

    def __pt2_cell__(<names the cell assigns that the notebook already has>, *, __pt2_unset__):
        <every other name the cell assigns> = __pt2_unset__
        <cell>
        return <the cell's last expression, or None>, {"name": name, ...}

    with compiler.recording() as rec:
        result, names = torch.compile(__pt2_cell__, mode=M, dynamic=..., fullgraph=..., backend=B)(...)
    <the names the cell assigned are written back to the notebook>
    explorer.show(rec.report); result

(Local names, not ``global`` statements: Dynamo cannot resume after a graph break with
pending global writes. The names are returned explicitly, which keeps them alive across
graph breaks; a name still unset on the path the cell took is not written back. If the cell
raises, nothing is written back.)

``%%compile --record`` runs the cell as written inside ``compiler.recording()``: for code that
already calls torch.compile itself. Errors in the cell propagate unchanged, after the
partial recording is shown. ``--name NAME`` keeps the report as ``explorer.reports[NAME]``.
"""

from __future__ import annotations

import ast
import html
import sys
import time

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import HTML, display

import compiler

reports: dict[str, compiler.Report] = {}
CELL_FUNCTION = "__pt2_cell__"


def assigned_names(tree: ast.Module) -> list[str]:
    """Names a cell binds at its own level (not inside functions, classes, comprehensions)."""
    names: dict[str, None] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = None
            return  # their bodies have their own scope
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names[node.id] = None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names[(a.asname or a.name).split(".")[0]] = None
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(dict.fromkeys(node.names))
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in tree.body:
        visit(stmt)
    return list(names)


UNSET_ARG = "__pt2_unset__"


class _Unset:
    def __repr__(self) -> str:
        return "<not assigned by the cell>"


UNSET = _Unset()


def cell_function_source_tree(cell: str, filename: str, params: list[str], names: list[str]) -> ast.Module:
    """The module defining ``__pt2_cell__`` (see the module docstring), line numbers kept."""
    tree = ast.parse(cell, filename=filename)
    body = list(tree.body)
    value: ast.expr = ast.Constant(None)
    if body and isinstance(body[-1], ast.Expr):
        value = body.pop().value
    deleted = _deleted_names(tree)
    returned = [n for n in names if n not in deleted]
    init = [
        ast.Assign(targets=[ast.Name(n, ast.Store())], value=ast.Name(UNSET_ARG, ast.Load()))
        for n in returned
        if n not in params
    ]
    values = ast.Dict(
        keys=[ast.Constant(n) for n in returned], values=[ast.Name(n, ast.Load()) for n in returned]
    )
    ret = ast.Return(value=ast.Tuple(elts=[value, values], ctx=ast.Load()))
    stmts: list[ast.stmt] = [*init, *body, ret]
    fn = ast.FunctionDef(
        name=CELL_FUNCTION,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(p) for p in params],
            kwonlyargs=[ast.arg(UNSET_ARG)],
            kw_defaults=[None],
            defaults=[],
        ),
        body=stmts,
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    mod = ast.Module(body=[fn], type_ignores=[])
    ast.fix_missing_locations(mod)
    return mod


class _Progress:
    """ "compiling [0/0]: fuse… 3.2 s" while the cell runs (updated at most 5 times a second)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.last = 0.0
        self.handle = display(HTML("<i>PT2 Explorer: running the cell…</i>"), display_id=True)

    def __call__(self, compile_id: str, stage: str) -> None:
        now = time.perf_counter()
        if now - self.last < 0.2:
            return
        self.last = now
        self.handle.update(
            HTML(f"<i>PT2 Explorer: compiling [{compile_id}], stage {stage} · {now - self.start:.1f} s</i>")
        )

    def bench(self, text: str, final: bool = False) -> None:
        now = time.perf_counter()
        if final or now - self.last >= 0.2:
            self.last = now
            self.handle.update(HTML(f"<i>PT2 Explorer: {html.escape(text)}</i>"))

    def done(self, widget) -> None:
        self.handle.update(widget)


@magics_class
class CompileMagics(Magics):
    @magic_arguments()
    @argument("--mode", default=None, help="torch.compile mode, e.g. reduce-overhead, max-autotune")
    @argument("--dynamic", action="store_true", default=None, help="torch.compile(dynamic=True)")
    @argument("--fullgraph", action="store_true", help="torch.compile(fullgraph=True)")
    @argument("--backend", default="inductor", help="torch.compile backend (default inductor)")
    @argument("--record", action="store_true", help="run the cell as written; record its torch.compile calls")
    @argument("--name", default=None, help="keep the report as explorer.reports[NAME]")
    @argument("--keep-caches", action="store_true", help="leave compile caches on (hits skip stages)")
    @argument("--diff-with", default=None, metavar="NAME", help="then diff with explorer.reports[NAME]")
    @argument("--bench", action="store_true", help="then time the cell eager vs compiled (report.benchmark)")
    @argument("--reps", type=int, default=None, help="--bench: timed calls per arm (default: about 1 s)")
    @argument("--mutates", action="store_true", help="--bench: the cell changes state in place; restore it")
    @cell_magic
    def compile(self, line: str, cell: str):
        args = parse_argstring(self.compile, line)
        from ._widgets import Explorer

        shell = self.shell
        # linecache knows the cell (break context lines work), named like IPython's: Cell In[n]
        filename = shell.compile.cache(cell, _running_cell_number(shell))
        progress = _Progress()
        rec = compiler.recording(caches=args.keep_caches, on_stage=progress)
        result = None
        subject: dict = {}
        try:
            with rec:
                if args.record:
                    result = _run_as_written(cell, filename, shell.user_ns)
                else:
                    result = _run_compiled(cell, filename, shell.user_ns, args, subject)
            if subject and rec.report is not None:
                from compiler._bench import remember

                remember(rec.report, **subject)
            if args.bench:
                if not subject:
                    raise ValueError(
                        "%%compile --bench needs the compiled cell: it does not work with --record"
                    )
                rec.report.benchmark(reps=args.reps, mutates=args.mutates, progress=progress.bench)
        finally:
            report = rec.report
            if report is not None:
                base = reports.get(args.diff_with) if args.diff_with else None  # before --name replaces it
                if args.name:
                    reports[args.name] = report
                shell.user_ns["_pt2_report"] = report
                progress.done(Explorer(report, title=f"%%compile {line}".strip()))
                if args.diff_with:
                    _show_diff_with(args.diff_with, base, report)
        return result


def _show_diff_with(name: str, base, report) -> None:
    """``--diff-with NAME``: this cell's report against the one kept under NAME (below the
    explorer); an unknown NAME is said, and nothing else is lost."""
    from IPython.display import HTML, display

    if base is None:
        known = ", ".join(sorted(reports)) or "none yet"
        display(
            HTML(
                f"<b>--diff-with {html.escape(name)}</b>: no report kept under that name "
                f"(kept: {html.escape(known)}; keep one with %%compile --name NAME)"
            )
        )
        return
    from ._diff import diff

    display(diff(base, report, labels=(name, "this cell")))


def _deleted_names(tree: ast.Module) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}


def _run_compiled(cell: str, filename: str, ns: dict, args, subject: dict | None = None):
    import torch

    tree = ast.parse(cell, filename=filename)
    names = assigned_names(tree)
    params = [n for n in names if n in ns]  # `x = x + 1` reads the notebook's x
    code = compile(cell_function_source_tree(cell, filename, params, names), filename, "exec")
    scratch: dict = {}
    exec(code, ns, scratch)  # noqa: S102 - defining the cell's function, globals = the namespace
    fn = scratch[CELL_FUNCTION]
    kwargs = {"backend": args.backend, "fullgraph": args.fullgraph, "dynamic": args.dynamic}
    if args.mode:
        kwargs["mode"] = args.mode
    compiled = torch.compile(fn, **kwargs)
    call_args = tuple(ns[p] for p in params)
    if subject is not None:  # what report.benchmark() will time (the Benchmark button, --bench)
        subject.update(
            eager=fn, compiled=compiled, args=call_args, kwargs={UNSET_ARG: UNSET}, compile_kwargs=kwargs
        )
    result, values = compiled(*call_args, **{UNSET_ARG: UNSET})
    for n, v in values.items():  # names not assigned on the path the cell took stay as they were
        if v is not UNSET:
            ns[n] = v
    for n in _deleted_names(tree):
        ns.pop(n, None)
    return result


def _run_as_written(cell: str, filename: str, ns: dict):
    tree = ast.parse(cell, filename=filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), ns)  # noqa: S102 - the user's cell, as IPython would
    return eval(compile(last, filename, "eval"), ns) if last is not None else None  # noqa: S307


def _running_cell_number(shell) -> int:
    """The In[n] of the cell that called the magic (IPython has already counted it)."""
    names = getattr(shell.compile, "_filename_map", {})
    frame = sys._getframe(1)
    while frame is not None:
        number = names.get(frame.f_code.co_filename)
        if number is not None:
            return number
        frame = frame.f_back
    return shell.execution_count


def load_ipython_extension(ip) -> None:
    ip.register_magics(CompileMagics)
