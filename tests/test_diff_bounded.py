"""``diff`` takes time linear in its input, whatever the texts: difflib aligns them where it can
within a budget (its answer unchanged), a shortest edit script where the texts differ in few
lines, else a simplified alignment that says so. The crafted inputs are made here: guard trees
of 32k lines from a two-line alphabet took 90 s in ``pt2-explorer diff`` before."""

from __future__ import annotations

import dataclasses
import difflib
import random
import time
from pathlib import Path

import pytest

import compiler
import explorer
from explorer import cli
from explorer.diffs._linediff import EDIT_SCRIPT, SIMPLIFIED, Matcher

GPU_REPORT = Path(__file__).parent / "fixtures" / "reports" / "h100-torch211-gpu-block.json.gz"
BOUND = 10.0  # seconds: generous on a shared machine; difflib took 90 s on the 32k pair
LINES = 32_768


def _thue_morse(n: int) -> list[str]:
    """n guard lines from a two-line alphabet, in an order with no period."""
    return [f"| +- TYPE_MATCH: {'ab'[bin(i).count('1') % 2]}" for i in range(n)]


def _with_guards(report: compiler.Report, guards: str) -> compiler.Report:
    c = report.compiles[0]
    capture = dataclasses.replace(c.stages.capture, guards=guards)
    c = dataclasses.replace(c, stages=dataclasses.replace(c.stages, capture=capture))
    return dataclasses.replace(report, compiles=[c])


@pytest.fixture(scope="module")
def crafted_pair(tmp_path_factory) -> tuple[str, str]:
    """Two reports, one compile each, whose guards are LINES lines of a two-line alphabet: B
    has A's line 11 removed and a line near the end changed."""
    base = compiler.load(GPU_REPORT)
    a = _thue_morse(LINES)
    b = a[:10] + a[11:]
    b[LINES - 100] = "| +- TYPE_MATCH: c"
    out = tmp_path_factory.mktemp("pair")
    paths = (str(out / "a.json.gz"), str(out / "b.json.gz"))
    for path, lines in zip(paths, (a, b)):
        _with_guards(base, "\n".join(lines)).to_json(path)
    return paths


def test_cli_diff_of_the_crafted_pair_is_fast_and_exact(crafted_pair, capsys):
    a, b = crafted_pair
    start = time.perf_counter()
    assert cli.main(["diff", a, b]) == 0
    assert time.perf_counter() - start < BOUND
    assert capsys.readouterr().out == f"{a} vs {b}\n  0/0: guards: 1 changed, 1 removed\n"


def test_full_diff_of_the_crafted_pair_marks_the_two_changes(crafted_pair, capsys):
    a, b = crafted_pair
    start = time.perf_counter()
    assert cli.main(["diff", "--full", a, b]) == 0
    assert time.perf_counter() - start < BOUND
    out = capsys.readouterr().out
    section = out[out.index("== 0/0 · Guards") :].split("\n= ")[0]
    head = section.split("\n")[:3]
    assert head == [
        "== 0/0 · Guards (1 line changed, 1 removed)",
        "   note: lines aligned by a shortest edit script (difflib's matching costs too much on these "
        "repeated lines); cut to 5,000 lines of 32,768 (from the top); counts are of the whole texts",
        f"--- A: {a}",
    ]


def test_the_crafted_texts_are_aligned_by_a_shortest_edit_script():
    a = _thue_morse(LINES)
    b = a[:10] + a[11:]
    b[LINES - 100] = "| +- TYPE_MATCH: c"
    start = time.perf_counter()
    m = Matcher(a, b)
    changes = [op for op in m.get_opcodes() if op[0] != "equal"]
    assert time.perf_counter() - start < BOUND
    assert m.note == EDIT_SCRIPT
    assert changes == [
        ("delete", 10, 11, 10, 10),
        ("replace", LINES - 99, LINES - 98, LINES - 100, LINES - 99),
    ]
    d = explorer.diff("\n".join(a), "\n".join(b))
    (s,) = d.sections
    assert (s.counts, s.changes) == ((1, 0, 1), "1 line changed, 1 removed")  # changed, added, removed


def test_texts_too_different_for_an_edit_script_are_simplified_and_say_so():
    """A three-line cycle against a two-line one: no line occurs once, so what lies between
    the common head ("a", "b") and tail (none) is replaced whole."""
    a, b = ["a", "b", "c"] * 6_000, ["a", "b"] * 8_000
    start = time.perf_counter()
    d = explorer.diff("\n".join(a), "\n".join(b))
    html, text = d.html(), str(d)
    assert time.perf_counter() - start < BOUND
    (s,) = d.sections
    assert s.counts == (15_998, 0, 2_000)
    assert (
        s.note == f"{SIMPLIFIED}; cut to 5,000 lines of 18,000 (from the top); counts are of the whole texts"
    )
    assert f"note: {s.note}" in text
    assert html.count(SIMPLIFIED) == 1  # the section's note, not repeated by its rows


def test_lines_once_on_each_side_anchor_a_simplified_diff():
    """Unique lines between repeated ones are matched in order; the repeated lines between
    two anchors that differ count as changed."""
    a = [x for i in range(2_000) for x in ("ab"[i % 2], f"u{i}")]
    b = [x for i in range(2_000) for x in ("ba"[i % 2], f"u{i}")]
    m = Matcher(a, b, budget=0)
    changes = [op for op in m.get_opcodes() if op[0] != "equal"]
    assert m.note == SIMPLIFIED
    assert changes == [("replace", 2 * i, 2 * i + 1, 2 * i, 2 * i + 1) for i in range(2_000)]


def test_under_budget_the_answer_is_difflibs():
    random.seed(38)
    for _ in range(500):
        a = random.choices("abcdefg", k=random.randint(0, 60))
        b = random.choices("abcdefg", k=random.randint(0, 60))
        for junk in (False, True):
            m = Matcher(a, b, autojunk=junk)
            assert m.get_opcodes() == difflib.SequenceMatcher(None, a, b, autojunk=junk).get_opcodes()
            assert m.note is None


def test_the_edit_script_is_a_shortest_one():
    """Its matched lines are as many as the longest common subsequence's (dynamic programming)."""
    random.seed(7)
    for _ in range(300):
        a = random.choices("ab", k=random.randint(1, 40))
        b = random.choices("abc", k=random.randint(1, 40))
        m = Matcher(a, b, budget=0)  # difflib gets no steps
        blocks = m.get_matching_blocks()
        assert m.note == EDIT_SCRIPT
        assert all(a[i : i + k] == b[j : j + k] for i, j, k in blocks)
        lcs = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(len(a) - 1, -1, -1):
            for j in range(len(b) - 1, -1, -1):
                lcs[i][j] = lcs[i + 1][j + 1] + 1 if a[i] == b[j] else max(lcs[i + 1][j], lcs[i][j + 1])
        assert sum(k for _, _, k in blocks) == lcs[0][0]


def test_unified_text_is_difflibs_where_difflib_aligns():
    a = "one\ntwo\nthree\nfour\n" * 3
    b = a.replace("two", "2", 1) + "five\n"
    d = explorer.diff(a, b)
    hunks = str(d).split("\n")[5:-1]
    assert hunks == list(
        difflib.unified_diff(a.splitlines(), b.splitlines(), "A: A", "B: B", n=3, lineterm="")
    )
