"""``%%compile --would-recompile``: would this call recompile? The cell's last line is one
call of a compiled function or module, ``f(a, b=c)``; it expands to

    <the cell's earlier lines, run as a plain cell>
    explorer.would_recompile(f, a, b=c)

``f`` and the arguments are evaluated in the notebook (once); ``f`` itself is not called:
torch's guards are evaluated for the arguments (compiler/bench/_recheck.py).
``--would-recompile --run`` calls it under torch's fail_on_recompile stance instead (frames
after a graph break too)."""

from __future__ import annotations

import ast

from IPython.core.error import UsageError

import compiler


def recompile_cell(shell, cell: str, run: bool = False) -> compiler.types.RecompileCheck | None:
    try:
        tree = ast.parse(cell)
    except SyntaxError as e:
        raise UsageError(f"%%compile --would-recompile: line {e.lineno}: {e.msg}") from None
    last = tree.body[-1] if tree.body else None
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
        raise UsageError("%%compile --would-recompile: the cell's last line must be a call, e.g. model(x)")
    call = last.value
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise UsageError("%%compile --would-recompile: write the call's arguments out (no *args or **kwargs)")
    if tree.body[:-1]:
        result = shell.run_cell(ast.unparse(ast.Module(tree.body[:-1], type_ignores=[])))
        if not result.success:  # IPython has shown the error, as for a plain cell
            return None
    ns = shell.user_ns

    def value(node):
        return eval(compile(ast.Expression(node), "<%%compile --would-recompile>", "eval"), ns)  # noqa: S307 - the user's own cell

    fn = value(call.func)
    args = [value(a) for a in call.args]
    kwargs = {k.arg: value(k.value) for k in call.keywords}
    try:
        return compiler.would_recompile(fn, *args, run=run, **kwargs)
    except compiler.NotCompiledError as e:
        raise UsageError(f"%%compile --would-recompile: {e}") from None
