"""explorer.html, explorer.text and explorer.save_html, each given every kind of thing its
type says it takes (a Report, a ``compiler.compare_modes`` result, an ``Advice``, a
``CompileAdvice`` of ``advise --compile-time``): each kind is
an instance of the face's annotation and gets its own lowering; a kind outside it is refused in
one line, nothing written (explorer/pages/_faces.py). Torch-free: saved files only."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

import compiler
import explorer
from compiler import Report
from compiler.types import Advice, AdviceRow, ModeComparison, Timing

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "tests" / "fixtures" / "reports" / "h100-torch211-flex-sliding-window.json.gz"
MODES = ROOT / "notebooks" / "data" / "h100-modes-mlp.json.gz"


def _advice() -> Advice:
    t = Timing(1.0, 0.9, 1.1, 0.8, 1.2, 20)
    row = AdviceRow(
        "baseline", None, "Scaled", graphs=1, breaks=0, recompiles=0, eager=t, compiled=t, speedup=1.0
    )
    return Advice("scaled.py", "cpu", (row,))


def _compile_advice():
    from compiler._viewer import CompileAdvice, CompileAdviceRow

    return CompileAdvice(
        "decoder.py", "cpu", (CompileAdviceRow("baseline", None, compile_s=2.5, compiles=1),)
    )


def _kinds() -> dict[type, object]:
    from compiler._viewer import CompileAdvice

    return {
        Report: compiler.load(REPORT),
        ModeComparison: compiler.load_modes(MODES),
        Advice: _advice(),
        CompileAdvice: _compile_advice(),
    }


def test_each_face_says_the_kinds_it_takes():
    hints = {
        face.__name__: typing.get_type_hints(face)["report"]
        for face in (explorer.html, explorer.text, explorer.save_html)
    }
    assert {name: set(typing.get_args(h)) for name, h in hints.items()} == {
        "html": {Report, ModeComparison},
        "text": {Report, ModeComparison, Advice, _compile_advice().__class__},
        "save_html": {Report, ModeComparison},
    }
    kinds = _kinds()
    for kind, obj in kinds.items():  # what the callers pass is what the annotation admits
        assert isinstance(obj, hints["text"]), kind
        assert isinstance(obj, hints["html"]) == (kind not in (Advice, type(_compile_advice()))), kind


def test_text_of_each_kind_is_its_own_lowering():
    from explorer.pages._modes import modes_text
    from explorer.views._advice import advice_text

    kinds = _kinds()
    report, modes, advice = kinds[Report], kinds[ModeComparison], kinds[Advice]
    assert explorer.text(modes) == modes_text(modes)
    assert explorer.text(advice) == advice_text(advice)
    assert explorer.text(advice).startswith("advise: scaled.py (cpu): each fix measured, best first\n")
    assert explorer.text(report) == explorer.summary_text(report)


def test_html_of_each_kind_it_takes_and_a_one_line_refusal(tmp_path):
    from explorer.pages._modes import modes_page
    from explorer.pages._page import report_html

    kinds = _kinds()
    report, modes, advice = kinds[Report], kinds[ModeComparison], kinds[Advice]
    assert explorer.html(modes) == modes_page(modes)
    assert explorer.html(report, "t") == report_html(report, "t")
    page = tmp_path / "report.html"
    assert explorer.save_html(report, page, "t") == str(page)
    assert page.read_text() == report_html(report, "t")
    modes_path = tmp_path / "modes.html"
    explorer.save_html(modes, modes_path)
    # the modes page, linking each configuration's recording written beside it
    assert "<title>PT2 Explorer — MLPBlock, 8×32×1024: modes</title>" in modes_path.read_text()
    said = re.escape(
        "takes a Report or a compiler.compare_modes result, not an Advice: explorer.text(advice) shows its table"
    )
    with pytest.raises(TypeError, match=rf"^explorer\.html {said}$"):
        explorer.html(advice)
    with pytest.raises(TypeError, match=rf"^explorer\.save_html {said}$"):
        explorer.save_html(advice, tmp_path / "advice.html")
    with pytest.raises(
        TypeError, match=r"^explorer\.html takes a Report or a compiler\.compare_modes result, not a dict$"
    ):
        explorer.html({})
    assert not (tmp_path / "advice.html").exists()
