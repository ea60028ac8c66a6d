"""Large synthetic TORCH_TRACE logs built from real recordings, for benchmarks of reading.

    .venv/bin/python benchmarks/make_big_log.py OUT.log --mb 1024 [--vary] [--source LOG ...]

The output is the source logs (default: tests/fixtures/traces/h100-torch211-breaks.log.gz, a
real H100 recording of torch 2.11: a graph break, backward, a recompile) written again and
again, in turn, until it holds ``--mb`` MB. Each copy's frame ids are moved past the previous
copy's, so every copy is compiles of its own, as in a long job that compiles many frames.

``--vary`` also makes every copy's texts its own, as a real big log's graphs are: the names
Dynamo, AOTAutograd and Inductor give (``l_x_``, ``L_self_modules_..._``, ``primals_3``,
``tangents_1``, ``buf4``, ``tmp10``, ``triton_per_fused_..._0``, ``getitem_2``, ...) take a
suffix of the copy's own (``l_x_c7``) everywhere in the copy, in the metadata and the
payloads alike, so the graphs, the code and the kernels of one copy still refer to each other,
and the payload's MD5 is computed again. Without it the copies repeat the same texts and a
report stores each text once (a small report whatever the log's size).

``make_log`` is the same from Python (benchmarks/load.py uses it).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "tests" / "fixtures" / "traces" / "h100-torch211-breaks.log.gz"

_FRAME = re.compile(rb'"frame_id": (\d+)')
_MD5 = re.compile(rb'"has_payload": "[0-9a-f]{32}"')
# the names torch's passes make up, which a different program would name differently; a
# suffix after them keeps them identifiers (and JSON string contents), never touches a
# keyword, a torch API, an op name, a number or an MD5
_NAMES = re.compile(
    rb"\b(?:[lL]_\w+|(?:primals|tangents|arg\d*|buf|tmp|getitem|x|r0_|in_out_ptr|in_ptr|out_ptr)_?\d+"
    rb"|triton_(?:poi|per|red|tem)_\w+)\b"
)


def read_events(data: bytes) -> list[tuple[bytes, list[bytes]]]:
    """The log's events: each metadata line and its payload lines (tab included), no newlines."""
    events: list[tuple[bytes, list[bytes]]] = []
    for line in data.split(b"\n"):
        if line.startswith(b"\t") or not line.strip():
            if events:
                events[-1][1].append(line)
        else:
            events.append((line, []))
    return events


def _max_frame(data: bytes) -> int:
    return max((int(m) for m in _FRAME.findall(data)), default=-1)


def copies(sources: list[bytes], vary: bool) -> Iterator[bytes]:
    """One copy after another of the sources, in turn, each with frame ids of its own (and,
    ``vary``, names of its own), endlessly."""
    parsed = [(read_events(d), _max_frame(d) + 1) for d in sources]
    shift, k = 0, 0
    while True:
        for events, frames in parsed:
            yield b"".join(_copy(events, shift, f"c{k}".encode() if vary and k else None))
            shift += frames
            k += 1


def _copy(events: list[tuple[bytes, list[bytes]]], shift: int, suffix: bytes | None) -> Iterator[bytes]:
    def frame(m: re.Match) -> bytes:
        return b'"frame_id": %d' % (int(m[1]) + shift)

    def named(m: re.Match) -> bytes:
        return m[0] + suffix

    for meta, payload in events:
        if shift:
            meta = _FRAME.sub(frame, meta)
        if suffix is not None:
            head, sep, body = meta.partition(b"] ")  # the glog prefix names torch's own files
            meta = head + sep + _NAMES.sub(named, body)
            if payload:
                payload = [_NAMES.sub(named, line) for line in payload]
                meta = _with_md5(meta, payload)
        yield meta + b"\n"
        for line in payload:
            yield line + b"\n"


def _with_md5(meta: bytes, payload: list[bytes]) -> bytes:
    """The metadata line with the MD5 of its (changed) payload, as torch computes it: of the
    payload lines without their tab, joined by newlines (blank lines after it are not part)."""
    lines = list(payload)
    while lines and not lines[-1].startswith(b"\t"):
        lines.pop()
    md5 = hashlib.md5(b"\n".join(line[1:] for line in lines), usedforsecurity=False).hexdigest()
    return _MD5.sub(b'"has_payload": "%s"' % md5.encode(), meta, count=1)


def make_log(out: Path, mb: float, *, sources: list[Path] | None = None, vary: bool = False) -> int:
    """Writes ``out`` (about ``mb`` MB: whole copies, at least one); returns the copies made."""
    datas = [_read(p) for p in (sources or [SMALL])]
    size = sum(len(d) for d in datas) / len(datas)
    n = max(1, round(mb * 2**20 / size))
    with open(out, "wb") as f:
        gen = copies(datas, vary)
        for _ in range(n):
            f.write(next(gen))
    return n


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--mb", type=float, default=200, help="size to reach, MB (default 200)")
    p.add_argument("--vary", action="store_true", help="give every copy names (and texts) of its own")
    p.add_argument("--source", type=Path, action="append", help="a TORCH_TRACE log to copy (repeatable)")
    ns = p.parse_args()
    t0 = time.perf_counter()
    n = make_log(ns.out, ns.mb, sources=ns.source, vary=ns.vary)
    size = ns.out.stat().st_size / 2**20
    print(f"{ns.out}: {size:.1f} MB, {n} copies, {time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
