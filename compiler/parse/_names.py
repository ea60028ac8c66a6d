"""The names torch gives things, parsed and printed in one place: compile ids, the code
objects Dynamo makes after a graph break, each rank's file in a distributed job, its version.

Compile ids are torch's ``CompileId`` as it prints them (torch/_guards.py): ``0/1`` (frame 0,
its second compile), ``!0/3/0`` (Dynamo compiling Compiled Autograd's capture 0), with the
recording's own prefix ``1:`` after a ``torch._dynamo.reset()`` restarted torch's numbering.
The report keeps them as these strings; everything that reads one goes through ``CompileId``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

# the code Dynamo makes after a graph break (named in the model, beside the frames' callers)
from ..model._callsites import resume_of  # noqa: F401

_ID = r"(?:(?P<gen>\d+):)?(?:!(?P<ca>\d+)/)?(?P<frame>\d+)/(?P<compile>\d+)"
# as torch prints a compile id inside a text, and a reason without the entry it names (in the model:
# the loader reads a recompile's short reasons)
from ..model._reasons import TORCH_ID, without_entry  # noqa: F401, E402

_WHOLE = re.compile(rf"^\[?{_ID}(?:_(?P<attempt>\d+))?\]?$")
_TORCH_WHOLE = re.compile(TORCH_ID)


def is_torch_id(text: str) -> bool:
    """Is ``text`` a compile id as torch prints one (``0/1``, ``!0/3/0``), and nothing else?"""
    return _TORCH_WHOLE.fullmatch(text) is not None


@dataclass(frozen=True)
class CompileId:
    """One compile: torch's frame and compile counters, the Compiled Autograd capture it
    compiles (if any), the restart attempt, and our generation (``torch._dynamo.reset()``s
    seen before it in one recording)."""

    frame: int
    compile: int
    autograd: int | None = None  # torch's compiled_autograd_id
    attempt: int = 0  # torch restarts a frame's analysis: "0/1_1" (printed only when asked)
    generation: int = 0

    @classmethod
    def parse(cls, text: str) -> CompileId | None:
        """``"0/1"``, ``"[0/1]"``, ``"!0/3/0"``, ``"1:0/1"``, ``"0/1_2"``; None for anything else."""
        m = _WHOLE.match(text.strip()) if isinstance(text, str) else None
        if not m:
            return None
        return cls(
            int(m["frame"]),
            int(m["compile"]),
            None if m["ca"] is None else int(m["ca"]),
            int(m["attempt"] or 0),
            int(m["gen"] or 0),
        )

    @classmethod
    def of_event(cls, metadata: dict) -> CompileId | None:
        """From a structured-trace event's context keys (None for an event of no compile)."""
        fid, cid = metadata.get("frame_id"), metadata.get("frame_compile_id")
        if fid is None or cid is None:
            return None
        return cls(
            int(fid), int(cid), metadata.get("compiled_autograd_id"), int(metadata.get("attempt") or 0)
        )

    @property
    def torch(self) -> str:
        """As torch prints it: ``0/1``, ``!0/3/0`` (no generation, no attempt)."""
        own = f"{self.frame}/{self.compile}"
        return own if self.autograd is None else f"!{self.autograd}/{own}"

    @property
    def capture(self) -> str | None:
        """The Compiled Autograd capture this compiles, with the generation: ``!0``, ``1:!0``."""
        if self.autograd is None:
            return None
        return f"!{self.autograd}" if self.generation == 0 else f"{self.generation}:!{self.autograd}"

    def in_generation(self, generation: int) -> CompileId:
        return CompileId(self.frame, self.compile, self.autograd, self.attempt, generation)

    def __str__(self) -> str:
        """The report's spelling: torch's, after ``N:`` from the second generation on."""
        return self.torch if self.generation == 0 else f"{self.generation}:{self.torch}"

    def sort_key(self) -> tuple[int, int, int, int]:
        return (self.generation, self.autograd if self.autograd is not None else -1, self.frame, self.compile)


# ---- a source: what a guard or a symbol stands for in the frame ----------------------

_LOCAL_SCOPE = re.compile(r"L\[\s*['\"]([^'\"\]]*)['\"]\s*\]")  # torch's L['x'] (strip_local_scope)


def without_local_scope(source: str | None) -> str | None:
    """A source as torch prints it, without its local scope, as the user's code spells it:
    ``L['kwargs']['input_ids'].size()[1]`` -> ``kwargs['input_ids'].size()[1]`` (a dynamic
    dimension's ``Symbol.source``, a ``Specialization``'s sources); None stays None."""
    return None if source is None else _LOCAL_SCOPE.sub(r"\1", source)


_SIZE_SYMBOL = re.compile(r"s\d+")  # torch.utils._sympy.symbol.SymT.SIZE's names


def is_size_symbol(name: str) -> bool:
    """Is ``name`` one torch gives a backed size symbol (``s77``), as a runnable repro binds
    them at its top (``s77 = 12``)?"""
    return _SIZE_SYMBOL.fullmatch(name) is not None


# ---- each rank's file ------------------------------------------------------------------

# torch names each rank's log dedicated_log_torch_trace_rank_N_<suffix>.log (or no suffix)
_LOG_RANK = re.compile(r"rank_(\d+)(?:_|\.|$)")
# what `pt2-explorer record --json out/run.json` writes on rank N: out/run.rankN.json
_REPORT_RANK = re.compile(r"\.rank(\d+)\.json(?:\.gz)?$")


def rank_of_log(path: str) -> int | None:
    """The rank in a TORCH_TRACE log's file name, where torch put one."""
    m = _LOG_RANK.search(os.path.basename(path))
    return int(m.group(1)) if m else None


def rank_of_report(path: str) -> int | None:
    """The rank in a report file's name that ``record`` wrote under torchrun."""
    m = _REPORT_RANK.search(os.path.basename(path))
    return int(m.group(1)) if m else None


def rank_path(path: str, rank: int) -> str:
    """``out/run.json`` -> ``out/run.rank1.json``: each rank's report under its own name."""
    root, ext = os.path.splitext(path)
    if ext == ".gz":  # run.json.gz -> run.rank1.json.gz
        root, inner = os.path.splitext(root)
        ext = inner + ext
    return f"{root}.rank{rank}{ext}"


# ---- torch's version -------------------------------------------------------------------

_VERSION = re.compile(r"(\d+)\.(\d+)")


def major_minor(version: str) -> tuple[int, int] | None:
    """``"2.8.0+cu128"`` -> ``(2, 8)``; None where it starts with no ``N.N``."""
    m = _VERSION.match(version)
    return (int(m.group(1)), int(m.group(2))) if m else None
