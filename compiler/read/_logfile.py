"""TORCH_TRACE log files (``TORCH_TRACE=dir python prog.py``): their lines read into events,
every payload checked against the MD5 torch put beside it; a cut, damaged or foreign file
named at its line. Torch-free."""

from __future__ import annotations

import gzip
import hashlib
import zlib
from collections.abc import Iterator
from typing import Any

from ..assemble._events import Event, event_name
from ..model import _fastjson, _surrogates
from ..model._fastjson import loads_bytes as _loads_bytes
from ..parse._logline import GLOG, GLOG_ASCII, MD5, NOT_TAB
from ._blocks import blocks
from ._files import (
    TraceFormatError,
    TraceTruncatedError,
    not_utf8,
    open_log,
    shown_value,
    size_text,
    truncated,
)

_GLOG_MATCH = GLOG_ASCII.match
# The longest line read: torch splits payloads into lines (of code, or JSON it indents), so
# real lines are short; a file with none ending in this many bytes is not a TORCH_TRACE log
# (``/dev/zero``-like input), and reading it whole would exhaust memory.
MAX_LINE_BYTES = 512 * 2**20
# context keys torch writes as ints (torch/_logging/_internal.py: trace_structured)
_INT_KEYS = ("frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "rank")
_BLOCK = 4 * 2**20  # bytes read at a time


def _untabbed(lines: bytes) -> bytes:
    """Payload lines without the tab that starts each line after the first: split and
    joined (the fewest instructions and the least time of re.sub, bytes.replace and this)."""
    return b"\n".join(lines.split(b"\n\t"))


class _Pending:
    """The event being read and its payload lines so far (bytes, tab stripped)."""

    __slots__ = ("event", "parts", "md5", "hashed", "held")

    def __init__(self, event: Event, parts: list[bytes]):
        self.event = event
        self.parts = parts
        self.md5: Any = None  # made when first asked (most payloads: once, by _finish)
        self.hashed = 0  # parts[:hashed] are in md5 (hashed when asked: once per part)
        self.held: list[bytes] = []  # blank lines after a `has_payload: true` event (see below)

    def status(self) -> bool | None:
        """Is the payload what the event announced? torch puts the payload's MD5 in
        ``has_payload``; None when that cannot be told (older torch wrote ``true``)."""
        announced = self.event.metadata.get("has_payload")
        if not announced:
            return None if self.parts else True
        if not self.parts:
            return False
        if announced is True:
            return None
        parts = self.parts
        if self.hashed == 0:
            self.md5 = hashlib.md5(parts[0], usedforsecurity=False)
            self.hashed = 1
        md5 = self.md5
        if self.hashed < len(parts):
            md5.update(b"\n" + b"\n".join(parts[self.hashed :]))
            self.hashed = len(parts)
        return md5.hexdigest() == announced


def read_trace_file(path: str, *, strict: bool = False) -> Iterator[Event]:
    """Events of one TORCH_TRACE log. Raises TraceFormatError naming the bad line.

    A payload that is not what torch wrote (it does not match its MD5, an announced payload
    is missing, it is not UTF-8) is kept as read and its event marked (``Event.damaged``);
    ``strict=True`` raises TraceFormatError instead. An id torch left null is no id.

    A log cut off at its end (a killed or crashed process, a truncated copy) first yields
    every complete event, then raises ``TraceTruncatedError`` naming the line where the
    incomplete event starts; that event itself is not yielded. torch ends every record
    with a newline and puts the MD5 of the payload in ``has_payload``: that is how a cut
    between two payload lines is told from a complete event, and an edited payload from a
    good one. Payload lines start with a tab; an empty line with none (torch.export of torch
    2.6-2.7 writes them) is part of the payload while the payload's MD5 is not yet met or,
    with no MD5 (``has_payload: true``), when a tab line follows it.

    The file is read in blocks of whole lines, each cut into pieces of a line and the tab
    lines after it; a piece as torch writes it (an event's metadata line, its payload lines)
    is taken at once, by bytes operations: no loop over its lines in Python, no str made but
    the payload's. Anything else is read line by line, as the messages above need.
    """
    r = _Reader(path, strict)
    with open_log(path) as f:
        try:
            for data, start, end in blocks(f, _BLOCK, MAX_LINE_BYTES):
                yield from r.block(data, start, end)
        except EOFError:  # gzip stream cut off: what followed line `lineno` is lost
            pending = r.pending
            if pending is not None and pending.status() is True:
                yield _finish(path, pending, strict)
                pending = None
            start = pending.event.line if pending is not None else r.lineno + 1
            raise truncated(path, start, r.lineno + 1, "the gzip stream ends early") from None
        except (gzip.BadGzipFile, zlib.error) as e:
            raise TraceFormatError(f"{path}:{r.lineno + 1}: corrupt gzip data: {e}") from None
    pending = r.pending
    if pending is not None:
        ok = pending.status()
        if ok is False or (ok is None and not r.complete):
            raise truncated(path, pending.event.line, r.lineno, f"event {pending.event.name!r} is incomplete")
        yield _finish(path, pending, strict)


class _Reader:
    """The event being read, where in the file, and what a block of lines does to them."""

    def __init__(self, path: str, strict: bool):
        self.path, self.strict = path, strict
        self.pending: _Pending | None = None
        self.lineno = 0  # the last line read
        self.seen = 0  # events started so far
        self.complete = True  # did the last line read end with a newline?

    def block(self, data: bytes, start: int, end: int) -> Iterator[Event]:
        """``data[start:end]``, whole lines (the last one possibly unended), cut where a line
        does not start with a tab: into pieces of a line and the payload lines after it. A
        piece that starts with an event's metadata line as torch writes it is read at once
        (``_quick``); any other (a blank line, payload lines at the block's start, a line to
        name) line by line."""
        path, strict, find = self.path, self.strict, data.find
        # the event being read: an Event where it is whole and as torch wrote it (its payload
        # met its MD5), finished unless what follows is more of it (blank or payload lines)
        lineno, pending = self.lineno, self.pending
        pos = start  # where the next piece starts
        for m in NOT_TAB.finditer(data, start, end):
            s, cut = pos, m.start()  # the piece: data[s:cut], its newline at cut
            pos = cut + 1
            nl = find(b"\n", s, cut)  # where its payload lines start
            ev = None
            if s < cut and cut - s < MAX_LINE_BYTES:
                ev = _quick(path, lineno + 1, data, s, cut if nl < 0 else nl)
            if ev is None:
                self.lineno, self.pending = lineno, _opened(pending)
                yield from self.lines(data[s:pos])
                lineno, pending = self.lineno, self.pending
                continue
            if pending is not None:
                yield pending if type(pending) is Event else _finish(path, pending, strict)
            self.seen += 1
            announced = ev.metadata.get("has_payload")
            if nl < 0:
                lineno += 1
                pending = _Pending(ev, []) if announced else ev
                continue
            body = _untabbed(data[nl + 2 : cut])  # each line's tab goes
            lineno += cut - nl - len(body)  # one line each
            if type(announced) is str and hashlib.md5(body, usedforsecurity=False).hexdigest() == announced:
                try:
                    ev.payload = body.decode("utf-8")
                    pending = ev
                    continue
                except UnicodeDecodeError:
                    pass
            pending = _Pending(ev, [body])
        self.lineno, self.pending = lineno, _opened(pending)
        if pos != start:
            self.complete = True
        if pos < end:  # after the last newline: an unended last line
            yield from self.lines(data[pos:end])

    def lines(self, block: bytes) -> Iterator[Event]:
        """Whole lines (the last one possibly unended), one at a time; payload lines (a run
        of lines that start with a tab) at once."""
        pos, n = 0, len(block)
        while pos < n:
            if block[pos] == 9:  # a tab: payload lines, up to the next line that is not one
                m = NOT_TAB.search(block, pos)
                end = n if m is None else m.end()
                self.payload(block, pos, end)
            else:
                nl = block.find(b"\n", pos)
                end = n if nl < 0 else nl + 1
                yield from self.line(block[pos:end])
            pos = end

    def payload(self, block: bytes, pos: int, end: int) -> None:
        """Lines that start with a tab (``block[pos:end]``: "\\tline\\n\\tline\\n"): payload."""
        self.complete = complete = block[end - 1] == 10  # a newline
        body = _untabbed(block[pos + 1 : end - 1 if complete else end])
        first = self.lineno + 1
        self.lineno += end - pos - complete - len(body)  # each line's tab went: one line each
        if end - pos > MAX_LINE_BYTES:
            self.check_lengths(block[pos:end], first)
        p = self.pending
        if p is None:
            raise TraceFormatError(f"{self.path}:{first}: payload line outside an event")
        if p.held:  # a tab line follows: they were payload
            p.parts += p.held
            p.held = []
        p.parts.append(body)

    def check_lengths(self, run: bytes, first: int) -> None:
        for i, line in enumerate(run.split(b"\n")):
            if len(line) >= MAX_LINE_BYTES:
                self.too_long(first + i)

    def too_long(self, lineno: int):
        raise TraceFormatError(
            f"{self.path}:{lineno}: line longer than {size_text(MAX_LINE_BYTES)}: not a TORCH_TRACE log"
        )

    def line(self, raw: bytes) -> Iterator[Event]:
        """A line that does not start with a tab: an event's metadata, or a blank line."""
        self.lineno += 1
        self.complete = complete = raw.endswith(b"\n")
        line = raw[:-1] if complete else raw
        if len(line) >= MAX_LINE_BYTES:
            self.too_long(self.lineno)
        path, pending = self.path, self.pending
        if not line.strip():
            if pending is not None:
                announced = pending.event.metadata.get("has_payload")
                if announced is True:
                    pending.held.append(line)
                    return
                if announced and pending.status() is not True:
                    pending.parts.append(line)  # the MD5 is not met yet: still the payload
                    return
                yield _finish(path, pending, self.strict)
                self.pending = None
            return
        try:  # this line first: where it is not an event, it is the line to name
            ev = _event(path, self.lineno, line, complete, self.seen, self.strict)
        except TraceTruncatedError:
            if pending is not None:
                self.pending = None
                yield _finish(path, pending, self.strict)
            raise
        if pending is not None:
            yield _finish(path, pending, self.strict)
        self.pending = _Pending(ev, [])
        self.seen += 1


def _opened(pending: Event | _Pending | None) -> _Pending | None:
    """The event being read, as more lines may add to it."""
    if type(pending) is not Event:
        return pending
    return _Pending(pending, [] if pending.payload is None else [pending.payload.encode("utf-8")])


def _event(path: str, lineno: int, raw: bytes, complete: bool, seen: int, strict: bool = False) -> Event:
    """The event a metadata line starts. A bad last line of a log with events before it
    (``complete`` False: no newline) is a cut, not damage. A string of its JSON that is no
    text (a lone surrogate) is read as U+FFFD and the event marked damaged (``strict``: the
    line refused)."""
    cut = not complete and seen > 0
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        if cut:
            raise truncated(path, lineno, lineno, "its last line is cut off") from None
        raise not_utf8(path, lineno, raw, e.start) from None
    m = GLOG.match(line)
    if not m:
        if cut:
            raise truncated(path, lineno, lineno, "its last line is cut off")
        raise TraceFormatError(f"{path}:{lineno}: not a TORCH_TRACE line: {line[:80]!r}")
    try:
        metadata = _fastjson.loads_exact(line[m.end() :])
    except (ValueError, RecursionError) as e:  # JSONDecodeError, int too long, nesting too deep
        if cut:
            raise truncated(path, lineno, lineno, "its last line is cut off") from None
        raise TraceFormatError(f"{path}:{lineno}: bad JSON in event: {e}") from None
    if not isinstance(metadata, dict):
        raise TraceFormatError(f"{path}:{lineno}: event is not a JSON object")
    count = 0
    if _surrogates.may_hold(line):  # "\ud800" (a co_name torch escaped): read as U+FFFD, marked
        metadata, first, count = _surrogates.replaced(metadata)
    name = event_name(metadata)
    if name is None:
        raise TraceFormatError(f"{path}:{lineno}: event has no name: {line[:80]!r}")
    ev = _checked(path, lineno, metadata, name)
    if count:
        if strict:
            raise TraceFormatError(
                f"{path}:{lineno}: event {name!r}: {_surrogates.said(count, first, False)}"
            )
        ev.damaged = _surrogates.said(count, first)
    return ev


def _quick(path: str, lineno: int, data: bytes, start: int, end: int) -> Event | None:
    """``_event`` of the whole line ``data[start:end]`` where it is an event's metadata line
    as torch writes it (an ASCII prefix, JSON orjson reads), None where ``_event`` must tell
    (and name what is wrong)."""
    m = _GLOG_MATCH(data, start, end)
    if m is None:
        return None
    metadata = _loads_bytes(data[m.end() : end])
    if type(metadata) is not dict:
        return None
    name = event_name(metadata)
    return None if name is None else _checked(path, lineno, metadata, name)


def _checked(path: str, lineno: int, metadata: dict, name: str) -> Event:
    """The event, its context checked: ids and ``has_payload``."""
    for key in _INT_KEYS:
        if key in metadata:
            v = metadata[key]
            if v is None:  # torch 2.6-era logs write "compiled_autograd_id": null: no id
                del metadata[key]
                continue
            if type(v) is not int or v < 0:  # bool is not an id
                raise TraceFormatError(
                    f"{path}:{lineno}: {key} of event {name!r} must be a non-negative integer, "
                    f"got {shown_value(v)}"
                )
    hp = metadata.get("has_payload")
    if not ((type(hp) is str and MD5.fullmatch(hp)) or hp is None or hp is True or hp is False):
        raise TraceFormatError(
            f"{path}:{lineno}: has_payload of event {name!r} must be true or the payload's MD5, "
            f"got {shown_value(hp)}"
        )
    return Event(name, metadata, None, lineno, path)


def _finish(path: str, p: _Pending, strict: bool) -> Event:
    """The event with its payload, checked against its MD5: a payload that is not what torch
    wrote raises (``strict``) or is kept as read, the event marked ``damaged``."""
    ev = p.event
    if p.parts:
        data = b"\n".join(p.parts)
        try:
            ev.payload = data.decode("utf-8")
        except UnicodeDecodeError as e:  # named at its own line (the MD5 fails too)
            n = data.count(b"\n", 0, e.start)  # payload line n is file line ev.line + 1 + n
            start = data.rfind(b"\n", 0, e.start) + 1
            lineno, col = ev.line + 1 + n, e.start - start + 1
            if strict:
                raise not_utf8(path, lineno, b"\t" + data[start:], col) from None
            ev.payload = data.decode("utf-8", errors="replace")
            _mark(ev, f"byte 0x{data[e.start]:02x} at line {lineno}, column {col + 1} is not UTF-8 text")
            return ev
        announced = ev.metadata.get("has_payload")
        if p.hashed == 0 and type(announced) is str:  # not hashed yet: hashed whole, once
            if hashlib.md5(data, usedforsecurity=False).hexdigest() == announced:
                return ev
    if p.status() is False:
        if not p.parts:
            what = "it announces a payload but none follows"
            if strict:
                raise TraceFormatError(
                    f"{path}:{ev.line}: event {ev.name!r} announces a payload but none follows"
                )
        else:
            what = "its payload does not match its MD5"
            if strict:
                raise TraceFormatError(
                    f"{path}:{ev.line}: payload of event {ev.name!r} at line {ev.line} does not match its "
                    "MD5: the log was edited or damaged"
                )
        _mark(ev, what)
    return ev


def _mark(ev: Event, what: str) -> None:
    """Mark the event damaged by ``what`` (after what its metadata line had, if anything)."""
    ev.damaged = f"{ev.damaged}; {what}" if ev.damaged else what
