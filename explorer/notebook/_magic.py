"""``%%compile``: thin sugar over ``compiler.recording()``.

    %%compile [--mode M] [--dynamic] [--fullgraph] [--backend B]
    <cell>

expands to (the cell as IPython transforms it — ``%magic``, ``!shell`` — keeping its own line
numbers; its globals are the notebook's)::

    def __pt2_cell__(<names the cell assigns that the notebook already has>, *, __pt2_unset__,
                     __pt2_builtins__):
        global <names that functions defined in the cell use>
        <every other name the cell assigns> = __pt2_unset__  # or __pt2_builtins__["input"]
        <cell>          # top-level `global x` dropped; `del x` is `x = __pt2_unset__`
        return <the cell's last expression, or None>, {"name": name, ...}

    with compiler.recording() as rec:
        result, names = torch.compile(__pt2_cell__, mode=M, dynamic=..., fullgraph=..., backend=B)(...)
    <the names the cell assigned are written back to the notebook>
    explorer.show(rec.report); result   # nothing shown if the cell ends with ";"

so that the cell means what it means as a plain cell:

- Before anything runs, the cell is parsed and compiled as a plain cell is: a SyntaxError
  (``return`` or ``yield`` outside a function too) is shown as IPython shows it. A cell that
  cannot mean the same inside a function is refused with one line (``await``, ``import *``,
  ``from __future__``, ``locals()``, ``%magics`` at its top level).
- Names are the function's locals, not globals: Dynamo compiles a frame's locals best (after a
  graph break it resumes only in frames holding tensors). The names are returned explicitly,
  which keeps them alive across graph breaks; a name unset on the path the cell took, or
  deleted, is not in the notebook afterwards. Names a function, lambda or method defined in
  the cell reads are the notebook's globals, as in a plain cell: later rebinding them changes
  what those functions see.
- Functions and classes defined in the cell get plain qualnames (``g``, not
  ``__pt2_cell__.<locals>.g``) and module ``__main__``: they pickle.
- If the cell raises, the names it assigned so far are written back (read from the cell's
  frame in the traceback), and the error shows the cell's frames as a plain cell's does.

``%%compile --would-recompile`` answers whether the cell's last line, a call ``f(x)`` of a
compiled function, would recompile, without calling it (explorer/notebook/_recompilecell.py);
``--check``, its old name, still works after a one-line note.

``%%compile --record`` runs the cell as written (as module code, like a plain cell) inside
``compiler.recording()``: for code that already calls torch.compile itself. Errors in the cell
propagate, after the partial recording is shown. ``--name NAME`` keeps the report as
``explorer.reports[NAME]``. More, and what is not the same as a plain cell: docs/magic.md.
"""

from __future__ import annotations

import ast
import copy
import html
import re
import sys

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

import compiler
from compiler._viewer import call_state, remember_benchmark_subject

from . import _cell, _celltb
from ._cell import CELL_FUNCTION, UNSET, UNSET_ARG, assigned_names  # noqa: F401 - re-exported
from ._progress import CellProgress

reports: dict[str, compiler.Report] = {}


def _option_arguments(magic):
    """The recording options' flags, then the benchmark's (``--bench: ``), as ``@argument``s:
    declared once in compiler (``RecordOptions``, ``BenchOptions``), with the CLI's and the API's."""
    flags = [*compiler.RecordOptions.flags(), *compiler.BenchOptions.flags(prefix="--bench: ")]
    for flag, kwargs in reversed(flags):  # decorators apply innermost first
        magic = argument(*flag, **kwargs)(magic)
    return magic


@magics_class
class CompileMagics(Magics):
    @magic_arguments()
    @argument("--mode", default=None, help="torch.compile mode, e.g. reduce-overhead, max-autotune")
    @argument("--dynamic", action="store_true", default=None, help="torch.compile(dynamic=True)")
    @argument("--fullgraph", action="store_true", help="torch.compile(fullgraph=True)")
    @argument("--backend", default="inductor", help="torch.compile backend (default inductor)")
    @argument("--record", action="store_true", help="run the cell as written; record its torch.compile calls")
    @argument("--name", default=None, help="keep the report as explorer.reports[NAME]")
    @argument("--diff-with", default=None, metavar="NAME", help="then diff with explorer.reports[NAME]")
    @argument("--bench", action="store_true", help="then time the cell eager vs compiled (report.benchmark)")
    @argument(
        "--numerics",
        action="store_true",
        help="then compare the cell compiled against eager: where it diverges and why (report.numerics)",
    )
    @_option_arguments
    @argument(
        "--would-recompile",
        action="store_true",
        help="would the cell's last call recompile? (nothing is compiled)",
    )
    @argument("--check", action="store_true", help="the old name of --would-recompile")
    @argument("--run", action="store_true", help="--would-recompile: make the call under fail_on_recompile")
    @cell_magic
    def compile(self, line: str, cell: str):
        args = parse_argstring(self.compile, line)
        if args.check:
            print("%%compile --check is now %%compile --would-recompile", file=sys.stderr)
        if args.would_recompile or args.check:  # explorer/notebook/_recompilecell.py
            from ._recompilecell import recompile_cell

            return recompile_cell(self.shell, cell, run=args.run)
        from ..pages._widgets import Explorer

        shell = self.shell
        for flag in ("bench", "numerics"):
            if getattr(args, flag) and args.record:
                raise UsageError(
                    f"%%compile --{flag} needs the compiled cell: it does not work with --record"
                )
        # what a plain cell would be, or its SyntaxError, or a refusal: before anything runs;
        # linecache knows the cell (break context lines work), named like IPython's: Cell In[n]
        source = _cell.parse(shell, cell, _running_cell_number(shell))
        reason = None if args.record else _cell.refusal(source, shell.user_ns)
        if reason:
            raise UsageError(f"%%compile: {reason} — run it as a plain cell (or with --record)")
        progress = CellProgress(display)
        state = call_state() if args.numerics else None  # what the cell runs under (RNG too)
        rec = compiler.recording(on_progress=progress, **compiler.RecordOptions.flagged(args))
        result = None
        subject: dict = {}
        try:
            with rec:
                if args.record:
                    result = _run_as_written(source, shell)
                else:
                    result = _run_compiled(source, shell, args, subject)
            if subject and rec.report is not None:
                remember_benchmark_subject(rec.report, **subject)
            if args.bench:
                compiler.benchmark(rec.report, progress=progress.bench, **compiler.BenchOptions.flagged(args))
            if args.numerics and subject:  # the cell's function again, eager and compiled
                compiler.numerics(
                    subject["eager"],
                    *subject["args"],
                    **subject["kwargs"],
                    state=state,
                    compile_options=subject["compile_kwargs"],
                    name="the cell",
                    report=rec.report,
                )
        finally:
            report = rec.report
            if report is None:  # nothing to show: the progress goes
                progress.done()
            else:
                base = reports.get(args.diff_with) if args.diff_with else None  # before --name replaces it
                if args.name:
                    reports[args.name] = report
                shell.user_ns["_pt2_report"] = report
                progress.done(Explorer(report, title=f"%%compile {line}".strip()))
                if args.diff_with:
                    _show_diff_with(args.diff_with, base, report)
        return None if source.quiet else result


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
    from ..diffs._diff import diff

    display(diff(base, report, labels=(name, "this cell")))


def _run_compiled(cell: _cell.Cell, shell, args, subject: dict | None = None):
    import torch

    ns = shell.user_ns
    cf = _cell.cell_function(cell, ns, shell.compile.flags)
    kwargs = {"backend": args.backend, "fullgraph": args.fullgraph, "dynamic": args.dynamic}
    if args.mode:
        kwargs["mode"] = args.mode
    compiled = torch.compile(cf.fn, **kwargs)
    call_args = cf.args(ns)
    if subject is not None:  # what compiler.benchmark(report) will time (the Benchmark button, --bench)
        subject.update(
            eager=cf.fn, compiled=compiled, args=call_args, kwargs=cf.kwargs, compile_kwargs=kwargs
        )
    ns.update(cf.seeded)
    try:
        result, values = compiled(*call_args, **cf.kwargs)
    except BaseException as e:
        # as a plain cell: what the cell assigned before it raised stays assigned
        frame = _celltb.innermost_cell_frame(e.__traceback__, cell.filename)
        if frame is not None:
            held = frame.tb_frame.f_locals
            _cell.write_back(ns, {n: held[n] for n in cf.names if n in held})
        start = frame if frame is not None else _celltb.while_compiling(e.__traceback__)
        raise _celltb.as_plain_cell(e, shell, start)  # noqa: B904 - the same exception, re-raised
    finally:
        _cell.clear_seeded(ns, cf)
    _cell.write_back(ns, values)
    return result


def _run_as_written(cell: _cell.Cell, shell):
    tree = copy.deepcopy(cell.tree)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    ns = shell.user_ns
    try:  # shell.compile: keeps the notebook's `from __future__` imports, as a plain cell does
        exec(shell.compile(tree, cell.filename, "exec"), ns)  # noqa: S102 - the user's cell, as IPython would
        return eval(shell.compile(last, cell.filename, "eval"), ns) if last is not None else None  # noqa: S307
    except BaseException as e:  # shown from the cell's frame, as a plain cell's
        raise _celltb.as_plain_cell(e, shell, _celltb.after_ours(e.__traceback__))  # noqa: B904


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


_MAGIC_LINE = re.compile(r"%%compile(\s|$)")


def _check_compile_cells(shell):
    """An input transformer: a ``%%compile`` cell that is not valid Python fails while IPython
    transforms it, before anything runs, and IPython shows its SyntaxError as for a plain cell
    (an error the magic raised would come with the magic's frames)."""

    def check(lines: list[str]) -> list[str]:
        if lines and _MAGIC_LINE.match(lines[0]):
            _cell.parse(shell, "".join(lines[1:]), shell.execution_count)
        return lines

    check.has_side_effects = True  # not while IPython only asks whether the input is complete
    check.pt2_explorer = True
    return check


def load_ipython_extension(ip) -> None:
    ip.register_magics(CompileMagics)
    transforms = ip.input_transformers_cleanup
    transforms[:] = [t for t in transforms if not getattr(t, "pt2_explorer", False)]
    transforms.append(_check_compile_cells(ip))
