"""A lone surrogate (``"\\ud800"``: JSON, but no text) in a report or a TORCH_TRACE log is read
as U+FFFD, with one line naming where (compiler/model/_surrogates.py): ``compiler.load`` warns
with the JSON path, the log reader marks the event damaged at its line (``strict``: refuses
it), and every output works afterwards: the summary, the HTML page, diff, repro, to_json."""

from __future__ import annotations

import dataclasses
import gzip
import json
import warnings
from pathlib import Path

import pytest

import compiler
import explorer
from explorer import cli
from explorer.model._summary import summary_text

ROOT = Path(__file__).resolve().parents[1]
GPU_REPORT = ROOT / "tests" / "fixtures" / "reports" / "h100-torch211-gpu-block.json.gz"
CPU_BREAKS = ROOT / "tests" / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"


def _report_with_surrogates(tmp_path: Path) -> Path:
    data = json.loads(compiler.load(GPU_REPORT).to_json())
    data["compiles"][0]["name"] = "f\ud800"
    data["graph_breaks"][0]["reason"] = "why \udfff"
    p = tmp_path / "s.json"
    p.write_text(json.dumps(data))  # ensure_ascii: written as the escapes "\ud800", "\udfff"
    assert "\\ud800" in p.read_text()
    return p


def _outputs_work(report: compiler.Report, tmp_path: Path) -> None:
    """Every output of the report: none raises UnicodeEncodeError."""
    assert "\ufffd" in summary_text(report) or "\ufffd" in explorer.text(report, "breaks")
    explorer.save_html(report, tmp_path / "p.html", title="t")
    (tmp_path / "p.html").read_text(encoding="utf-8")
    str(explorer.diff(report, report))
    out = tmp_path / "again.json.gz"
    report.to_json(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # what was written is text: read back, nothing to say
        assert compiler.load(out) == report


def test_a_report_reads_lone_surrogates_as_replacement_characters(tmp_path):
    p = _report_with_surrogates(tmp_path)
    with pytest.warns(UserWarning) as caught:
        r = compiler.load(p)
    assert [str(w.message) for w in caught] == [
        f"{p}: 2 strings held lone surrogates (not text; the first at $.compiles[0].name), "
        "read with U+FFFD in their place"
    ]
    assert r.compiles[0].name == "f\ufffd" and r.graph_breaks[0].reason == "why \ufffd"
    _outputs_work(r, tmp_path)


def test_the_cli_says_it_in_one_line_and_every_command_works(tmp_path, capsys):
    p = _report_with_surrogates(tmp_path)
    line = (
        f"pt2-explorer: warning: {p}: 2 strings held lone surrogates (not text; the first at "
        "$.compiles[0].name), read with U+FFFD in their place\n"
    )
    html = tmp_path / "r.html"
    for argv, lines in (
        (["report", str(p), "--html", str(html)], 1),
        (["report", str(p), "--view", "breaks"], 1),
        (["diff", str(p), str(p)], 2),
        (["repro", str(p), "--compile", "1/0", "-o", str(tmp_path / "repro.py")], 1),
    ):
        assert cli.main(argv) == 0, argv
        out, err = capsys.readouterr()
        assert err == line * lines, argv
    assert "f\ufffd" in html.read_text(encoding="utf-8")


def _log_with_surrogates(tmp_path: Path) -> tuple[Path, int, int]:
    """The CPU log, its first frame's name (dynamo_start) and its first compilation_metrics'
    co_name each given a lone surrogate, as torch's json.dumps escapes one."""
    lines = gzip.decompress(CPU_BREAKS.read_bytes()).split(b"\n")
    start = next(i for i, ln in enumerate(lines) if b'{"dynamo_start"' in ln)
    metrics = next(i for i, ln in enumerate(lines) if b'{"compilation_metrics"' in ln)
    lines[start] = lines[start].replace(b'"name": "f"', b'"name": "f\\udc00"', 1)
    lines[metrics] = lines[metrics].replace(b'"co_name": "f"', b'"co_name": "f\\ud800"', 1)
    p = tmp_path / "s.log"
    p.write_bytes(b"\n".join(lines))
    return p, start + 1, metrics + 1


def test_a_log_marks_the_events_and_loads_the_rest(tmp_path):
    p, start, metrics = _log_with_surrogates(tmp_path)
    want = (
        f"{p}:{start}: event 'dynamo_start': 1 string held a lone surrogate (not text; the first at "
        "$.dynamo_start.stack[0].name), read with U+FFFD in its place",
        f"{p}:{metrics}: event 'compilation_metrics': 1 string held a lone surrogate (not text; the "
        "first at $.compilation_metrics.co_name), read with U+FFFD in its place",
    )
    with pytest.warns(UserWarning) as caught:
        r = compiler.load_trace(p)
    assert r.damaged == want
    assert [str(w.message) for w in caught] == [
        "2 events whose payload is not what torch wrote, kept as read and listed in report.damaged "
        f"(strict=True refuses the log); the first: {want[0]}"
    ]
    good = compiler.load_trace(CPU_BREAKS)
    assert [c.id for c in r.compiles] == [c.id for c in good.compiles]
    assert r.frames[0].name == "f\ufffd" and good.frames[0].name == "f"
    _outputs_work(r, tmp_path)
    with pytest.raises(compiler.TraceFormatError) as e:
        compiler.load_trace(p, strict=True)
    assert str(e.value) == (
        f"{p}:{start}: event 'dynamo_start': 1 string held a lone surrogate (not text; the first at "
        "$.dynamo_start.stack[0].name)"
    )


def test_to_json_writes_a_lone_surrogate_as_its_escape(tmp_path):
    # a recording's file name Python read with surrogateescape: not UTF-8, so written as JSON's
    # escape of it, which load reads as U+FFFD and says so
    r = compiler.load(GPU_REPORT)
    bad = dataclasses.replace(r, compiles=(dataclasses.replace(r.compiles[0], filename="/tmp/\udcff.py"),))
    for name in ("w.json", "w.json.gz"):
        p = tmp_path / name
        bad.to_json(p)
        with pytest.warns(UserWarning) as caught:
            back = compiler.load(p)
        assert [str(w.message) for w in caught] == [
            f"{p}: 1 string held a lone surrogate (not text; the first at $.compiles[0].filename), "
            "read with U+FFFD in its place"
        ]
        assert back.compiles[0].filename == "/tmp/\ufffd.py"
