"""Which files are this package's own and which run the program without being it: the path
classifier that keeps PT2 Explorer's, runpy's and IPython's frames out of what a view shows
(``machinery``), and out of a recorded stack (``run/_program.py: without_launcher``)."""

from __future__ import annotations

import os
import re
import runpy

# this package's own files (compiler/, explorer/): never shown as the program's frames
OWN_DIRS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), d, "")
    for d in ("explorer", "compiler")
)


# what runs a notebook cell or a script, not the program: IPython's and the kernel's machinery,
# the event loop, the console script that started `pt2-explorer`
_MACHINERY = re.compile(
    r"[/\\](?:IPython|ipykernel|tornado|asyncio|jupyter_client|traitlets|zmq)[/\\]|[/\\]bin[/\\]pt2-explorer$"
)


def ours(filename: str) -> bool:
    """This package's own file, or runpy's (what started the program under ``python -m``)."""
    return filename.startswith(OWN_DIRS) or filename in (runpy.__file__, "<frozen runpy>")


def machinery(filename: str) -> bool:
    """A frame that is not the program's, nor a library it called: this package's own files,
    runpy, the console script, IPython's and ipykernel's frames that run a cell."""
    return ours(filename) or bool(_MACHINERY.search(filename))
