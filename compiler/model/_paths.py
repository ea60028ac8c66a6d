"""Where a file belongs: torch's own code, an installed library or the standard library, or the
program's own (``StackFrame.kind``, the user's innermost frame of a break). Paths of this
machine and, by their layout, of the machine that wrote a log; torch is found, never imported."""

from __future__ import annotations

import os
import re
import sysconfig


def torch_dir() -> str | None:
    """The installed torch package's directory (without importing torch)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "")


_TORCH_PREFIXES = tuple(p for p in (torch_dir(),) if p)
# paths from other machines' logs: anything inside a site-packages/torch tree (a shared report's
# paths start there: compiler/model/_relpaths.py)
_TORCH_PATH = re.compile(r"(?:^|[/\\])(?:site|dist)-packages[/\\](?:torch|functorch)[/\\]")
# installed packages and the standard library (any machine's layout)
_LIBRARY_PATH = re.compile(r"(?:^|[/\\])(?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d[\d.]*[/\\]")
# the standard library, installed packages, and the environment's console-script launchers
# (``.venv/bin/pytest``, ``bin/torchrun``: an installed package's entry point, not the program)
_STDLIB = tuple(
    os.path.join(p, "") for p in {sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "scripts")} if p
)


def is_user_file(filename: str) -> bool:
    """Not torch's own code (user code in torch's sense: the libraries a program calls count)."""
    if filename.startswith(_TORCH_PREFIXES) or _TORCH_PATH.search(filename):
        return False
    return not filename.startswith("<frozen ")


def frame_kind(filename: str) -> str:
    """``torch`` (torch's own files), ``library`` (installed packages, the standard library)
    or ``user`` (the program's own files, notebook cells)."""
    if not is_user_file(filename):
        return "library" if filename.startswith("<frozen ") else "torch"
    if filename.startswith(_STDLIB) or _LIBRARY_PATH.search(filename):
        return "library"
    return "user"
