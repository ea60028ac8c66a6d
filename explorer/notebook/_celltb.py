"""An error in a ``%%compile`` cell, shown as a plain cell shows it.

The exception is re-raised with its traceback starting at the cell (the magic's frames,
torch.compile's wrapper and the frames Dynamo's resume functions only pass it through are
dropped), and IPython's ``_render_traceback_`` hook renders that traceback with the shell's own
formatter, the cell's frames without the function name a plain cell's frames do not have.
"""

from __future__ import annotations

import os
import re
import types

from IPython.core.ultratb import FormattedTB

from ._cell import CELL_FUNCTION, is_cell_level

_OURS = ("explorer.notebook._magic", "explorer.notebook._cell", "explorer.notebook._celltb")

# "Cell In[3], line 2, in __pt2_cell__(x, __pt2_unset__)" (Context, Verbose) or
# "Cell In[3], line 2 in torch_dynamo_resume_in___pt2_cell___at_1" (Plain), colours or not
_CELL_FUNCTION_HEADER = re.compile(
    r"^(?P<keep>.*Cell.*In\[\d+\].*line \d+(?:\x1b\[[0-9;]*m)*),? in (?:\x1b\[[0-9;]*m)*"
    rf"(?:torch_dynamo_resume_in_\w*)?{CELL_FUNCTION}[^\n]*",
    re.MULTILINE,
)


def innermost_cell_frame(tb: types.TracebackType | None, filename: str) -> types.TracebackType | None:
    """The entry of the cell's own frame that was running when it raised: after a graph
    break that is a resume function's (it holds the cell's names as they were then)."""
    found = None
    while tb is not None:
        if is_cell_level(tb.tb_frame.f_code, filename):
            found = tb
        tb = tb.tb_next
    return found


def as_plain_cell(exc: BaseException, shell, start: types.TracebackType | None) -> BaseException:
    """``exc`` with its traceback starting at ``start`` (None: no frames), displayed from
    there by IPython."""
    try:
        exc._render_traceback_ = lambda: _render(shell, exc)  # IPython's hook, on this instance
    except (AttributeError, TypeError):  # an exception type without a __dict__
        pass
    return exc.with_traceback(start)


def while_compiling(tb: types.TracebackType | None) -> types.TracebackType | None:
    """For an error Dynamo raised while compiling the cell (no frame of the cell ran): the
    frames after ours that are not torch's own (a callback of the user's, a recorder's), as
    Dynamo itself keeps its frames for ``torch._dynamo.config.verbose``; its message says
    where in the cell (``from user code: … line N``)."""
    import torch

    tb = after_ours(tb)
    if torch._dynamo.config.verbose:
        return tb
    torch_dir = os.path.dirname(torch.__file__) + os.sep
    kept = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(torch_dir):
            kept.append(tb)
        tb = tb.tb_next
    chain = None
    for t in reversed(kept):
        chain = types.TracebackType(chain, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return chain


def after_ours(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback after the last frame of the magic's own code."""
    rest = tb
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") in _OURS:
            rest = tb.tb_next
        tb = tb.tb_next
    return rest


def _render(shell, exc: BaseException) -> list[str]:
    # the traceback as it reached IPython: the magic's frames and IPython's above the cell's
    tb = after_ours(exc.__traceback__)
    try:
        stb = shell.InteractiveTB.structured_traceback(type(exc), exc, tb, tb_offset=0)
    except Exception:
        # stack_data (Context, Verbose) hashes each frame's code, and after a graph break inside
        # a function the cell calls, Dynamo's code for the cell holds a dict constant: IPython's
        # Plain mode (as `%xmode Plain` shows it) does not hash
        plain = FormattedTB(mode="Plain", theme_name=shell.colors)
        stb = [plain.stb2text(plain.structured_traceback(type(exc), exc, tb))]
    return [_CELL_FUNCTION_HEADER.sub(r"\g<keep>", s) for s in stb]
