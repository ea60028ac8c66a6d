"""Fuzz ``compiler.load_trace`` with damaged copies of real TORCH_TRACE logs. Prints figures.

Every input is one of the recorded logs in tests/fixtures/traces (cut to a random number of
whole events), damaged by 1-3 seeded mutations: bytes flipped, inserted (non-UTF-8 included)
or deleted; JSON values in an event's metadata replaced by values of the wrong type (NaN,
"x", null, {}, [], 1.5, -1, huge ints, strings with quotes, torch's compiled-autograd and
restart ids); lines duplicated, deleted, swapped, emptied; tab prefixes dropped or added; the
file truncated; for 40% of inputs every payload's MD5 then fixed (or has_payload made
``true``, as older torch wrote it) so that the damage reaches the report builder; sometimes
gzipped, and then the gzip stream damaged too, or 64 MiB of payload lines put after its
first line in a gzip bomb of 140 KB (past the expansion cap, compiler/model/_limits.py). The
contract:
``load_trace`` returns a Report or raises ``TraceFormatError`` whose message starts with
``<file>:<line>:`` (``<file>:`` alone only for a file with no events). Anything else is a
failure, printed with the seed that makes the input again.

    .venv/bin/python benchmarks/fuzz_load.py                  # 180 s, seeds from 0
    .venv/bin/python benchmarks/fuzz_load.py --seconds 600 --first-seed 100000 --save out/fuzz

tests/test_loader_robust.py runs the same inputs (``make_input``) for a few hundred seeds.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
import sys
import warnings
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import compiler  # noqa: E402
from benchmarks import _fuzz  # noqa: E402
from benchmarks.fuzz_reports import gzip_bomb  # noqa: E402

TRACES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "traces"
_GLOG = re.compile(rb"^[VIWEC]\d{4} [\d:.]+\s+\d+ [^\]]*\] ")
CONTEXT_KEYS = ("frame_id", "frame_compile_id", "attempt", "rank", "compiled_autograd_id", "has_payload")
BAD_VALUES = (
    float("nan"), float("inf"), "x", None, {}, [], 1.5, -1, 0, True, False, 10**30, -(10**30),
    'a"b', "it's", "\\", "0/1", "!0/0/0", "0/1_1", "\u00e9\U0001f600", "", [1, 2], {"a": 1},
    "0" * 32, "d41d8cd98f00b204e9800998ecf8427e",
)  # fmt: skip
_INSERTS = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\n", b"\t", b"\r", b"\n\t", b'"', b"{", b"]")


@cache
def fixture_lines(name: str) -> tuple[bytes, ...]:
    return tuple(gzip.decompress((TRACES / name).read_bytes()).split(b"\n"))


def fixtures() -> list[str]:
    return sorted(p.name for p in TRACES.glob("*.log.gz"))


def _event_starts(lines) -> list[int]:
    return [i for i, ln in enumerate(lines) if _GLOG.match(ln)]


def _replace_value(line: bytes, rng: random.Random) -> bytes:
    m = _GLOG.match(line)
    if not m:
        return line
    try:
        meta = json.loads(line[m.end() :])
    except ValueError:
        return line
    if not isinstance(meta, dict):
        return line
    value = rng.choice(BAD_VALUES)
    if rng.random() < 0.6:  # a context key torch sets on every event (or adds on some)
        meta[rng.choice(CONTEXT_KEYS)] = value
    else:  # somewhere inside the event's own metadata
        node: object = meta
        for _ in range(rng.randint(1, 4)):
            if isinstance(node, dict) and node:
                key = rng.choice(list(node))
                if rng.random() < 0.5 or not isinstance(node[key], (dict, list)) or not node[key]:
                    node[key] = value
                    break
                node = node[key]
            elif isinstance(node, list) and node:
                i = rng.randrange(len(node))
                if rng.random() < 0.5 or not isinstance(node[i], (dict, list)) or not node[i]:
                    node[i] = value
                    break
                node = node[i]
            else:
                break
    return line[: m.end()] + json.dumps(meta).encode()


_PAYLOAD_VALUE = re.compile(rb'^\t("[^"]*": ).*?(,?)$')


def _resign(lines: list[bytes], as_true: bool) -> list[bytes]:
    """Every event's has_payload made to fit its payload as it now is: its MD5 (an editor who
    fixed the MD5s), or ``true`` (logs of older torch carry no MD5)."""
    out = list(lines)
    for i in _event_starts(out):
        m = _GLOG.match(out[i])
        try:
            meta = json.loads(out[i][m.end() :])
        except ValueError:
            continue
        if not isinstance(meta, dict) or not meta.get("has_payload"):
            continue
        j = i + 1
        while j < len(out) and out[j].startswith(b"\t"):
            j += 1
        payload = b"\n".join(ln[1:] for ln in out[i + 1 : j])
        meta["has_payload"] = True if as_true else hashlib.md5(payload).hexdigest()
        out[i] = out[i][: m.end()] + json.dumps(meta).encode()
    return out


def _mutate(lines: list[bytes], rng: random.Random) -> list[bytes]:
    kind = rng.choice(
        ("flip", "insert", "delete-bytes", "value", "value", "value", "payload-value",
         "payload-value", "dup", "del-line", "swap", "untab", "tab", "empty-line", "truncate")
    )  # fmt: skip
    n = len(lines)
    i = rng.randrange(n)
    if kind == "payload-value":  # a value in a JSON payload (chromium_event, metrics, ...)
        keyed = [k for k, ln in enumerate(lines) if _PAYLOAD_VALUE.match(ln)]
        if keyed:
            k = rng.choice(keyed)
            m = _PAYLOAD_VALUE.match(lines[k])
            value = json.dumps(rng.choice(BAD_VALUES)).encode()
            lines[k] = b"\t" + m.group(1) + value + m.group(2)
    elif kind == "value":
        starts = _event_starts(lines)
        if starts:
            j = rng.choice(starts)
            lines[j] = _replace_value(lines[j], rng)
    elif kind in ("flip", "insert", "delete-bytes"):
        data = bytearray(b"\n".join(lines))
        if not data:
            return lines
        at = rng.randrange(len(data))
        if kind == "flip":
            data[at] ^= rng.randrange(1, 256)
        elif kind == "insert":
            data[at:at] = rng.choice(_INSERTS) if rng.random() < 0.8 else rng.randbytes(rng.randint(1, 8))
        else:
            del data[at : at + rng.randint(1, 64)]
        return bytes(data).split(b"\n")
    elif kind == "dup":
        k = rng.randint(1, 8)
        lines[i:i] = lines[i : i + k]
    elif kind == "del-line":
        del lines[i : i + rng.randint(1, 3)]
    elif kind == "swap":
        j = rng.randrange(n)
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "untab":
        tabbed = [k for k, ln in enumerate(lines) if ln.startswith(b"\t")]
        if tabbed:
            k = rng.choice(tabbed)
            lines[k] = lines[k][1:]
    elif kind == "tab":
        lines[i] = b"\t" + lines[i]
    elif kind == "empty-line":
        lines.insert(i, b"")
    elif kind == "truncate":
        data = b"\n".join(lines)
        return data[: rng.randrange(len(data) + 1)].split(b"\n")
    return lines


def make_input(seed: int, names: list[str] | None = None) -> tuple[bytes, str]:
    """The damaged log for ``seed`` (bytes) and what was done to it (for the failure message)."""
    rng = random.Random(seed)
    name = rng.choice(names or fixtures())
    lines = list(fixture_lines(name))
    starts = _event_starts(lines)
    if rng.random() < 0.7 and len(starts) > 2:  # a prefix of whole events: smaller, faster
        lines = lines[: starts[rng.randrange(1, min(len(starts), 600))]]
    steps = []
    for _ in range(rng.randint(1, 3)):
        before = len(lines)
        lines = _mutate(lines, rng)
        steps.append(f"{before}->{len(lines)} lines")
    what = f"{name}, {len(steps)} mutations"
    if rng.random() < 0.4:  # payloads re-signed: the damage reaches the report builder
        as_true = rng.random() < 0.3
        lines = _resign(lines, as_true)
        what += ", has_payload true" if as_true else ", MD5s fixed"
    data = b"\n".join(lines)
    if rng.random() < 0.2:
        plain, data = data, gzip.compress(data, compresslevel=1, mtime=0)
        what += ", gzipped"
        if rng.random() < 0.05:  # a gzip bomb after the first line: payload lines past the cap
            cut = plain.find(b"\n") + 1 or len(plain)
            data = gzip_bomb(plain[:cut], b"\t" + b"0" * 1022 + b"\n", 64, plain[cut:])
            what += ", gzip bomb inside"
        elif rng.random() < 0.5:
            at = rng.randrange(len(data))
            if rng.random() < 0.5:
                data = data[:at]
                what += ", gzip truncated"
            else:
                data = data[:at] + bytes([data[at] ^ rng.randrange(1, 256)]) + data[at + 1 :]
                what += ", gzip byte flipped"
    return data, what


def check(path: str) -> str:
    """Load ``path``; the outcome's name. Raises AssertionError when the contract is broken."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a truncated log warns and loads
            report = compiler.load_trace(path)
    except compiler.TraceFormatError as e:
        msg = str(e)
        ok = re.match(rf"{re.escape(path)}:\d+: ", msg) or msg.startswith(f"{path}: empty file")
        if not ok:
            raise AssertionError(f"message does not name {path}:<line>: {msg[:300]!r}") from e
        return type(e).__name__
    if not isinstance(report, compiler.Report):
        raise AssertionError(f"load_trace returned {type(report).__name__}")
    return "Report (truncated)" if report.error else "Report"


def main() -> int:
    names = fixtures()
    return _fuzz.main(
        __doc__, lambda seed: make_input(seed, names), check, "dedicated_log_torch_trace_fuzz.log", 180.0
    )


if __name__ == "__main__":
    sys.exit(main())
