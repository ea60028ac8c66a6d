"""compiler.load_trace on damaged and edited TORCH_TRACE logs: it returns a Report or raises
TraceFormatError naming ``<file>:<line>:``, nothing else (issue 13, finding 5). The logs are
the recorded fixtures (tests/fixtures/traces) with one thing changed; the fuzz test runs the
seeded inputs of benchmarks/fuzz_load.py."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import math
import os
import re
import warnings
from pathlib import Path

import pytest

import compiler
from benchmarks._fuzz import campaign
from benchmarks.fuzz_load import check, make_input
from compiler.read import _logfile as _events
from compiler.read._logfile import TraceTruncatedError, read_trace_file
from explorer import cli

TRACES = Path(__file__).parent / "fixtures" / "traces"
CPU_BREAKS = TRACES / "cpu-torch213-breaks.log.gz"
HEAD = "V1122 08:16:07.449000 399 torch/_dynamo/utils.py:2126] "
_GLOG = re.compile(rb"^[VIWEC]\d{4} [\d:.]+\s+\d+ [^\]]*\] ")


def _lines() -> list[bytes]:
    return gzip.decompress(CPU_BREAKS.read_bytes()).split(b"\n")


def _start(lines: list[bytes], marker: bytes, nth: int = 0) -> int:
    """The 1-based line of the nth event line containing marker."""
    return [i + 1 for i, ln in enumerate(lines) if _GLOG.match(ln) and marker in ln][nth]


def _meta(lines: list[bytes], lineno: int) -> dict:
    m = _GLOG.match(lines[lineno - 1])
    return json.loads(lines[lineno - 1][m.end() :])


def _set_meta(lines: list[bytes], lineno: int, meta: dict) -> list[bytes]:
    out = list(lines)
    m = _GLOG.match(out[lineno - 1])
    out[lineno - 1] = out[lineno - 1][: m.end()] + json.dumps(meta).encode()
    return out


def _write(tmp_path: Path, lines: list[bytes], name: str = "t.log") -> Path:
    p = tmp_path / name
    p.write_bytes(b"\n".join(lines))
    return p


def _event(name: str, payload: str | None, has_payload=None, **context) -> bytes:
    """An event as torch writes it: metadata line, then each payload line after a tab."""
    meta = {name: {}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, **context}
    if payload is None:
        return (HEAD + json.dumps(meta)).encode()
    meta["has_payload"] = hashlib.md5(payload.encode()).hexdigest() if has_payload is None else has_payload
    return (HEAD + json.dumps(meta) + "".join("\n\t" + ln for ln in payload.split("\n"))).encode()


def _saved(report: compiler.Report, tmp_path: Path) -> Path:
    out = tmp_path / "saved.json"
    report.to_json(out)
    return out


def _load(p: Path) -> compiler.Report:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of these logs is truncated
        return compiler.load_trace(p)


# ---- metadata of the wrong type or range -------------------------------------------


@pytest.mark.parametrize(
    "key, value, shown",
    [
        ("frame_id", "a", '"a"'),
        ("frame_id", {}, "{}"),
        ("frame_id", "0/1", '"0/1"'),
        ("frame_id", True, "true"),
        ("frame_id", -1, "-1"),
        ("frame_compile_id", 1.5, "1.5"),
        ("rank", math.nan, "NaN"),
        ("rank", "x", '"x"'),
        ("attempt", "x", '"x"'),
        ("attempt", [], "[]"),
        ("compiled_autograd_id", "!0", '"!0"'),
    ],
)
def test_a_bad_id_names_its_line(tmp_path, key, value, shown):
    lines = _lines()
    n = _start(lines, b'"dynamo_start"', 1)
    p = _write(tmp_path, _set_meta(lines, n, {**_meta(lines, n), key: value}))
    msg = f"{p}:{n}: {key} of event 'dynamo_start' must be a non-negative integer, got {shown}"
    with pytest.raises(compiler.TraceFormatError) as e:
        compiler.load_trace(p)
    assert str(e.value) == msg


@pytest.mark.parametrize("value", [1, "x", "0" * 31, {}, 1.5])
def test_has_payload_is_true_or_an_md5(tmp_path, value):
    lines = _lines()
    n = _start(lines, b'"dynamo_output_graph"')
    p = _write(tmp_path, _set_meta(lines, n, {**_meta(lines, n), "has_payload": value}))
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}:{n}: has_payload of event")):
        compiler.load_trace(p)


def test_ids_torch_left_null_are_no_ids(tmp_path):
    # torch 2.6-era logs write "compiled_autograd_id": null on events (and a null rank or
    # attempt means the same): the log loads as it would without them
    lines = _lines()
    out = [
        _set_meta(lines, i + 1, {**_meta(lines, i + 1), "compiled_autograd_id": None, "rank": None})[i]
        if _GLOG.match(ln)
        else ln
        for i, ln in enumerate(lines)
    ]
    assert sum(b'"compiled_autograd_id": null' in ln for ln in out) > 50
    r, whole = _load(_write(tmp_path, out)), _load(CPU_BREAKS)
    assert r.rank is None and r.damaged == ()
    assert [c.id for c in r.compiles] == [c.id for c in whole.compiles] == ["0/0", "1/0", "0/1", "1/1"]
    assert [(b.filename, b.line) for b in r.graph_breaks] == [
        (b.filename, b.line) for b in whole.graph_breaks
    ]


def test_compiled_autograd_ids_and_restarts_load(tmp_path):
    # compiled autograd: events carry compiled_autograd_id; the report keeps torch's id as
    # torch prints it (!0/1/0, docs/pipelines.md); a restarted analysis has attempt 1.
    lines = _lines()
    out = list(lines)
    for i, ln in enumerate(lines):
        m = _GLOG.match(ln)
        if m and b'"frame_id": 1' in ln:
            meta = json.loads(ln[m.end() :])
            meta.update(compiled_autograd_id=0, attempt=1)
            out[i] = ln[: m.end()] + json.dumps(meta).encode()
    r = _load(_write(tmp_path, out))
    assert [c.id for c in _load(CPU_BREAKS).compiles] == ["0/0", "1/0", "0/1", "1/1"]
    assert [c.id for c in r.compiles] == ["0/0", "!0/1/0", "0/1", "!0/1/1"]


# ---- payloads: MD5 of every event, non-UTF-8 bytes, empty lines -------------------------


def test_an_edited_payload_names_its_event(tmp_path):
    lines = _lines()
    n = _start(lines, b'"dynamo_output_graph"')  # compile 0/0, far from the end
    assert lines[n].startswith(b"\t") and n < len(lines) // 2
    edited = list(lines)
    edited[n] = edited[n].replace(b"torch", b"TORCH", 1)
    assert edited[n] != lines[n]
    dropped = [*lines[: n + 1], *lines[n + 2 :]]
    doubled = [*lines[: n + 1], lines[n], *lines[n + 1 :]]
    whole = _load(CPU_BREAKS)
    for variant in (edited, dropped, doubled):
        p = _write(tmp_path, variant)
        with pytest.raises(compiler.TraceFormatError) as e:
            compiler.load_trace(p, strict=True)
        assert str(e.value) == (
            f"{p}:{n}: payload of event 'dynamo_output_graph' at line {n} does not match its MD5: "
            "the log was edited or damaged"
        )
        assert not isinstance(e.value, TraceTruncatedError)
        # by default the payload is kept as read, the event marked, one warning line
        mark = f"{p}:{n}: event 'dynamo_output_graph': its payload does not match its MD5"
        with pytest.warns(UserWarning) as w:
            r = compiler.load_trace(p)
        assert [str(x.message) for x in w] == [
            "1 event whose payload is not what torch wrote, kept as read and listed in "
            f"report.damaged (strict=True refuses the log); the first: {mark}"
        ]
        assert r.damaged == (mark,)
        assert [c.id for c in r.compiles] == [c.id for c in whole.compiles]
        assert compiler.load(_saved(r, tmp_path)).damaged == (mark,)
    code = r.compiles[0].stages.capture.graph.code
    assert code != whole.compiles[0].stages.capture.graph.code


def test_without_md5_an_edited_payload_is_read_as_it_is(tmp_path):
    # torch before the MD5 wrote has_payload: true; nothing to check the payload against
    lines = _lines()
    n = _start(lines, b'"dynamo_output_graph"')
    out = [
        _set_meta(lines, i + 1, {**_meta(lines, i + 1), "has_payload": True})[i]
        if b'"has_payload"' in ln
        else ln
        for i, ln in enumerate(lines)
    ]
    out[n] = b"\t# edited by hand"
    r = _load(_write(tmp_path, out))
    assert r.compiles[0].stages.capture.graph.code.startswith("# edited by hand\n")


def test_non_utf8_bytes_name_their_line(tmp_path):
    lines = _lines()
    n = _start(lines, b'"dynamo_output_graph"')
    bad = list(lines)
    bad[n + 2] = bad[n + 2][:5] + b"\xff" + bad[n + 2][5:]  # a payload line
    p = _write(tmp_path, bad)
    with pytest.raises(compiler.TraceFormatError) as e:
        compiler.load_trace(p, strict=True)
    assert str(e.value).startswith(f"{p}:{n + 3}: byte 0xff at column 6 is not UTF-8 text")
    with pytest.warns(UserWarning, match="1 event whose payload is not what torch wrote"):
        r = compiler.load_trace(p)  # a payload's bytes: kept (replaced), the event marked
    assert r.damaged == (
        f"{p}:{n}: event 'dynamo_output_graph': byte 0xff at line {n + 3}, column 6 is not UTF-8 text",
    )
    assert "\ufffd" in r.compiles[0].stages.capture.graph.code
    bad = list(lines)
    bad[n - 1] = bad[n - 1].replace(b"torch/", b"t\xc3(rch/", 1)  # a metadata line (glog prefix)
    p = _write(tmp_path, bad)
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}:{n}: byte 0xc3 at column ")):
        compiler.load_trace(p)


def test_a_cut_inside_a_character_is_a_truncation(tmp_path):
    lines = _lines()
    last = _event("artifact", "caf\u00e9", artifact={"name": "x", "encoding": "string"}).split(b"\n")
    p = _write(tmp_path, [*lines[:-1], last[0], last[1][:-1]])  # no newline, half of the é
    with pytest.warns(UserWarning, match=re.escape(f"{p}:{len(lines)}: the log is truncated")):
        r = compiler.load_trace(p)
    assert len(r.compiles) == 4


def test_empty_lines_inside_a_payload(tmp_path):
    # torch.export of torch 2.6-2.7 writes empty payload lines without their tab
    code = "def f(x):\n\n    return x\n"
    md5 = hashlib.md5(code.encode()).hexdigest()
    head, tail = _event("dynamo_start", None), _event("compilation_metrics", None)

    def log(has_payload, *payload_lines: bytes, blanks: int = 0) -> Path:
        meta = HEAD + json.dumps(
            {"aot_joint_graph": {}, "frame_id": 0, "frame_compile_id": 0, "has_payload": has_payload}
        )
        return _write(tmp_path, [head, meta.encode(), *payload_lines, *[b""] * blanks, tail, b""])

    # with the MD5: empty lines belong to the payload until its MD5 is met, the last one too
    for blanks in (0, 1, 3):
        p = log(md5, b"\tdef f(x):", b"", b"\t    return x", b"", blanks=blanks)
        assert _payload_of(p, "aot_joint_graph") == code
        assert [e.name for e in read_trace_file(str(p))] == [
            "dynamo_start",
            "aot_joint_graph",
            "compilation_metrics",
        ]
    # has_payload true (no MD5): an empty line is payload when a tab line follows it
    p = log(True, b"\tdef f(x):", b"", b"\t    return x", blanks=2)
    assert _payload_of(p, "aot_joint_graph") == "def f(x):\n\n    return x"
    assert len(_load(p).compiles) == 1


def _payload_of(p: Path, name: str) -> str | None:
    (ev,) = [e for e in read_trace_file(str(p)) if e.name == name]
    return ev.payload


def test_a_real_log_with_its_empty_payload_lines_untabbed(tmp_path):
    lines = _lines()
    assert lines.count(b"\t") > 100
    p = _write(tmp_path, [b"" if ln == b"\t" else ln for ln in lines])
    assert _load(p) == dataclasses.replace(_load(CPU_BREAKS), source=f"torch-trace:{p}")


# ---- what the builder cannot read ----------------------------------------------------


def test_a_value_the_builder_cannot_read_names_its_event(tmp_path):
    lines = _lines()
    n = _start(lines, b'{"str": ')
    p = _write(tmp_path, _set_meta(lines, n, {"str": ["/x.py", math.nan]}))
    with pytest.raises(compiler.TraceFormatError) as e:
        compiler.load_trace(p)
    assert str(e.value).startswith(
        f"{p}:{n}: event 'str' holds a value the report cannot be built from (ValueError"
    )
    assert isinstance(e.value.__cause__, ValueError)


def test_a_value_of_the_wrong_type_names_its_event(tmp_path):
    lines = _lines()
    n = _start(lines, b'"compilation_metrics"', 2)  # compile 0/1
    meta = _meta(lines, n)
    meta["compilation_metrics"]["guard_count"] = "x"
    p = _write(tmp_path, _set_meta(lines, n, meta))
    with pytest.raises(compiler.TraceFormatError) as e:
        compiler.load_trace(p)
    assert str(e.value).startswith(
        f"{p}:{n}: event 'compilation_metrics' gives the report a value of the wrong type "
        '(SchemaError: $.compiles[2].stages.capture.guard_count: expected int or null, got "x")'
    )
    # one that fails after the builder's pass over the events: found by bisection
    meta["compilation_metrics"]["guard_count"] = 3
    meta["compilation_metrics"]["entire_frame_compile_time_s"] = "x"
    p = _write(tmp_path, _set_meta(lines, n, meta))
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}:{n}: event 'compilation_metrics' ")):
        compiler.load_trace(p)


# ---- endless input, files that are not files -----------------------------------------


def test_a_line_longer_than_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(_events, "MAX_LINE_BYTES", 4096)
    p = tmp_path / "t.log"
    p.write_bytes(_event("dynamo_start", None) + b"\n" + b"\0" * 10_000)
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}:2: line longer than 4096 bytes")):
        compiler.load_trace(p)
    assert _events.MAX_LINE_BYTES == 4096 and 512 * 2**20 == 536870912


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_and_a_fifo_are_refused(tmp_path):
    with pytest.raises(compiler.TraceFormatError, match="^/dev/zero: not a regular file"):
        compiler.load_trace("/dev/zero")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(compiler.TraceFormatError, match=f"^{re.escape(str(fifo))}: not a regular file"):
        compiler.load_trace(fifo)


# ---- the fuzz test ---------------------------------------------------------------------

FUZZ_SEEDS = 2000  # about 35 s on 2 CPUs; benchmarks/fuzz_load.py runs longer
FUZZ_BUDGET_S = 55


@pytest.mark.stress
def test_fuzzed_logs_load_or_raise_trace_format_error(tmp_path, capsys):
    path = str(tmp_path / "dedicated_log_torch_trace_fuzz.log")
    outcomes, failed, _, seconds = campaign(make_input, check, path, range(FUZZ_SEEDS), FUZZ_BUDGET_S)
    failures = [f"seed {seed} ({what}): {err}" for seed, what, err, _ in failed]
    with capsys.disabled():
        print(f"\nfuzz: {sum(outcomes.values())} inputs in {seconds:.1f} s: {dict(outcomes)}")
    assert not failures, "\n".join(failures[:10])
    assert outcomes["Report"] and outcomes["TraceFormatError"]


# ---- the CLI: one line, exit status 2 --------------------------------------------------


def _cli_error(capsys, *argv: str) -> str:
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pt2-explorer: error: "), err
    return err[len("pt2-explorer: error: ") : -1]


def test_cli_load_bad_inputs(tmp_path, capsys, monkeypatch):
    assert (
        _cli_error(capsys, "load", str(tmp_path / "missing"))
        == f"{tmp_path / 'missing'}: no such file or directory"
    )
    assert _cli_error(capsys, "load", str(tmp_path)) == f"{tmp_path}: no TORCH_TRACE logs in this directory"
    lines = _lines()
    n = _start(lines, b'"dynamo_start"')
    bad = _write(tmp_path, _set_meta(lines, n, {**_meta(lines, n), "rank": "x"}), "bad.log")
    assert _cli_error(capsys, "load", str(bad)).startswith(f"{bad}:{n}: rank of event 'dynamo_start'")
    binary = tmp_path / "bin.log"
    binary.write_bytes(b"\xff\xfe\x00garbage\n")
    assert _cli_error(capsys, "load", str(binary)).startswith(
        f"{binary}:1: byte 0xff at column 1 is not UTF-8"
    )
    assert _cli_error(capsys, "load", "/dev/zero").startswith("/dev/zero: not a regular file")

    def denied(path, **kw):
        raise PermissionError(13, "Permission denied", os.fspath(path))

    monkeypatch.setattr(compiler, "load_trace", denied)
    assert _cli_error(capsys, "load", str(bad)) == f"{bad}: Permission denied"


def test_cli_load_marks_an_edited_payload_and_strict_refuses_it(tmp_path, capsys):
    lines = _lines()
    n = _start(lines, b'"dynamo_output_graph"')
    edited = list(lines)
    edited[n] = edited[n].replace(b"torch", b"TORCH", 1)
    p = _write(tmp_path, edited)
    out = tmp_path / "r.json"
    assert cli.main(["load", str(p), "--json", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    assert err == (
        "pt2-explorer: warning: 1 event whose payload is not what torch wrote, kept as read and listed "
        "in report.damaged (strict=True refuses the log); the first: "
        f"{p}:{n}: event 'dynamo_output_graph': its payload does not match its MD5\n"
    )
    assert compiler.load(out).damaged == (
        f"{p}:{n}: event 'dynamo_output_graph': its payload does not match its MD5",
    )
    assert cli.main(["report", str(out)]) == 0
    assert (
        f"1 event of the log not as torch wrote it (kept as read): {p}:{n}: event 'dynamo_output_graph': "
        "its payload does not match its MD5" in capsys.readouterr().out
    )
    assert _cli_error(capsys, "load", str(p), "--strict") == (
        f"{p}:{n}: payload of event 'dynamo_output_graph' at line {n} does not match its MD5: "
        "the log was edited or damaged"
    )


_JSON_TEXTS = [
    '{"name": "é \\u2026", "ts": 1795335367453729.0, "n": -0, "x": [1e5, 2.5e-7], "args": {"a": null}}',
    '{"a": 1, "a": 2}',  # a repeated key: the last one
    '{"a": NaN, "b": -Infinity}',  # orjson refuses these, json takes them
    '{"a": "\\ud800"}',  # a lone surrogate
    '{"a": 1e400}',
    "[" * 500 + "]" * 500,
]
_BAD_JSON = ['{"a": }', '{"a": "\x01"}', '{"a": 1} x', "", "[" * 1100 + "]" * 1100]  # deeper than orjson goes


def _outcome(loads, text: str) -> tuple:
    try:
        return ("value", repr(loads(text)))
    except (ValueError, RecursionError) as e:
        return (type(e), str(e))


@pytest.mark.parametrize("orjson", [True, False])
def test_event_json_is_read_as_json_reads_it(monkeypatch, orjson, tmp_path):
    """Event metadata and timed-phase records are parsed by orjson where installed: the same
    values and errors as json.loads, and json alone without it; an integer past 64 bits is read
    by json (orjson would make it a float): in metadata always, in a phase's stamp where one is."""
    from compiler.model import _fastjson

    if not orjson:
        monkeypatch.setattr(_fastjson, "orjson", None)
    else:
        assert _fastjson.orjson is not None  # a dependency (pyproject.toml)
    for loads in (_fastjson.loads, _fastjson.loads_exact):
        for text in _JSON_TEXTS:
            assert repr(loads(text)) == repr(json.loads(text)), text[:40]
        for text in _BAD_JSON:  # json's error, or (nesting: under a raised recursion limit) its value
            assert _outcome(loads, text) == _outcome(json.loads, text), text[:40]
    for text in ('{"a": 123456789012345678901234567890}', '{"a": "\ud800"}'):  # past 64 bits; not UTF-8
        assert repr(_fastjson.loads_exact(text)) == repr(json.loads(text))
    # a metadata line's bytes: json's value, or None where json must read it (loads_exact)
    for text in [*_JSON_TEXTS, *_BAD_JSON, '{"a": 123456789012345678901234567890}']:
        value = _fastjson.loads_bytes(text.encode())
        assert value is None or repr(value) == repr(json.loads(text)), text[:40]
    read = [
        _fastjson.loads_bytes(t) for t in (b'{"a": [1]}', b'{"a": 18446744073709551616}', b'{"a": "\xff"}')
    ]
    assert read == ([{"a": [1]}, None, None] if orjson else [None, None, None])
    big = 2**70 + 1
    stamps = [("B", big), ("E", big + 2_000_000)]
    events = [
        _event(
            "chromium_event",
            json.dumps({"name": "bytecode_tracing", "ph": ph, "ts": ts, "args": {"compile_id": "0/0"}}),
        )
        for ph, ts in stamps
    ]
    log = _write(tmp_path, [_event("dynamo_start", None), *events, b""])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (c,) = compiler.load_trace(log).compiles
    assert c.phases[0].name == "bytecode_tracing" and c.phases[0].duration_s == 2.0
