"""Words every view uses for the same things: a compile's function name, a duration, and ``where``:
every source location in one style."""

from __future__ import annotations

import functools
import os
import re
import sys

from compiler.analysis import resume_of


def display_name(name: str | None) -> str:
    """`torch_dynamo_resume_in_forward_at_18` -> `forward (resumed after line 18)`."""
    if not name:
        return "?"
    resumed = resume_of(name)
    return f"{resumed[0]} (resumed after line {resumed[1]})" if resumed else name


def secs(s: float | None) -> str:
    return "-" if s is None else (f"{s:.2f} s" if s >= 0.1 else f"{s * 1000:.0f} ms")


def cell_label(filename: str) -> str | None:
    """``Cell In[2]`` for a notebook cell's file, as IPython's own tracebacks name it."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    number = names.get(filename) if isinstance(names, dict) else None
    return f"Cell In[{number}]" if number is not None else None


_INSTALLED = re.compile(r"^(?:.*[/\\])?(?:site|dist)-packages[/\\]")  # a shared report's: site-packages/…


def where(filename: str | None, line: int | None) -> str:
    """``file:line`` as a user reads it: relative to the working directory; an installed
    package's file from its package (``transformers/modeling_utils.py:4769``, as torch's
    guard comments name it); a notebook cell as IPython names it (``Cell In[3], line 2``)."""
    if not filename:
        return "?"
    cell = cell_label(filename)
    if cell is not None:
        return f"{cell}, line {line}" if line is not None else cell
    name = _shown_path(filename, os.getcwd())
    return f"{name}:{line}" if line is not None else name


@functools.lru_cache(maxsize=4096)
def _shown_path(filename: str, cwd: str) -> str:
    """``where``'s file part (remembered: a big log's graphs name the same files per node)."""
    name = _INSTALLED.sub("", filename)
    if name == filename:
        try:
            rel = os.path.relpath(filename, cwd)
            name = rel if not rel.startswith("..") else filename
        except ValueError:
            name = filename
    return name


def where_source(source: str | None) -> str:
    """A graph node's ``file:line`` (as torch's graph code comments name it) in ``where``'s
    style: ``Cell In[2], line 8`` for a notebook cell."""
    if not source:
        return ""
    filename, sep, line = source.rpartition(":")
    return where(filename, int(line)) if sep and line.isdigit() else source


def break_site(b) -> str:
    """Where a graph break is shown: torch's own line for a break torch asked for inside its
    files (``torch/optim/optimizer.py:79``), else the program's line."""
    site = b.torch_site
    return where(site.filename, site.line) if site is not None else where(b.filename, b.line)


def torch_break_words(b) -> str | None:
    """``torch's own break (inside torch/optim/optimizer.py:79, reached from your train.py:13)``
    for a break torch asked for in its own code; None for any other."""
    site = b.torch_site
    if site is None:
        return None
    mine = b.user_frame
    reached = f", reached from your {where(mine.filename, mine.line)}" if mine is not None else ""
    return f"torch's own break (inside {where(site.filename, site.line)}{reached})"


# what follows a torch's-own break's words: torch's hints ("Remove the call") are not the user's
TORCH_BREAK_WHY = (
    "torch calls `torch._dynamo.graph_break()` here itself, on purpose: nothing in your code asks "
    "for this break, and there is nothing in it to change"
)
