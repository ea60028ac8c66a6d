"""Every report in tests/fixtures loads and shows the same views, byte for byte, as the code
before the facts the views read moved from torch's text to typed fields of the report (what a
phase's name says, the CUDA-graph reason and the sizes its warning gives, the wrappers' extern
calls, a recompile's short reasons): each view of each
report (each compile's and each stage's view for every compile, the codegen view of every
kernel with Triton IR, the static page) against the SHA-256 of the text that code rendered
(tests/fixture_views.sha256.json, written by ``python -m tests._fixture_views DIR`` before the
change; DIR holds the texts themselves, about 50 MB, to diff a view that differs).

A change that means to change a view writes the digests again with the same command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import _fixture_views

EXPECTED = Path(__file__).resolve().parent / "fixture_views.sha256.json"


@pytest.mark.stress  # every view of 26 reports: minutes on a 2-CPU machine
def test_every_fixture_report_shows_the_views_it_showed():
    expected = json.loads(EXPECTED.read_text())
    got = _fixture_views.digests()
    assert sorted(got) == sorted(expected)  # the same reports, views and compiles
    differ = sorted(k for k in expected if got[k] != expected[k])
    assert differ == []
