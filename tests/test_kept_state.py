"""State kept beside records is owned and bounded: a graph's file-form fields go with the
graph (by identity, not value), a report's remembered call lives on the report and is never
saved, the source files read are a bounded LRU."""

from __future__ import annotations

import dataclasses
import gc
import json

import compiler
import compiler._viewer
from compiler.model import _sourcefile
from compiler.model._stagetypes import Graph, Node
from compiler.model._weakid import WeakIdentityMap


def test_an_identity_map_keeps_equal_records_apart_and_drops_an_entry_with_its_key():
    kept: WeakIdentityMap[str] = WeakIdentityMap()
    a = Graph("def forward(x): return x", (Node("x", "placeholder", "x"),))
    b = dataclasses.replace(a)
    assert a == b and a is not b
    kept[a] = "a's"
    assert a in kept and b not in kept and kept.get(b) is None
    kept[b] = "b's"
    del a
    gc.collect()
    assert len(kept) == 1 and kept[b] == "b's"


def test_a_remembered_call_lives_on_the_report_and_is_never_saved():
    report = compiler.Report(torch_version="2.13.0", device="cpu")
    assert compiler._viewer.benchmark_subject(report) is None
    compiler._viewer.remember_benchmark_subject(report, print, None, (1,), {})
    compiler._viewer.remember_benchmark_subject(report, len, None, ("ab",), {})  # remembered again: the last
    subject = compiler._viewer.benchmark_subject(report)
    assert (subject.eager, subject.args) == (len, ("ab",))
    assert "_subject" not in json.loads(report.to_json())
    assert report == compiler.Report(torch_version="2.13.0", device="cpu")  # not a field
    assert compiler._viewer.benchmark_subject(dataclasses.replace(report)) is None


def test_the_source_files_read_are_a_bounded_lru(tmp_path, monkeypatch):
    recent = _sourcefile._Recent(files=3, size=100)
    monkeypatch.setattr(_sourcefile, "_recent", recent)
    paths = []
    for i in range(5):
        p = tmp_path / f"f{i}.py"
        p.write_text(f"x = {i}\n")
        paths.append(str(p))
    for p in paths[:3]:
        assert _sourcefile.read_source(p) == (("x = " + p[-4] + "\n",), None)
    assert _sourcefile.read_source(paths[0])[0] == ("x = 0\n",)  # used again: the most recent
    _sourcefile.read_source(paths[3])  # a fourth file: the least recently used (f1) goes
    held = [key[0] for key in recent._lines]
    assert held == [paths[2], paths[0], paths[3]]
    big = tmp_path / "big.py"
    big.write_text("y = 1\n" * 20)  # 120 bytes, over the bound: read, not kept
    assert len(_sourcefile.read_source(str(big))[0]) == 20
    assert [key[0] for key in recent._lines] == held
    small = tmp_path / "small.py"
    small.write_text("z = 1\n" * 15)  # 90 bytes: kept; the least recent dropped until 100 bytes fit
    _sourcefile.read_source(str(small))
    assert [key[0] for key in recent._lines] == [paths[3], str(small)]  # 6 + 90 bytes
