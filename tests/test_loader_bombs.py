"""Reading is bounded: a crafted report or TORCH_TRACE log is one ReportFormatError /
TraceFormatError line naming the file (and the JSON path), never MemoryError or
RecursionError (compiler/model/_limits.py, compiler/model/_resolve.py; docs/report-schema.md, "Limits").
The bombs load in a child process whose address space is capped at 1.5 GiB, so that a
regression fails here instead of taking the machine's memory. The fuzz test runs the seeded
inputs of benchmarks/fuzz_reports.py."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pytest

import compiler
from benchmarks._fuzz import campaign
from benchmarks.fuzz_reports import (
    check,
    graph_bomb,
    gzip_bomb,
    log_gzip_bomb,
    make_input,
    nested,
    report_gzip_bomb,
    text_bomb,
)
from explorer import cli

ROOT = Path(__file__).resolve().parents[1]
GPU_REPORT = ROOT / "tests" / "fixtures" / "reports" / "h100-torch211-gpu-block.json.gz"
CPU_BREAKS = ROOT / "tests" / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"
FLOOR = 16 * 2**20
MEMORY_CAP = 1536 * 2**20


def _past(limit: int, unit: str, of: str, size: int, ratio: str = "64") -> str:
    """The words of a cap reached, as docs/report-schema.md gives them (what references build:
    a value built counts 32)."""
    note = "; a value built counts 32" if unit == "characters and values" else ""
    return (
        f"past the limit of {limit:,} {unit} for {of} of {size:,} bytes ({ratio} × its size + 16,777,216{note}; "
        "max_expansion= or PT2_EXPLORER_MAX_EXPANSION raises it)"
    )


def _v1() -> dict:
    """The GPU report fixture as recorded (the full form, schema_version 1)."""
    return json.loads(gzip.decompress(GPU_REPORT.read_bytes()))


def _v2() -> dict:
    """The same report in the file form (schema_version 2: strings, texts, graphs)."""
    return json.loads(compiler.load(GPU_REPORT).to_json())


def _write(path: Path, data) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return path


# ---- the bombs, under a memory cap -------------------------------------------------------

_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
import compiler
out = {}
for name, path in json.loads(sys.argv[2]).items():
    try:
        (compiler.load_trace if path.endswith(".log.gz") else compiler.load)(path)
        out[name] = "loaded"
    except BaseException as e:  # MemoryError, RecursionError: the answer that fails the test
        out[name] = f"{type(e).__name__}: {e}"
print(json.dumps(out))
"""


def _one_member_bomb(mib: int) -> bytes:
    """gzip of ``mib`` MiB of zeros in one member (the classic bomb: about 1 KB per MiB)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join([z.compress(b"0" * 2**20) for _ in range(mib)] + [z.flush()])


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> tuple[dict[str, str], dict[str, str]]:
    """What loading each bomb gave in the memory-capped child, and what it must give."""
    d = tmp_path_factory.mktemp("bombs")
    paths: dict[str, Path] = {}
    want: dict[str, str] = {}

    # a 1 MB .json.gz that expands to 1 GiB
    p = paths["report gzip"] = _write(d / "r.json.gz", report_gzip_bomb(1024))
    size = p.stat().st_size
    want["report gzip"] = f"{p}: gzip data expands {_past(64 * size + FLOOR, 'bytes', 'a file', size)}"
    # the same in one gzip member: 64 MiB from 65 KB
    p = paths["report gzip, one member"] = _write(d / "one.json.gz", _one_member_bomb(64))
    size = p.stat().st_size
    want["report gzip, one member"] = (
        f"{p}: gzip data expands {_past(64 * size + FLOOR, 'bytes', 'a file', size)}"
    )
    # a 2 MB .log.gz of 1 GiB: one event, then payload lines of 1 KiB; named: the line the
    # cap falls in (the byte at offset `cap` of the unzipped log)
    data, head = log_gzip_bomb(1024)
    p = paths["log gzip"] = _write(d / "t.log.gz", data)
    size = p.stat().st_size
    cap = 64 * size + FLOOR
    line = 2 + (cap - head) // 1024
    want["log gzip"] = f"{p}:{line}: gzip data expands {_past(cap, 'bytes', 'a file', size)}"
    # one $t text of 80,000 pieces of 100,000 characters: 8 GB from 340 KB
    p = paths["$t pieces"] = _write(d / "t.json", text_bomb())
    size = p.stat().st_size
    what = "text reference 0 (8,000,000,000 characters) expands the references"
    want["$t pieces"] = (
        f"{p}: $.torch_version: {what} {_past(64 * size + FLOOR, 'characters and values', 'JSON', size)}"
    )
    # one graph of 20,000 nodes in 40,000 compiles: each use built anew. A use counts the
    # graph's values, 32 each: itself, its 2 keys, its 20,000 nodes and their 3 keys each
    p = paths["$g uses"] = _write(d / "g.json", graph_bomb(20_000, 40_000))
    size = p.stat().st_size
    values = 1 + 2 + 20_000 + 3 * 20_000
    limit = 64 * size + FLOOR
    what = f"graph reference 0 ({values:,} values, built at each use) expands the references"
    want["$g uses"] = (
        f"{p}: $.compiles[{limit // (32 * values)}].stages.capture.graph: {what} "
        f"{_past(limit, 'characters and values', 'JSON', size)}"
    )
    # a graph that refers to itself, two that refer to each other
    head = {"schema_version": 2, "strings": [], "texts": [], "torch_version": "2.13", "device": "cpu"}
    p = paths["$g self"] = _write(
        d / "self.json", {**head, "graphs": [{"code": "x", "nodes": [{"$g": 0}]}], "x": {"$g": 0}}
    )
    want["$g self"] = f"{p}: $.graphs[0].nodes[0]: graph 0 refers to itself"
    p = paths["$g 2-cycle"] = _write(
        d / "cycle.json", {**head, "graphs": [{"code": {"$g": 1}}, {"code": {"$g": 0}}], "x": {"$g": 0}}
    )
    want["$g 2-cycle"] = f"{p}: $.graphs[0].code: graph reference 1 inside graph 0: a graph holds no graphs"
    # metrics 900 deep, in both forms: the first object past 100 levels is named ($ is level 1)
    deep_path = "$.compiles[0].metrics" + ".a" * 97
    for form, data in (("full form", _v1()), ("file form", _v2())):
        data["compiles"][0]["metrics"] = nested(900)
        p = paths[f"metrics 900 deep, {form}"] = _write(d / f"deep-{form[:4]}.json", data)
        want[f"metrics 900 deep, {form}"] = f"{p}: {deep_path}: nested deeper than 100 levels"
    # texts pieces that index the strings Python-style: -1 (the last), true (the second)
    for piece, shown in ((-1, "-1"), (True, "true")):
        data = _v2()
        data["texts"][0][0] = piece
        p = paths[f"texts piece {shown}"] = _write(d / f"piece{shown}.json", data)
        want[f"texts piece {shown}"] = (
            f"{p}: $.texts[0][0]: text piece {shown} is not an index of the {len(data['strings'])} strings"
        )

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PT2_EXPLORER_MAX_EXPANSION", None)
    arg = json.dumps({k: str(v) for k, v in paths.items()})
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(MEMORY_CAP), arg],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    return got, {
        k: f"{'TraceFormatError' if k.startswith('log') else 'ReportFormatError'}: {v}"
        for k, v in want.items()
    }


BOMBS = [
    "report gzip",
    "report gzip, one member",
    "log gzip",
    "$t pieces",
    "$g uses",
    "$g self",
    "$g 2-cycle",
    "metrics 900 deep, full form",
    "metrics 900 deep, file form",
    "texts piece -1",
    "texts piece true",
]


@pytest.mark.parametrize("name", BOMBS)
def test_a_bomb_is_one_error_under_a_memory_cap(bombs, name):
    got, want = bombs
    assert got[name] == want[name]


# ---- texts pieces, depth, graph uses: the edges -------------------------------------------


@pytest.mark.parametrize("piece, shown", [(1.5, "1.5"), ("0", '"0"'), (None, "null"), ("n", None)])
def test_a_texts_piece_is_a_non_negative_int_in_range(tmp_path, piece, shown):
    data = _v2()
    n = len(data["strings"])
    piece, shown = (n, str(n)) if piece == "n" else (piece, shown)
    data["texts"][0][3] = piece
    p = _write(tmp_path / "r.json", data)
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(p)
    assert str(e.value) == f"{p}: $.texts[0][3]: text piece {shown} is not an index of the {n} strings"


def test_100_levels_load_101_do_not(tmp_path):
    for form, data in (("full", _v1()), ("file", _v2())):
        data["compiles"][0]["metrics"] = nested(97)  # $ 1, compiles 2, [0] 3, metrics 4..100
        r = compiler.load(_write(tmp_path / f"{form}100.json", data))
        assert r.compiles[0].metrics == nested(97)
        data["compiles"][0]["metrics"] = {"$d": nested(98)} if form == "file" else nested(98)
        p = _write(tmp_path / f"{form}101.json", data)
        with pytest.raises(compiler.ReportFormatError) as e:
            compiler.load(p)
        inner = '["$d"]' if form == "file" else ""
        assert str(e.value) == f"{p}: $.compiles[0].metrics{inner}{'.a' * 97}: nested deeper than 100 levels"


@pytest.mark.stress
def test_graph_uses_count_up_to_the_cap(tmp_path):
    # max_expansion=0: the cap is the floor alone, 16 MiB. A graph of 1,000 nodes has 4,003
    # values (itself, 2 keys, 1,000 nodes of 3 keys), 32 each, counted at each use: 130 uses fit
    uses = FLOOR // (32 * 4003)
    r = compiler.load(_write(tmp_path / "g.json", graph_bomb(1000, uses)), max_expansion=0)
    assert len(r.compiles) == uses and len({c.stages.capture.graph for c in r.compiles}) == 1
    p = _write(tmp_path / "g.json", graph_bomb(1000, uses + 1))
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(p, max_expansion=0)
    size = p.stat().st_size
    assert str(e.value) == (
        f"{p}: $.compiles[{uses}].stages.capture.graph: graph reference 0 (4,003 values, built at each use) "
        f"expands the references {_past(FLOOR, 'characters and values', 'JSON', size, '0')}"
    )


def test_texts_count_up_to_the_cap(tmp_path):
    # a text of 1,024 pieces of 16,384 characters: 16 MiB, the floor exactly
    r = compiler.load(_write(tmp_path / "t.json", text_bomb(2**14, 2**10)), max_expansion=0)
    assert r.torch_version == "x" * FLOOR
    p = _write(tmp_path / "t.json", text_bomb(2**14, 2**10 + 1))
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(p, max_expansion=0)
    size = p.stat().st_size
    assert str(e.value) == (
        f"{p}: $.torch_version: text reference 0 (16,793,600 characters) expands the references "
        f"{_past(FLOOR, 'characters and values', 'JSON', size, '0')}"
    )


# ---- the caps raised: the keyword, the environment ----------------------------------------


def _padded_report(tmp_path: Path) -> tuple[Path, Path]:
    """The GPU report with 40 MiB of zeros under an unknown key, gzipped: 150 KB that expand
    past 64 x + 16 MiB (and what it expands to, for the oracle)."""
    text = json.dumps(_v1()).encode()
    p = _write(tmp_path / "padded.json.gz", gzip_bomb(text[:-1] + b', "pad": "', b"0", 40, b'"}'))
    return p, GPU_REPORT


def _padded_log(tmp_path: Path) -> tuple[Path, bytes]:
    """The CPU log and one artifact event of 40 MiB of payload (its MD5 right), gzipped."""
    log = gzip.decompress(CPU_BREAKS.read_bytes())
    fill = b"\t" + b"0" * 1023 + b"\n"
    lines = (2**20 // len(fill)) * 40
    md5 = hashlib.md5(b"\n".join([b"0" * 1023] * lines)).hexdigest()
    meta = {"artifact": {"name": "padding", "encoding": "string"}, "frame_id": 0, "frame_compile_id": 0}
    head = (
        log
        + b"V1122 08:16:07.449000 399 x.py:1] "
        + json.dumps({**meta, "has_payload": md5}).encode()
        + b"\n"
    )
    p = _write(tmp_path / "padded.log.gz", gzip_bomb(head, fill, 40))
    return p, head + fill * lines


def _line_of(plain: bytes, offset: int) -> int:
    """The 1-based line the byte at ``offset`` lies in: where reading reaches the cap."""
    return plain.count(b"\n", 0, offset) + 1


def test_the_caps_can_be_raised(tmp_path, monkeypatch):
    monkeypatch.delenv("PT2_EXPLORER_MAX_EXPANSION", raising=False)
    p, original = _padded_report(tmp_path)
    size = p.stat().st_size
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(p)
    assert str(e.value) == f"{p}: gzip data expands {_past(64 * size + FLOOR, 'bytes', 'a file', size)}"
    want = compiler.load(original)
    assert compiler.load(p, max_expansion=1000) == want
    assert compiler.load(p, max_expansion=float("inf")) == want
    monkeypatch.setenv("PT2_EXPLORER_MAX_EXPANSION", "1000")
    assert compiler.load(p) == want
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load(p, max_expansion=100)  # the keyword before the environment
    assert (
        str(e.value) == f"{p}: gzip data expands {_past(100 * size + FLOOR, 'bytes', 'a file', size, '100')}"
    )
    # load_ranks passes it on to every file it reads
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    (ranks / "run.rank0.json.gz").write_bytes(p.read_bytes())
    with pytest.raises(compiler.ReportFormatError, match="gzip data expands past the limit of"):
        compiler.load_ranks(ranks, max_expansion=10)
    assert compiler.load_ranks(ranks, max_expansion=1000).compiles == want.compiles

    log, plain = _padded_log(tmp_path)
    size = log.stat().st_size
    monkeypatch.setenv("PT2_EXPLORER_MAX_EXPANSION", "64")
    with pytest.raises(compiler.TraceFormatError) as e:
        compiler.load_trace(log)
    cap = 64 * size + FLOOR
    line = _line_of(plain, cap)
    assert str(e.value) == f"{log}:{line}: gzip data expands {_past(cap, 'bytes', 'a file', size)}"
    monkeypatch.setenv("PT2_EXPLORER_MAX_EXPANSION", "inf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = compiler.load_trace(log)
    assert [c.id for c in r.compiles] == ["0/0", "1/0", "0/1", "1/1"]
    monkeypatch.delenv("PT2_EXPLORER_MAX_EXPANSION")
    assert compiler.load_trace(log, max_expansion=1000).compiles == r.compiles


@pytest.mark.parametrize("value", ["x", "-1", "nan", "1e"])
def test_a_bad_environment_value_is_one_error(tmp_path, monkeypatch, capsys, value):
    monkeypatch.setenv("PT2_EXPLORER_MAX_EXPANSION", value)
    msg = f"PT2_EXPLORER_MAX_EXPANSION={value!r}: expected a number >= 0 (a ratio to the file's size), or inf"
    for load in (compiler.load, compiler.load_trace):
        with pytest.raises(ValueError) as e:
            load(GPU_REPORT if load is compiler.load else CPU_BREAKS)
        assert str(e.value) == msg and not isinstance(e.value, compiler.ReportFormatError)
    assert cli.main(["report", str(GPU_REPORT)]) == 2
    assert capsys.readouterr().err == f"pt2-explorer: error: {msg}\n"


@pytest.mark.parametrize("value, shown", [(-1, "-1"), (True, "True"), ("64", "'64'"), (float("nan"), "nan")])
def test_a_bad_max_expansion_is_a_value_error(value, shown):
    with pytest.raises(ValueError) as e:
        compiler.load(GPU_REPORT, max_expansion=value)
    assert (
        str(e.value) == f"max_expansion={shown}: expected a number >= 0 (a ratio to the file's size), or inf"
    )


def test_cli_prints_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PT2_EXPLORER_MAX_EXPANSION", raising=False)
    p, _ = _padded_report(tmp_path)
    log, plain = _padded_log(tmp_path)
    for argv, path in ((["report", str(p)], p), (["load", str(log)], log)):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        size = path.stat().st_size
        at = "" if path is p else f":{_line_of(plain, 64 * size + FLOOR)}"
        assert (
            err
            == f"pt2-explorer: error: {path}{at}: gzip data expands {_past(64 * size + FLOOR, 'bytes', 'a file', size)}\n"
        )


# ---- the fuzz test ---------------------------------------------------------------------

FUZZ_SEEDS = 1000  # about 25 s on 2 CPUs; benchmarks/fuzz_reports.py runs longer
FUZZ_BUDGET_S = 40


@pytest.mark.stress
def test_fuzzed_reports_load_or_raise_report_format_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PT2_EXPLORER_MAX_EXPANSION", raising=False)
    path = str(tmp_path / "fuzz.json")
    outcomes, failed, _, seconds = campaign(make_input, check, path, range(FUZZ_SEEDS), FUZZ_BUDGET_S)
    failures = [f"seed {seed} ({what}): {err}" for seed, what, err, _ in failed]
    with capsys.disabled():
        print(f"\nfuzz: {sum(outcomes.values())} reports in {seconds:.1f} s: {dict(outcomes)}")
    assert not failures, "\n".join(failures[:10])
    assert outcomes["Report"] and outcomes["ReportFormatError"]
