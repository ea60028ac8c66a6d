"""Parsers for the texts torch writes: graph-break reasons, recompile reasons, guard trees,
and Inductor's output code (split into kernels)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..model._callsites import is_tool_frame
from ..model._paths import frame_kind, is_user_file  # noqa: F401 - parsers name frames with them
from ..model._report import StackFrame
from ..model._skipwarn import WONT_CONVERT, frame_warning
from ._names import TORCH_ID, without_local_scope
from ._registry import graph_break_registry

# torch.compile of a torch.nn module (or a torch function) compiles a wrapper frame of torch's
# own (torch/_dynamo/external_utils.py: wrap_inline's ``inner``) that calls the wrapped object,
# ``L['fn']`` in the frame's guard tree: "GuardManager: source=L['fn'], ..., type=<class 'X'>"
_WRAPPER_FILE = "torch/_dynamo/external_utils.py"
_WRAPPED = "GuardManager: source=L['fn'], "
_WRAPPED_TYPE = re.compile(r"type=<class '(?P<cls>[\w.]+)'>")


def wrapped_callable(name: str | None, filename: str | None, guards: str | None) -> str | None:
    """The class of what torch's wrapper frame calls (``TransformerEncoderLayer``), for a
    frame that is that wrapper; else None."""
    if name != "inner" or not (filename or "").endswith(_WRAPPER_FILE) or not guards:
        return None
    cls = None
    for line in guards.split("\n"):  # the first type after the first L['fn'] manager of a line:
        at = line.find(_WRAPPED)  # one regex from each manager to its line's end was quadratic
        m = _WRAPPED_TYPE.search(line, at + len(_WRAPPED)) if at >= 0 else None
        if m:
            cls = m.group("cls").rsplit(".", 1)[-1]
            break
    return None if cls in _NOT_MODULES else cls


# what torch.compile may wrap besides a module: its frame keeps torch's name
_NOT_MODULES = {None, "function", "builtin_function_or_method", "method", "partial", "method-wrapper"}


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


# Texts torch wraps a break in, with the break's own type on the next non-empty line:
# "... attempting to trace CALL: a function call, e.g. f(x, y):", "... that we cannot resume
# from. ... Graph break encountered:", "Failed to handle graph break gracefully. ...".
_WRAPPERS = (
    "Encountered graph break when attempting to trace",
    "Encountered graph break that we cannot resume from",
    "Failed to handle graph break gracefully",
)


def parse_graph_break(text: str) -> BreakEvent:
    """One ``dynamo_graph_break_reason`` payload. The type is torch's registered type of the
    break's GB id (torch's graph-break registry) where torch names one; else the text's."""
    lines = text.splitlines()
    reason_idx = next((i for i, ln in enumerate(lines) if ln.startswith("Graph Break Reason:")), None)
    body_end = next(
        (
            i
            for i, ln in enumerate(lines)
            if ln.startswith(("User code traceback:", "Traceback (", "Stack variable source attribution:"))
        ),
        len(lines),
    )
    btype = "Unknown"
    reason_lines: list[str] = []
    if reason_idx is not None:
        first = lines[reason_idx][len("Graph Break Reason:") :].strip()
        reason_lines = [first, *lines[reason_idx + 1 : body_end]]
        btype = first
        if first.startswith(_WRAPPERS):
            nxt = next((ln.strip() for ln in lines[reason_idx + 1 : body_end] if ln.strip()), None)
            if nxt and not nxt.startswith(("Explanation:", "Hint:")):
                btype = nxt
    else:  # older torch: free-form reason on the first lines; torch <= 2.6 after "Reason: "
        reason_lines = [ln for ln in lines[:body_end] if not _HEADER_SITE.match(ln)] or lines[:body_end]
        btype = next((ln.strip() for ln in reason_lines if ln.strip()), "Unknown")
        if btype.startswith("Reason: "):
            btype = btype[len("Reason: ") :]
    reason = "\n".join(reason_lines).strip()
    explanation, hints = _explanation_and_hints(reason_lines)
    stack = _user_stack(lines, body_end)
    gb = _GB_ID.search(text)
    gb_id = gb.group(1).upper() if gb else None
    btype = btype.rstrip(":")
    registered = registered_break(gb_id, btype)
    if registered is not None:
        btype = registered["Gb_type"]
        if explanation is None and registered.get("Explanation"):
            explanation = str(registered["Explanation"])
        if not hints:
            hints = tuple(str(h) for h in registered.get("Hints") or ())
    filename = line = None
    user = [f for f in stack if is_user_file(f.filename)]
    warned = frame_warning(text)
    if warned:  # torch's warning on a frame it will not convert: the frame is the site
        btype, (_name, filename, line) = WONT_CONVERT, warned
    elif user:
        filename, line = user[-1].filename, user[-1].line
    else:
        hm = _HEADER_SITE.match(lines[0]) if lines else None
        if hm:
            filename, line = hm.group("file"), int(hm.group("line"))
    return BreakEvent(
        type=btype,
        reason=reason,
        explanation=explanation,
        hints=hints,
        user_stack=tuple(stack),
        filename=filename,
        line=line,
        gb_id=gb_id,
    )


def registered_break(gb_id: str | None, text_type: str | None = None) -> dict | None:
    """torch's registry entry of a graph-break id: the one whose type is the text's, else
    the newest wording. None for an unknown id or where no registry is installed."""
    registry = graph_break_registry()
    entries = registry.get(gb_id) if registry and gb_id else None
    if not entries or not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict) and isinstance(e.get("Gb_type"), str)]
    if not entries:
        return None
    return next((e for e in entries if e["Gb_type"] == text_type), entries[-1])


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
    i = next((j for j in range(start, len(lines)) if lines[j].startswith("User code traceback:")), len(lines))
    if i < len(lines):
        i += 1
        while i < len(lines):
            m = _TB_FRAME.match(lines[i])
            if m:
                code = lines[i + 1].strip() if i + 1 < len(lines) else None
                if code and (_TB_FRAME.match(lines[i + 1]) or set(code) <= {"^", "~", " "}):
                    code = None
                if not is_tool_frame(m.group("file"), m.group("name")):  # compiled_calls' wrapper
                    stack.append(StackFrame(m.group("file"), int(m.group("line")), m.group("name"), code))
            elif lines[i].startswith("Traceback (") or (lines[i] and not lines[i].startswith(" ")):
                break
            i += 1
    return stack


# ---- recompiles and guards -----------------------------------------------------------------

_REASON_ENTRY = re.compile(rf"^(?P<entry>{TORCH_ID}): (?P<text>.*)$", re.S)
# "tensor 'kwargs['input_ids']' size mismatch at index 1": the source may hold quotes itself
_TENSOR_REASON = re.compile(r"^tensor '(?P<src>.+?)' (?P<what>[\w ]+?) mismatch\b")


def parse_recompile_payload(payload: str | None) -> tuple[str, ...]:
    if not payload:
        return ()
    text = payload.strip()
    if text.startswith("["):
        try:
            data = json.loads(text)
            return tuple(str(x) for x in data)
        except (json.JSONDecodeError, RecursionError):  # the latter: nested too deep
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


@dataclass
class GuardMatch:
    line: str  # the guard as the tree prints it, without the tree drawing
    user_stack: tuple[StackFrame, ...]  # where the guard came from, innermost last


def failing_guard(reason: str, guards: str | None) -> str | None:
    """The line of the failed entry's guard tree that the reason points at (without the
    tree drawing, e.g. ``TENSOR_MATCH: check_tensor(L['x'], ...)``)."""
    m = match_guard(reason, guards)
    return m.line if m else None


def match_guard(reason: str, guards: str | None) -> GuardMatch | None:
    """The guard a recompile reason names, in the failed entry's guard tree, with the user
    stack it came from: torch's "User stack trace:" under the reason where it writes one, else
    the ``# code  # file:line in fn`` torch appends to the guard line."""
    line = _failing_guard_line(reason, guards)
    if line is None:
        return None
    text = line.split("+- ", 1)[1].strip() if "+- " in line else line.strip()
    stack = reason_user_stack(reason) or _guard_comment_frame(text)
    return GuardMatch(text, stack)


def reason_user_stack(reason: str) -> tuple[StackFrame, ...]:
    """The "User stack trace:" torch writes under a guard-failure reason (torch >= 2.13)."""
    lines = reason.splitlines()
    i = next((j for j, ln in enumerate(lines) if ln.strip() == "User stack trace:"), None)
    if i is None:
        return ()
    out: list[StackFrame] = []
    for j in range(i + 1, len(lines)):
        m = _TB_FRAME.match(lines[j])
        if m:
            nxt = lines[j + 1].strip() if j + 1 < len(lines) else None
            code = None if not nxt or _TB_FRAME.match(lines[j + 1]) else nxt
            if not is_tool_frame(m.group("file"), m.group("name")):
                out.append(StackFrame(m.group("file"), int(m.group("line")), m.group("name"), code))
    return tuple(out)


# "  # if not self.is_initialized:  # transformers/cache_utils.py:133 in update (HINT: ...)"
_GUARD_COMMENT = re.compile(
    r"  # (?P<code>.*?)  # (?P<file>[^\s#][^#]*?):(?P<line>\d+) in (?P<fn>[\w<>.]+)(?: \(HINT: .*\))?\s*$"
)


def _guard_comment_frame(guard: str) -> tuple[StackFrame, ...]:
    m = _GUARD_COMMENT.search(guard)
    if not m:
        return ()
    return (
        StackFrame(m.group("file"), int(m.group("line")), m.group("fn"), m.group("code").strip() or None),
    )


def _reason_head(reason: str) -> str:
    """The reason's first line without its entry id and torch's trailing ``# code`` comment."""
    m = _REASON_ENTRY.match(reason)
    text = (m.group("text") if m else reason).strip()
    first = text.splitlines()[0] if text else ""
    return first.split("  #")[0].strip()


def _failing_guard_line(reason: str, guards: str | None) -> str | None:
    if not guards:
        return None
    head = _reason_head(reason)
    lines = [ln for ln in guards.splitlines() if "+-" in ln]
    tm = _TENSOR_REASON.match(head)
    if tm:
        # reasons name sources without the local scope ('x', 'kwargs['ids']'); guards keep L[...]
        src = _norm(tm.group("src"))
        for ln in lines:
            body = ln.split("+-", 1)[1].strip()
            if body.startswith("TENSOR_MATCH:") and "check_tensor(" in body:
                arg = _first_arg(body.split("check_tensor(", 1)[1])
                if src in (_norm(arg), _norm(without_local_scope(arg))):
                    return ln.strip()
    sm = _STATE_CHANGED.match(head)
    if sm:  # "GLOBAL_STATE changed: grad_mode": the guard of that kind
        for ln in lines:
            if ln.split("+-", 1)[1].strip().startswith(sm.group("kind") + ":"):
                return ln.strip()
    expr = _norm(head)
    if not expr:
        return None
    bodies = []
    for ln in lines:
        body = ln.split("+-", 1)[1]
        kind = body.split("(")[0]
        body = body.split(":", 1)[1] if ":" in kind else body
        body = _norm(body.split("  #")[0])
        bodies.append((ln, body, _norm(without_local_scope(body))))
    # torch strips L['fn'] to fn in reasons (guards.strip_local_scope); guards keep L[...]
    for ln, body, local in bodies:
        if expr in (body, local):
            return ln.strip()
    for ln, body, local in bodies:
        if expr in body or expr in local:
            return ln.strip()
    return None


# "GLOBAL_STATE changed: grad_mode", "DEFAULT_DEVICE changed: ..."
_STATE_CHANGED = re.compile(r"^(?P<kind>[A-Z][A-Z_]+) changed\b")


def split_args(s: str) -> list[str]:
    """Top-level comma split of a call's argument text (brackets and quotes respected; stops
    at the call's closing bracket)."""
    out, depth, cur, quote = [], 0, [], None
    for ch in s:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _first_arg(args: str) -> str:
    """The first argument of a call's argument text."""
    return next(iter(split_args(args)), "")


def _norm(text: str) -> str:
    return " ".join(text.split())


_LIMIT_HIT = re.compile(
    r"(recompile|cache)[ _]?(size )?limit (exceeded|hit)|Limit type: \w*recompile_limit", re.I
)


def says_limit_hit(fail_reason: str) -> bool:
    """Does a compile's fail_reason say the frame's recompile (cache size) limit was hit?"""
    return _LIMIT_HIT.search(fail_reason) is not None
