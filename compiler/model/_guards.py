"""The guard tree torch prints for a compile (``Capture.guards``, Dynamo's
``dynamo_cpp_guards_str``), read into its guards: each guard's kind, the source of the manager
it sits under (as the user's code spells it), and its line. Managers name the source
(``GuardManager: source=L['x'], ...``), each guard line under them its kind
(``+- TENSOR_MATCH: check_tensor(...)  # code  # file:line``). Read where a view or an analysis
asks (``Capture.guard_list``), not stored: the list would repeat the tree's text (4 to 27% more
of a report). In the record's layer, so that the record reads its own tree."""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE = re.compile(r"^(?P<indent>[| ]*)\+- (?P<kind>\w+)(?::\s?(?P<rest>.*))?$")
_SOURCE_END = re.compile(r", (?:accessed_by|type)=")
_MANAGER = re.compile(r"(?:Root|Dict)?GuardManager$|KeyManager$|ValueManager$")


@dataclass(frozen=True)
class Guard:
    kind: str  # TENSOR_MATCH
    source: str  # what it protects, as the user spells it ("self.transformer.h.0.attn")
    line: str  # as torch prints it, without the tree drawing


def parse_guards(tree: str | None) -> list[Guard]:
    """The guards of a guard tree, each with the source of the manager it sits under."""
    out: list[Guard] = []
    sources: dict[int, str] = {}  # depth -> the source of the manager there
    for raw in (tree or "").splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        depth = len(m["indent"]) // 2
        rest = m["rest"] or ""
        if _MANAGER.match(m["kind"]):
            src = _source(rest)
            sources = {d: s for d, s in sources.items() if d < depth}
            if src is not None:
                sources[depth] = user_source(src)
            continue
        owner = max((d for d in sources if d < depth), default=None)
        source = sources[owner] if owner is not None else "(torch's global state and aliasing)"
        out.append(Guard(m["kind"], source, f"{m['kind']}: {rest}".strip()))
    return out


def _source(rest: str) -> str | None:
    """A manager's source: from its first ``source=`` to the first ``, accessed_by=`` or
    ``, type=`` after it (one lazy regex from every ``source=`` of a line was quadratic)."""
    at = rest.find("source=")
    end = _SOURCE_END.search(rest, at + 7) if at >= 0 else None
    return rest[at + 7 : end.start()] if end else None


def user_source(source: str) -> str:
    """torch's spelling of a source as the code spells it: ``L['self']._modules['h']._modules['0']``
    -> ``self.h.0``; ``G['torch']`` -> ``torch``; a parameter or buffer: its module."""
    s = re.sub(r"\._modules\['([^']*)'\]", r".\1", source)
    s = re.sub(r"\._(?:parameters|buffers)\['[^']*'\]$", "", s)  # a module's tensors: the module
    s = re.sub(r"\b[LG]\['([^']*)'\]", r"\1", s)
    return s
