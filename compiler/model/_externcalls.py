"""The extern calls of Inductor's wrapper code (``extern_kernels.mm``, ``torch.ops.aten.…``),
read once: when the report is built (``OutputCode.extern_calls``), and when a report written
before it held them loads (``with_extern_calls``, one of ``UPGRADES``): in the file form's
layer, so that the loader reaches it."""

from __future__ import annotations

import re
from typing import Any

from ._refill import refilled

# a call in the wrapper's code (not a comment): Inductor's extern kernels, ATen fallbacks;
# found where their literal prefix is (a search the regex engine makes fast), then matched
_PREFIX = re.compile(r"(?:extern_kernels|torch\.ops\.aten)\.")
_EXTERN = re.compile(r"(extern_kernels\.\w+|torch\.ops\.aten\.\w+(?:\.\w+)?)\(")
_WORD = re.compile(r"\w")


def extern_calls(code: str) -> list[str]:
    """The extern calls of wrapper code: the first of each line that is not a comment (found
    by one search for the calls, not a match tried at every line: a big log's wrappers are
    megabytes)."""
    calls, line = [], -1
    for p in _PREFIX.finditer(code):
        at = p.start()
        m = _EXTERN.match(code, at) if not (at and _WORD.match(code, at - 1)) else None  # at a word's start
        if m is None:
            continue
        start = code.rfind("\n", 0, at) + 1
        if start != line:
            line = start
            if not code[start : m.start()].lstrip().startswith("#"):
                calls.append(m[1])
    return calls


def with_extern_calls(report: Any) -> Any:
    """A report's JSON form with each wrapper module's ``extern_calls`` (reports written before
    the build read them). ``report`` itself is left as it was; a part not of the schema's shape
    is kept for the schema check to name."""
    return refilled(report, "compiles", _missing, _read)


def _outputs(c: Any) -> list:
    codegen = ((c.get("stages") or {}) if isinstance(c, dict) else {}).get("codegen")
    outputs = codegen.get("output_code") if isinstance(codegen, dict) else None
    return outputs if isinstance(outputs, list) else []


def _old(o: Any) -> bool:
    # the file form leaves an empty tuple out: a module without the key and without calls is as
    # the build made it
    return isinstance(o, dict) and "extern_calls" not in o and isinstance(o.get("code"), str)


def _missing(c: Any) -> bool:
    return any(_old(o) and extern_calls(o["code"]) for o in _outputs(c))


def _read(c: dict) -> dict:
    outputs = [{**o, "extern_calls": extern_calls(o["code"])} if _old(o) else o for o in _outputs(c)]
    stages = c["stages"]
    return {**c, "stages": {**stages, "codegen": {**stages["codegen"], "output_code": outputs}}}
