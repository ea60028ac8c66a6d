"""Parsers for the texts torch writes: graph-break reasons, recompile reasons, guard trees,
and Inductor's output code (split into kernels)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from ._report import StackFrame


def _torch_dirs() -> tuple[str, ...]:
    try:
        import torch

        return (os.path.dirname(torch.__file__) + os.sep,)
    except Exception:  # pragma: no cover - torch is a hard dependency
        return ()


_TORCH_PREFIXES = _torch_dirs()
# paths from other machines' logs: anything inside a site-packages/torch tree
_TORCH_PATH = re.compile(r"[/\\](?:site|dist)-packages[/\\](?:torch|functorch)[/\\]")


def is_user_file(filename: str) -> bool:
    if filename.startswith(_TORCH_PREFIXES) or _TORCH_PATH.search(filename):
        return False
    return not filename.startswith("<frozen ")


# ---- graph breaks ------------------------------------------------------------------

_TB_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+)$')
_GB_ID = re.compile(r"/gb/(gb\d+)\.html", re.I)
_HEADER_SITE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)$")


@dataclass
class BreakEvent:
    type: str
    reason: str
    explanation: str | None
    hints: tuple[str, ...]
    user_stack: tuple[StackFrame, ...]
    filename: str | None
    line: int | None
    gb_id: str | None


def parse_graph_break(text: str) -> BreakEvent:
    lines = text.splitlines()
    reason_idx = next((i for i, ln in enumerate(lines) if ln.startswith("Graph Break Reason:")), None)
    body_end = next(
        (i for i, ln in enumerate(lines) if ln.startswith(("User code traceback:", "Traceback ("))),
        len(lines),
    )
    btype = "Unknown"
    reason_lines: list[str] = []
    if reason_idx is not None:
        first = lines[reason_idx][len("Graph Break Reason:") :].strip()
        reason_lines = [first, *lines[reason_idx + 1 : body_end]]
        btype = first
        if first.startswith("Encountered graph break when attempting to trace"):
            nxt = next((ln.strip() for ln in lines[reason_idx + 1 : body_end] if ln.strip()), None)
            if nxt and not nxt.startswith(("Explanation:", "Hint:")):
                btype = nxt
    else:  # older torch: free-form reason on the first lines
        reason_lines = lines[:body_end]
        btype = next((ln.strip() for ln in reason_lines if ln.strip()), "Unknown")
    reason = "\n".join(reason_lines).strip()
    explanation, hints = _explanation_and_hints(reason_lines)
    stack = _user_stack(lines, body_end)
    gb = _GB_ID.search(text)
    filename = line = None
    user = [f for f in stack if is_user_file(f.filename)]
    if user:
        filename, line = user[-1].filename, user[-1].line
    else:
        hm = _HEADER_SITE.match(lines[0]) if lines else None
        if hm:
            filename, line = hm.group("file"), int(hm.group("line"))
    return BreakEvent(
        type=btype.rstrip(":"),
        reason=reason,
        explanation=explanation,
        hints=hints,
        user_stack=tuple(stack),
        filename=filename,
        line=line,
        gb_id=gb.group(1).upper() if gb else None,
    )


def _explanation_and_hints(lines: list[str]) -> tuple[str | None, tuple[str, ...]]:
    explanation: list[str] = []
    hints: list[str] = []
    cur: list[str] | None = None
    for ln in lines:
        s = ln.strip()
        if s.startswith("Explanation:"):
            cur = explanation
            explanation.append(s[len("Explanation:") :].strip())
        elif s.startswith("Hint:"):
            hints.append(s[len("Hint:") :].strip())
            cur = None
        elif s.startswith(("Developer debug context:", "For more details")):
            cur = None
        elif cur is not None and s:
            cur.append(s)
    return ("\n".join(explanation) or None), tuple(hints)


def _user_stack(lines: list[str], start: int) -> list[StackFrame]:
    stack: list[StackFrame] = []
    i = start
    if i < len(lines) and lines[i].startswith("User code traceback:"):
        i += 1
        while i < len(lines):
            m = _TB_FRAME.match(lines[i])
            if m:
                code = lines[i + 1].strip() if i + 1 < len(lines) else None
                if code and (_TB_FRAME.match(lines[i + 1]) or set(code) <= {"^", "~", " "}):
                    code = None
                stack.append(StackFrame(m.group("file"), int(m.group("line")), m.group("name"), code))
            elif lines[i].startswith("Traceback (") or (lines[i] and not lines[i].startswith(" ")):
                break
            i += 1
    return stack


# ---- recompiles and guards -----------------------------------------------------------------

_REASON_ENTRY = re.compile(r"^(?P<entry>\d+/\d+): (?P<text>.*)$", re.S)
_TENSOR_REASON = re.compile(r"tensor '(?P<src>[^']+)' (?P<what>[\w ]+?) mismatch")


def parse_recompile_payload(payload: str | None) -> tuple[str, ...]:
    if not payload:
        return ()
    text = payload.strip()
    if text.startswith("["):
        try:
            data = json.loads(text)
            return tuple(str(x) for x in data)
        except json.JSONDecodeError:
            pass
    if text.startswith('"'):
        try:
            return (str(json.loads(text)),)
        except json.JSONDecodeError:
            pass
    return (text,)


def failed_entry(reason: str) -> str | None:
    m = _REASON_ENTRY.match(reason)
    return m.group("entry") if m else None


def failing_guard(reason: str, guards: str | None) -> str | None:
    """The line of the failed entry's guard tree that the reason points at (without the
    tree drawing, e.g. ``TENSOR_MATCH: check_tensor(L['x'], ...)``)."""
    line = _failing_guard_line(reason, guards)
    return line.split("+- ", 1)[1].strip() if line and "+- " in line else line


def _failing_guard_line(reason: str, guards: str | None) -> str | None:
    if not guards:
        return None
    m = _REASON_ENTRY.match(reason)
    text = (m.group("text") if m else reason).strip()
    lines = [ln for ln in guards.splitlines() if "+-" in ln]
    tm = _TENSOR_REASON.search(text)
    if tm:
        src = tm.group("src")
        # reasons name locals bare ('x'); guards spell them L['x']
        for needle in (f"L['{src}']", src):
            for ln in lines:
                if "TENSOR_MATCH" in ln and needle in ln:
                    return ln.strip()
    expr = text.split("  #")[0].strip()
    if expr:
        for ln in lines:
            body = ln.split("+-", 1)[1]
            body = body.split(":", 1)[1] if ":" in body.split("(")[0] else body
            body = body.split("  #")[0]
            # torch strips L['fn'] to fn in reasons (guards.strip_local_scope); guards keep L[...]
            if expr in body or expr in _LOCAL_SCOPE.sub(r"\1", body):
                return ln.strip()
    return None


_LOCAL_SCOPE = re.compile(r"L\[\s*['\"](.*?)['\"]\s*\]")


# ---- output code -> kernels ---------------------------------------------------------------------

_AOT_ID = re.compile(r"^# AOT ID: \['\d+_(?P<role>\w+)'\]", re.M)
_KERNEL_DEF = re.compile(
    r"^(?P<var>\w+) = async_compile\.(?P<kind>triton|cpp_pybinding|cpp|cuda|halide|mps)\((?P<pre>[^\n]*?)(?P<q>r?''')",
    re.M,
)
_SOURCE_NODES = re.compile(
    r"# Topologically Sorted Source Nodes: \[(?P<nodes>[^\]]*)\](?:, Original ATen: \[(?P<aten>[^\]]*)\])?"
)


def output_role(code: str) -> str | None:
    m = _AOT_ID.search(code)
    return m.group("role") if m else None


@dataclass
class KernelSource:
    name: str
    language: str
    source: str
    nodes: tuple[str, ...]
    aten_ops: tuple[str, ...]


def split_kernels(code: str) -> list[KernelSource]:
    """Kernels defined in an Inductor output module, with the source nodes torch lists."""
    out: list[KernelSource] = []
    for m in _KERNEL_DEF.finditer(code):
        start = m.end()
        end = code.find("'''", start)
        if end < 0:
            continue
        kind = m.group("kind")
        language = "triton" if kind == "triton" else ("cpp" if kind.startswith("cpp") else kind)
        nm = re.match(r"'(\w+)'", m.group("pre"))
        name = nm.group(1) if nm else m.group("var")
        source = code[start:end].strip("\n")
        nodes, aten = _provenance_before(code, m.start())
        if not nodes:
            nodes, aten = _provenance_at_call(code, m.group("var"))
        out.append(KernelSource(name, language, source, nodes, aten))
    return out


def _provenance_before(code: str, pos: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # the comment block right above the definition (GPU: "# kernel path: ..." block)
    block_start = code.rfind("\n\n", 0, pos)
    block = code[block_start:pos]
    m = _SOURCE_NODES.search(block)
    return _nodes_from(m)


def _provenance_at_call(code: str, var: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # CPU wrappers put the comment right above the call inside `call()`
    m = re.search(rf"^(?P<c>\s*#[^\n]*\n)\s*{re.escape(var)}\(", code, re.M)
    if m:
        return _nodes_from(_SOURCE_NODES.search(m.group("c")))
    return (), ()


def _nodes_from(m) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if not m:
        return (), ()
    nodes = tuple(s.strip() for s in m.group("nodes").split(",") if s.strip())
    aten = tuple(s.strip() for s in (m.group("aten") or "").split(",") if s.strip())
    return nodes, aten


def provenance_map(payloads: list[str]) -> dict[str, tuple[str, ...]]:
    """kernel name -> post-grad nodes, from inductor_provenance_tracking_node_mappings
    (keys like ``cppCodeToPost`` / ``tritonCodeToPost``; kernel keys carry ``:N``)."""
    out: dict[str, list[str]] = {}
    for p in payloads:
        try:
            data = json.loads(p)
        except (json.JSONDecodeError, TypeError):
            continue
        if not isinstance(data, dict):
            continue
        for key, mapping in data.items():
            if not (key.endswith("CodeToPost") and isinstance(mapping, dict)):
                continue
            for kname, nodes in mapping.items():
                name = kname.rsplit(":", 1)[0]
                if name.startswith("extern_kernels.") or not isinstance(nodes, list):
                    continue
                have = out.setdefault(name, [])
                have.extend(str(n) for n in nodes if str(n) not in have)
    return {k: tuple(v) for k, v in out.items()}
