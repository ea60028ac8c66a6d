"""Fuzz ``compiler.load`` with damaged and crafted copies of real reports. Prints figures.

Every input is one of the recorded reports in tests/fixtures/reports, in its file form
(schema_version 2, as ``to_json`` writes it now) or as recorded (the full form of
schema_version 1), damaged by 1-3 seeded mutations: JSON values replaced by values of the
wrong type (as benchmarks/fuzz_load.py does for logs); references (``$s``, ``$t``, ``$g``)
pointing outside their tables, at themselves or at each other, with bools, negatives,
floats and huge ints; ``texts`` pieces that are not string indices; values nested 99 to
5000 levels deep; bytes flipped, inserted or deleted in the JSON text; and, rarely, the
bombs: a text whose pieces join into more than the references' cap, a graph used so often
that building it each time passes the cap, and gzip data that expands past its cap. Some
inputs are gzipped, and then the gzip stream damaged too. The contract: ``load`` returns a
Report or raises ``ReportFormatError`` whose message starts with ``<file>: ``. Anything else
(MemoryError, RecursionError, KeyError, ...) is a failure, printed with the seed that makes
the input again.

    .venv/bin/python benchmarks/fuzz_reports.py                  # 120 s, seeds from 0
    .venv/bin/python benchmarks/fuzz_reports.py --seconds 600 --first-seed 100000 --save out/fuzz

tests/test_loader_bombs.py runs the same inputs (``make_input``) for a few hundred seeds, and
the bombs below (``gzip_bomb``, ``text_bomb``, ...) under a memory cap.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import compiler  # noqa: E402
from benchmarks import _fuzz  # noqa: E402

REPORTS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "reports"
BAD_VALUES = (
    float("nan"), float("inf"), "x", None, {}, [], 1.5, -1, 0, True, False, 10**30, -(10**30),
    'a"b', "\\", "\u00e9\U0001f600", "", [1, 2], {"a": 1}, {"$s": 0}, {"$d": 1},
)  # fmt: skip
BAD_INDICES = (-1, True, False, 1.5, None, "0", 10**30, [0], {})


# ---- the bombs: small files that expand to far more than the machine's memory ------------


def gzip_bomb(head: bytes, fill: bytes, mib: int, tail: bytes = b"") -> bytes:
    """gzip data of ``head``, then ``mib`` MiB of ``fill`` repeated, then ``tail``: one member
    of a MiB of fill, compressed once and repeated (a gzip file may hold many members, and
    readers join them), so a GiB costs a MB and no time to make."""
    unit = fill * (2**20 // len(fill))
    member = gzip.compress(unit, compresslevel=9, mtime=0)
    return gzip.compress(head, mtime=0) + member * mib + gzip.compress(tail, mtime=0)


def report_gzip_bomb(mib: int = 1024) -> bytes:
    """A report whose gzip (about 1 KB per MiB) expands to ``mib`` MiB: a string of zeros."""
    return gzip_bomb(
        b'{"schema_version": 2, "torch_version": "2.13", "device": "cpu", "pad": "', b"0", mib, b'"}'
    )


def log_gzip_bomb(mib: int = 1024) -> tuple[bytes, int]:
    """A TORCH_TRACE log whose gzip (about 2 KB per MiB) expands to ``mib`` MiB: one event,
    then payload lines of 1 KiB. Returns the data and the length of its first line."""
    head = b'V1122 08:16:07.449000 399 torch/_dynamo/utils.py:2126] {"dynamo_output_graph": {}, '
    head += b'"frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "0123456789abcdef0123456789abcdef"}\n'
    return gzip_bomb(head, b"\t" + b"0" * 1022 + b"\n", mib), len(head)


def text_bomb(piece_chars: int = 100_000, pieces: int = 80_000) -> dict:
    """A report whose one ``$t`` text joins a piece of ``piece_chars`` characters ``pieces``
    times: 8 GB of text from 260 KB of JSON."""
    return {
        "schema_version": 2,
        "strings": ["x" * piece_chars],
        "texts": [[0] * pieces],
        "graphs": [],
        "torch_version": {"$t": 0},
        "device": "cpu",
    }


def graph_bomb(nodes: int = 20_000, uses: int = 40_000) -> dict:
    """A report whose one graph of ``nodes`` nodes stands in ``uses`` compiles: each use is
    built anew (``nodes`` x ``uses`` nodes) though the file holds it once."""
    node = {"name": "a", "op": "call_function", "target": "t"}
    compile_ = {"id": "0/0", "frame": 0, "name": "f", "filename": None, "line": None, "status": "ok"}
    compile_["stages"] = {"capture": {"graph": {"$g": 0}}}
    return {
        "schema_version": 2,
        "strings": [],
        "texts": [],
        "graphs": [{"code": "x", "nodes": [node] * nodes}],
        "torch_version": "2.13",
        "device": "cpu",
        "compiles": [compile_] * uses,
    }


def nested(depth: int, key: str = "a") -> dict:
    """``{"a": {"a": ... {}}}``, ``depth`` objects deep."""
    value: dict = {}
    for _ in range(depth - 1):
        value = {key: value}
    return value


# ---- the fuzzed inputs --------------------------------------------------------------------


@cache
def fixture_texts() -> tuple[tuple[str, str], ...]:
    """(name, JSON text) of every report fixture: as recorded, and in the file form."""
    out = []
    for p in sorted(REPORTS.rglob("*.json.gz")):
        raw = gzip.decompress(p.read_bytes()).decode("utf-8")
        out.append((f"{p.name} (as recorded)", raw))
        out.append((f"{p.name} (file form)", compiler.load(p).to_json()))
    return tuple(out)


def _slot(data, rng: random.Random) -> tuple:
    """A (container, key) of data found by a random descent: at each level a random entry,
    where the descent stops (more likely where there is nothing to descend into)."""
    c = data
    while isinstance(c, (dict, list)):
        keys = list(c) if isinstance(c, dict) else range(len(c))
        if not keys:
            return None
        k = rng.choice(keys)
        if not isinstance(c[k], (dict, list)) or not c[k] or rng.random() < 0.15:
            return c, k
        c = c[k]
    return None


def _mutate(data: dict, rng: random.Random) -> str:
    kind = rng.choice(
        ("value", "value", "value", "ref", "ref", "piece", "graph-ref", "deep", "text-bomb", "graph-bomb")
    )
    slot = _slot(data, rng)
    if slot is None:
        return "nothing"
    c, k = slot
    if kind == "value":
        c[k] = rng.choice(BAD_VALUES)
    elif kind == "ref":
        c[k] = {rng.choice(("$s", "$t", "$g")): rng.choice(BAD_INDICES + (0, 1, 10**6))}
    elif kind == "piece" and isinstance(data.get("texts"), list) and data["texts"]:
        t = rng.choice(data["texts"])
        if isinstance(t, list) and t:
            n = len(data["strings"]) if isinstance(data.get("strings"), list) else 0
            t[rng.randrange(len(t))] = rng.choice(BAD_INDICES + (n,))
    elif kind == "graph-ref" and isinstance(data.get("graphs"), list) and data["graphs"]:
        i = rng.randrange(len(data["graphs"]))
        gc, gk = _slot(data["graphs"][i], rng) or (data["graphs"], i)
        gc[gk] = {"$g": rng.choice((i, (i + 1) % len(data["graphs"])))}  # itself, or another
    elif kind == "deep":  # a marker, replaced in the JSON text (json.dumps itself recurses)
        c[k] = f"@@deep {rng.choice((50, 99, 100, 101, 500, 5000))}@@"
    elif kind == "text-bomb" and rng.random() < 0.2 and isinstance(data.get("strings"), list):
        data["strings"].append("y" * 2**20)
        data["texts"] = data["texts"] if isinstance(data.get("texts"), list) else []
        data["texts"].append([len(data["strings"]) - 1] * 1000)  # 1000 MiB of text
        c[k] = {"$t": len(data["texts"]) - 1}
    elif kind == "graph-bomb" and rng.random() < 0.2 and data.get("graphs"):
        c[k] = [{"$g": 0} for _ in range(200_000)]  # distinct objects: a later mutation changes one
    return kind


def make_input(seed: int) -> tuple[bytes, str]:
    """The damaged report for ``seed`` (bytes) and what was done to it (for the message)."""
    rng = random.Random(seed)
    name, text = rng.choice(fixture_texts())
    data = json.loads(text)
    steps = [_mutate(data, rng) for _ in range(rng.randint(1, 3))]
    what = f"{name}: {', '.join(steps)}"
    text = json.dumps(data)
    for m in set(re.findall(r'"@@deep (\d+)@@"', text)):
        n = int(m)
        text = text.replace(f'"@@deep {m}@@"', '{"a": ' * (n - 1) + "{}" + "}" * (n - 1), 1)
    raw = text.encode()
    if rng.random() < 0.15:  # damage in the JSON text itself
        b = bytearray(raw)
        at = rng.randrange(len(b))
        b[at : at + rng.randint(0, 8)] = rng.randbytes(rng.randint(0, 4))
        raw, what = bytes(b), what + ", bytes changed"
    if rng.random() < 0.3:
        raw = gzip.compress(raw, compresslevel=1, mtime=0)
        what += ", gzipped"
        if rng.random() < 0.05:  # a bomb behind the report: expands past the cap
            raw += gzip_bomb(b"", b"\n", 32)
            what += ", gzip bomb appended"
        elif rng.random() < 0.3:
            at = rng.randrange(len(raw))
            raw = raw[:at] if rng.random() < 0.5 else raw[:at] + bytes([raw[at] ^ 0x55]) + raw[at + 1 :]
            what += ", gzip damaged"
    return raw, what


def check(path: str) -> str:
    """Load ``path``; the outcome's name. Raises AssertionError when the contract is broken."""
    try:
        report = compiler.load(path)
    except compiler.ReportFormatError as e:
        if not str(e).startswith(f"{path}: ") or "\n" in str(e):
            raise AssertionError(
                f"message does not start with {path}: or is not one line: {str(e)[:300]!r}"
            ) from e
        return type(e).__name__
    if not isinstance(report, compiler.Report):
        raise AssertionError(f"load returned {type(report).__name__}")
    return "Report"


def main() -> int:
    return _fuzz.main(__doc__, make_input, check, "fuzz.json", 120.0)


if __name__ == "__main__":
    sys.exit(main())
