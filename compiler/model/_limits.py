"""How far reading may expand a file: one budget per file, on its bytes on disk, that its gzip
data (reports and TORCH_TRACE logs) and the report file form's references
(compiler/model/_compact.py) spend together.

A shared file is input from anyone: a 1 MB gzip can hold 1 GiB of zeros, a few kilobytes
of ``$t`` pieces can join into gigabytes of text, and one string shared through ``$s`` stands
wherever the file puts a reference to it (every view prints each use). Reading stops at the
budget with one error naming the file (and the JSON path) instead of taking the machine's
memory. A file of ``size`` bytes on disk may build ``max_expansion`` × ``size`` + ``FLOOR``,
counted as it is built (``Budget``):

* its gzip data: the bytes it expands to, and ``PARSED`` more for each JSON value in them;
* its references, at each use: the characters of each string (``$s``) and text (``$t``),
  ``BUILT`` for each value of a graph (``$g``: each use is built anew) and for each node
  parsed from a graph's code (``$c``), and that code's characters.

The caps do not multiply: a ``.json.gz`` of 2 MB builds at most 64 × 2 MB + 16 MiB in all,
whatever it unzips to. ``max_expansion`` is ``compiler.load(path, max_expansion=...)`` /
``load_trace(...)``, else the environment variable ``PT2_EXPLORER_MAX_EXPANSION``, else 64
(the recorded reports build 9-55× their gzip file, most of it shared strings counted at
each use). ``inf`` lifts the caps. docs/report-schema.md, "Limits", says the same.
"""

from __future__ import annotations

import contextvars
import io
import math
import os
import zlib
from collections.abc import Callable

ENV = "PT2_EXPLORER_MAX_EXPANSION"
DEFAULT = 64.0
FLOOR = 16 * 2**20  # every file may expand this far, whatever its size
_HINT = f"max_expansion= or {ENV} raises it"

# the ratio load_trace was given, for the TORCH_TRACE reader's open_log (set while it reads)
reading: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "pt2_explorer_max_expansion", default=None
)


def ratio(max_expansion: float | None = None) -> float:
    """The ratio in force: ``max_expansion`` when given, else the environment's, else 64.
    Raises ValueError for anything but a number >= 0 (``inf``: no cap)."""
    if max_expansion is None:
        raw = os.environ.get(ENV, "").strip()
        if not raw:
            return DEFAULT
        where = f"{ENV}={raw!r}"
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
    else:
        where, value = f"max_expansion={max_expansion!r}", max_expansion
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{where}: expected a number >= 0 (a ratio to the file's size), or inf")
    return float(value)


def cap(size: int, r: float) -> float:
    """The most a file of ``size`` bytes may expand to under the ratio ``r``."""
    return math.inf if math.isinf(r) else r * size + FLOOR


def too_big(what: str, limit: float, r: float, size: int, of: str, unit: str, note: str = "") -> str:
    """The one line that says a cap was reached: ``<what> past the limit of N <unit> ...``."""
    return (
        f"{what} past the limit of {int(limit):,} {unit} for {of} of {size:,} bytes "
        f"({r:g} × its size + {FLOOR:,}{note}; {_HINT})"
    )


BUILT = 32  # bytes a value built at each use counts: a graph's values, a node parsed from code
PARSED = 8  # bytes a JSON value of gzip data counts beside its text (a dict parsed takes ~64)


def json_values(data: bytes) -> int:
    """About the number of values in JSON text (no fewer): its ``{``, ``[`` and ``,``."""
    return data.count(b",") + data.count(b"{") + data.count(b"[")


class Budget:
    """What reading one file may build, in all: ``cap(size, ratio)``, ``size`` being its bytes
    on disk. Its gzip data's bytes are spent first (``unzipped``), then what its references
    build, each use counted (compiler/model/_resolve.py): a shared string's or text's
    characters, a graph's values, the code a graph's nodes are parsed from. One budget for
    everything a file holds (the reports of a saved modes comparison share it): the caps do
    not multiply, so a file of 2 MB builds at most 64 × 2 MB + 16 MiB, whatever its form."""

    def __init__(self, size: int, r: float):
        self.size, self.ratio = size, r
        self.limit = cap(size, r)
        self.unzipped = 0  # what the gzip data expanded to, counted (0: a plain file)
        self.spent = 0

    def unzip(self, data: bytes) -> bytes:
        """The file's gzip ``data`` decompressed within the budget, its bytes and its JSON
        values (``PARSED`` each: parsed, each is an object) spent; past the budget raises
        Expanded."""
        raw = gunzip(data, self.ratio)
        values = json_values(raw)
        self.unzipped = self.spent = len(raw) + PARSED * values
        if self.spent > self.limit:
            raise Expanded(
                too_big(
                    f"gzip data of {len(raw):,} bytes and {values:,} JSON values expands",
                    self.limit,
                    self.ratio,
                    self.size,
                    "a file",
                    "bytes",
                    f"; a JSON value counts {PARSED} bytes",
                )
            )
        return raw

    def over(self, what: str) -> str:
        """The one line that says ``what`` spent the budget."""
        if not self.unzipped:
            unit = "characters and values"
            return too_big(
                what, self.limit, self.ratio, self.size, "JSON", unit, f"; a value built counts {BUILT}"
            )
        note = f", of which its gzip data took {self.unzipped:,}; a value built counts {BUILT}"
        unit = "bytes, characters and values"
        return too_big(what, self.limit, self.ratio, self.size, "a file", unit, note)


class Expanded(Exception):
    """gzip data that expands past its cap (the message says how far it may)."""


def gunzip(data: bytes, r: float) -> bytes:
    """``gzip.decompress(data)`` (every member; the zero padding between members skipped),
    stopping at ``cap(len(data), r)`` bytes: past it raises Expanded. Damaged data raises
    zlib.error or EOFError, as ``gzip.decompress`` does."""
    size = len(data)
    limit = cap(size, r)
    left = limit
    out = []
    while data:
        d = zlib.decompressobj(wbits=31)  # a gzip member: header, deflate data, CRC and size checked
        chunk = d.decompress(data, 0 if left >= 2**62 else int(left) + 1)  # 0: no bound
        left -= len(chunk)
        if left < 0:
            raise Expanded(too_big("gzip data expands", limit, r, size, "a file", "bytes"))
        if not d.eof:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        out.append(chunk)
        data = d.unused_data.lstrip(b"\0")
    return b"".join(out)


_IN_CHUNK = 16 * 1024  # compressed bytes read at a time (small: what zlib leaves over is copied)
_OUT_CHUNK = 64 * 1024  # decompressed bytes a read gives at most (the line reader's buffer)


class _Gunzip(io.RawIOBase):
    """The gzip members of a binary file, decompressed as they are read (zero padding
    between members skipped, each member's CRC and size checked, as ``gzip.open`` does), up
    to ``limit`` bytes: a read past it raises ``error(line, message)``, ``line`` being the
    1-based line of the byte at offset ``limit``. A stream cut off raises EOFError and damaged
    data zlib.error, as with ``gzip.open``."""

    def __init__(self, f, limit: float, r: float, size: int, error: Callable[[int, str], Exception]):
        self._f = f
        self._d = zlib.decompressobj(wbits=31)
        self._in = b""  # compressed bytes not yet given to the decompressor
        self._limit, self._ratio, self._size, self._error = limit, r, size, error
        self._out = 0  # bytes given so far
        self._lines = 0  # newlines in them

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while True:
            if self._d.eof:  # the next member, or the end
                rest = self._d.unused_data.lstrip(b"\0")
                while not rest:
                    more = self._f.read(_IN_CHUNK)
                    if not more:
                        return 0
                    rest = more.lstrip(b"\0")
                self._d, self._in = zlib.decompressobj(wbits=31), rest
            if not self._in:
                self._in = self._f.read(_IN_CHUNK)
                if not self._in:
                    raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            out = self._d.decompress(self._in, len(b))
            self._in = self._d.unconsumed_tail
            if out:
                break
        if self._out + len(out) > self._limit:
            line = self._lines + out.count(b"\n", 0, int(self._limit - self._out)) + 1
            raise self._error(
                line, too_big("gzip data expands", self._limit, self._ratio, self._size, "a file", "bytes")
            )
        self._out += len(out)
        self._lines += out.count(b"\n")
        b[: len(out)] = out
        return len(out)

    def close(self) -> None:
        if not self.closed:
            self._f.close()
        super().close()


def open_gzip(path: str, r: float, error: Callable[[int, str], Exception]) -> io.BufferedReader:
    """``gzip.open(path, "rb")`` for reading lines, under ``cap(size of the file, r)``: past it
    ``error(line, message)`` is raised, ``line`` the 1-based line the cap falls in."""
    f = open(path, "rb")
    size = os.fstat(f.fileno()).st_size
    return io.BufferedReader(_Gunzip(f, cap(size, r), r, size, error), _OUT_CHUNK)
