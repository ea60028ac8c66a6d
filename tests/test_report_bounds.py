"""A small report never takes the machine: one budget per file (compiler/model/_limits.py),
gzip data and references spending it together, each use of a shared string counted; and
views that show each field within a length, saying how much they left out (explorer/base/_bound.py).
The files are crafted here: 2,000 graph breaks sharing one 1 MiB string in a few kilobytes of
gzip, and a gzip whose text reference joins gigabytes once unzipped."""

from __future__ import annotations

import base64
import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import compiler
from benchmarks.fuzz_reports import gzip_bomb
from explorer import cli, text
from explorer.base import _bound
from explorer.model._summary import summary_text
from explorer.model._view import build_view

ROOT = Path(__file__).resolve().parents[1]
FLOOR = 16 * 2**20
MIB = 2**20
FIELDS = ("type", "reason", "filename", "explanation", "hints")  # each a use of the string
HINT = "max_expansion= or PT2_EXPLORER_MAX_EXPANSION raises it"


def _shared_breaks(n: int) -> dict:
    """``n`` graph breaks whose type, reason, file, explanation and hint are one 1 MiB string."""

    def brk(i: int) -> dict:
        b = {"compile_id": "0/0", "type": "t", "reason": "r", "filename": "f.py", "line": i}
        b.update({f: [{"$s": 0}] if f == "hints" else {"$s": 0} for f in FIELDS})
        return b

    return {
        "schema_version": 4,
        "strings": ["r" * MIB],
        "texts": [],
        "graphs": [],
        "torch_version": "2.13",
        "device": "cpu",
        "graph_breaks": [brk(i) for i in range(n)],
    }


def _json_values(raw: bytes) -> int:
    return raw.count(b",") + raw.count(b"{") + raw.count(b"[")


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_2000_breaks_sharing_a_mib_are_one_line_in_every_view(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PT2_EXPLORER_MAX_EXPANSION", raising=False)
    raw = json.dumps(_shared_breaks(2000)).encode()
    p = tmp_path / "r.json.gz"
    p.write_bytes(gzip.compress(raw, mtime=0))
    size = p.stat().st_size
    assert size < 50_000
    limit = 64 * size + FLOOR
    unzipped = len(raw) + 8 * _json_values(raw)
    use = (limit - unzipped) // MIB  # the first use past the budget, counted from 0
    brk, field = divmod(use, len(FIELDS))
    where = f"$.graph_breaks[{brk}].{FIELDS[field]}" + ("[0]" if FIELDS[field] == "hints" else "")
    want = (
        f"pt2-explorer: error: {p}: {where}: string reference 0 (1,048,576 characters, at each use) "
        f"expands the references past the limit of {limit:,} bytes, characters and values for a file "
        f"of {size:,} bytes (64 × its size + 16,777,216, of which its gzip data took {unzipped:,}; "
        f"a value built counts 32; {HINT})\n"
    )
    for extra in ([], ["--view", "breaks"], ["--html", str(tmp_path / "r.html")]):
        assert _cli(["report", str(p), *extra], capsys) == (2, "", want)
    assert not (tmp_path / "r.html").exists()


def test_gzip_and_references_share_one_budget(tmp_path, capsys, monkeypatch):
    # 1.5 MB of gzip: 100 MB of JSON (within 64x the file), whose one text joins 5,000 pieces
    # of 1 MiB. The caps multiplied, it passed the gzip cap and then the references' one, on
    # 64x the 100 MB; one budget on the file's size refuses it at the text
    monkeypatch.delenv("PT2_EXPLORER_MAX_EXPANSION", raising=False)
    pad = base64.b64encode(random.Random(0).randbytes(1_360_000))
    head = (
        b'{"schema_version": 4, "strings": ["' + b"x" * MIB + b'"], "texts": [[' + b"0," * 4999 + b"0]], "
        b'"graphs": [], "torch_version": {"$t": 0}, "device": "cpu", "pad": "' + pad
    )
    data = gzip_bomb(head, b"0", 95, b'"}')
    p = tmp_path / "m.json.gz"
    p.write_bytes(data)
    size = p.stat().st_size
    raw = gzip.decompress(data)
    assert 1_400_000 < size < 1_600_000 and len(raw) > 64 * len(data) // 2
    limit = 64 * size + FLOOR
    unzipped = len(raw) + 8 * _json_values(raw)
    want = (
        f"pt2-explorer: error: {p}: $.torch_version: text reference 0 (5,242,880,000 characters) expands "
        f"the references past the limit of {limit:,} bytes, characters and values for a file of "
        f"{size:,} bytes (64 × its size + 16,777,216, of which its gzip data took {unzipped:,}; "
        f"a value built counts 32; {HINT})\n"
    )
    assert _cli(["report", str(p)], capsys) == (2, "", want)


def test_gzip_of_small_values_counts_each_value(tmp_path, monkeypatch):
    # 110 MB of "{}," in 1.6 MB of gzip: within 64x the file as bytes, 3.4 GB as parsed dicts
    monkeypatch.delenv("PT2_EXPLORER_MAX_EXPANSION", raising=False)
    pad = base64.b64encode(random.Random(1).randbytes(1_450_000))
    head = b'{"schema_version": 4, "pad": "' + pad + b'", "metrics": ['
    p = tmp_path / "d.json.gz"
    p.write_bytes(gzip_bomb(head, b"{},", 110, b"{}]}"))
    size = p.stat().st_size
    raw = gzip.decompress(p.read_bytes())
    assert len(raw) < 64 * size + FLOOR
    values = _json_values(raw)
    try:
        compiler.load(p)
        raise AssertionError("loaded")
    except compiler.ReportFormatError as e:
        assert str(e) == (
            f"{p}: gzip data of {len(raw):,} bytes and {values:,} JSON values expands past the limit of "
            f"{64 * size + FLOOR:,} bytes for a file of {size:,} bytes (64 × its size + 16,777,216; "
            f"a JSON value counts 8 bytes; {HINT})"
        )


# ---- within the budget: the views show each field within its length -------------------------

CUT = "r" * 4096 + "… [1,044,480 more characters not shown]"  # a one-line field
SITE = "r" * 4096 + "… [1,044,482 more characters not shown]"  # file:line, the line one digit
CUT_TEXT = "r" * 65536 + "… [983,040 more characters not shown]"  # a text field


def _within(tmp_path: Path, n: int = 3) -> Path:
    """``n`` breaks sharing the string: 5n MiB, within the 16 MiB every file may build."""
    p = tmp_path / "w.json.gz"
    p.write_bytes(gzip.compress(json.dumps(_shared_breaks(n)).encode(), mtime=0))
    return p


def test_views_cut_a_long_string_and_say_how_much_is_left_out(tmp_path, capsys):
    p = _within(tmp_path)
    r = compiler.load(p)
    assert r.graph_breaks[2].type == "r" * MIB  # the report holds it whole
    b = build_view(r).breaks[2]  # the view model: the breaks tab, the page, the notebook widget
    assert (b.site, b.type, b.hints, b.reason, b.explanation) == (
        SITE,
        CUT,
        (CUT,),
        CUT_TEXT,
        CUT_TEXT,
    )
    summary = summary_text(r, "w").splitlines()
    assert summary[3:5] == ["Graph breaks", f"  {SITE}  {CUT}  (hit 1×; logged in [0/0])"]
    assert summary[5] == f"      hint: {CUT}"
    assert len(summary_text(r, "w")) < 50_000
    breaks = text(r, "breaks", title="w")
    assert f"{SITE}  {CUT}" in breaks and CUT_TEXT in breaks and len(breaks) < 250_000
    code, out, err = _cli(["report", str(p), "--html", str(tmp_path / "w.html")], capsys)
    assert (code, err) == (0, "") and out.splitlines()[4] == f"  {SITE}  {CUT}  (hit 1×; logged in [0/0])"
    page = (tmp_path / "w.html").read_text()
    assert "… [1,044,480 more characters not shown]" in page and len(page) < 5_000_000


def test_bounded_output_says_where_it_stopped():
    assert _bound.bounded("ab\ncd\nef\n", 7) == (
        "ab\ncd\n… output stopped after 6 of 9 characters (at most 7 are printed)\n"
    )
    assert _bound.bounded("ab\ncd\n", 6) == "ab\ncd\n"
    assert (
        _bound.bounded("abcdef", 3)
        == "abc\n… output stopped after 3 of 6 characters (at most 3 are printed)\n"
    )
    assert _bound.clip("abcdef", 4) == "abcd… [2 more characters not shown]"
    assert _bound.clip("abcd", 4) == "abcd"


# the child's own peak (VmHWM, in kB): Linux keeps ru_maxrss across exec, so getrusage in the
# child (or RUSAGE_CHILDREN here) would report this test process's size, copied at the fork
_VIEWS = """
import re, sys
from explorer import cli
for argv in (["report", sys.argv[1]], ["report", sys.argv[1], "--view", "breaks"],
             ["report", sys.argv[1], "--html", sys.argv[2]]):
    assert cli.main(argv) == 0, argv
print(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1))
"""


def test_the_most_a_small_file_may_share_stays_small_in_every_view(tmp_path):
    # as many uses of the 1 MiB string as a file's budget holds (15 of the 16 MiB floor):
    # the summary, the breaks and the page, in a child, its peak memory measured
    p = _within(tmp_path, 3)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PT2_EXPLORER_MAX_EXPANSION", None)
    proc = subprocess.run(
        [sys.executable, "-c", _VIEWS, str(p), str(tmp_path / "p.html")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    peak_kib = int(proc.stdout.splitlines()[-1])
    assert peak_kib < 512 * 1024, peak_kib  # 2 GB is the promise; this file needs a tenth of it
