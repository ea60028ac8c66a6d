"""A log file in blocks of whole lines, as ``read/_logfile.py`` reads a TORCH_TRACE log: big
reads (``read1``), each cut at its last newline, so that a line is never split between two
blocks and no line is copied out of the block it came in. Torch-free."""

from __future__ import annotations

from collections.abc import Iterator


def blocks(f, size: int, longest: int) -> Iterator[tuple[bytes, int, int]]:
    """The file ``f`` (read ``size`` bytes at a time) in blocks of whole lines, the last one
    possibly without its newline: each ``data[start:end]`` of what was read, not copied (a
    line begun in one read and ended in the next comes alone, joined). A line of ``longest``
    bytes or more with no end in sight comes alone, unended, and last. A gzip stream cut off raises EOFError after the whole
    lines before the cut (the one being read is lost, as a line reader loses it)."""
    start: list[bytes] = []  # the line being read: its bytes so far, none a newline
    held = 0
    while data := f.read1(size):
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            start.append(data)
            held += len(data)
            if held >= longest:
                yield _whole(start)
                return
            continue
        begin = 0
        if start:  # the line begun in the last block, ended here
            begin = data.find(b"\n") + 1
            yield _whole([*start, data[:begin]])
        if begin < cut:
            yield data, begin, cut
        start = [data[cut:]] if cut < len(data) else []
        held = len(data) - cut
    if start:
        yield _whole(start)


def _whole(parts: list[bytes]) -> tuple[bytes, int, int]:
    data = b"".join(parts)
    return data, 0, len(data)
