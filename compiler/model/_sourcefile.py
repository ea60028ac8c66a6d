"""A source file that a report or a trace names (a break's file, a frame's, a FlexAttention
mask's), read for its lines only where it is a regular file of a bounded size: the name is
untrusted, and ``/dev/zero`` would be read until memory runs out, a FIFO or ``/dev/tty``
would block forever. A notebook cell's lines are IPython's, in ``linecache``. No torch here."""

from __future__ import annotations

import io
import linecache
import os
import stat
import tokenize
from collections import OrderedDict

SOURCE_LIMIT = 8 * 2**20  # bytes: a larger "source file" is not read
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC  # a FIFO's open does not wait


class _Recent:
    """The lines of the source files read last, least recently used dropped first: at most
    ``files`` files and ``size`` bytes of them together (a view reads the same few files again
    and again; a report naming thousands keeps no more than this)."""

    def __init__(self, files: int, size: int):
        self.files, self.size = files, size
        self._lines: OrderedDict[tuple, tuple[tuple[str, ...], int]] = OrderedDict()
        self._held = 0

    def get(self, key: tuple) -> tuple[str, ...] | None:
        entry = self._lines.get(key)
        if entry is None:
            return None
        self._lines.move_to_end(key)
        return entry[0]

    def put(self, key: tuple, lines: tuple[str, ...], size: int) -> None:
        if size > self.size or key in self._lines:
            return
        self._lines[key] = (lines, size)
        self._held += size
        while len(self._lines) > self.files or self._held > self.size:
            _, (_, dropped) = self._lines.popitem(last=False)
            self._held -= dropped


# (name, device, inode, size, mtime) -> its lines
_recent = _Recent(files=64, size=32 * 2**20)


def read_source(filename: str) -> tuple[tuple[str, ...], str | None]:
    """The lines of ``filename`` as ``linecache`` gives them (line ends kept; a notebook cell's
    from linecache itself), and None; or no lines and why the file was not read, in a few
    words (``not a regular file``, ``larger than 8 MiB``, the system's reason). A file that
    does not exist here (a report from another machine) is no lines and None: nothing to say."""
    entry = linecache.cache.get(filename)
    if entry is not None and len(entry) == 4 and entry[1] is None:  # in memory: a cell, an exec
        return tuple(entry[2]), None
    if filename.startswith("<") and filename.endswith(">"):  # no file: "<string>", "<stdin>"
        return (), None
    try:
        fd = os.open(filename, _READ)
    except (FileNotFoundError, NotADirectoryError):
        return (), None
    except (OSError, ValueError) as e:  # a path with a NUL; permission denied
        return (), getattr(e, "strerror", None) or str(e)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return (), "not a regular file"
        if st.st_size > SOURCE_LIMIT:
            return (), f"larger than {SOURCE_LIMIT // 2**20} MiB"
        key = (filename, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        kept = _recent.get(key)
        if kept is not None:
            return kept, None
        raw = _read_at_most(fd, SOURCE_LIMIT + 1)
    except OSError as e:
        return (), e.strerror or str(e)
    finally:
        os.close(fd)
    if len(raw) > SOURCE_LIMIT:  # it grew since fstat
        return (), f"larger than {SOURCE_LIMIT // 2**20} MiB"
    try:  # as linecache reads a file (tokenize.open): its coding cookie, universal newlines
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        lines = tuple(io.TextIOWrapper(io.BytesIO(raw), encoding, line_buffering=False).readlines())
    except (SyntaxError, UnicodeDecodeError, LookupError) as e:
        return (), f"not decodable as Python source ({e})"
    _recent.put(key, lines, len(raw))
    return lines, None


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 2**20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
