"""What a report names and holds is untrusted (issue 38): a repro's header quotes the report's
strings on one line each and says which report the file came from; a source file the report
names is read only where it is a regular file of a bounded size (never /dev/zero, a FIFO, a
directory); what the CLI prints to a terminal shows bidi and format controls escaped."""

from __future__ import annotations

import dataclasses
import io
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

import compiler
import compiler._viewer
from compiler.model._sourcefile import SOURCE_LIMIT
from explorer import cli
from explorer.lower._terminal import printable
from tests._pty import run_in_pty

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "tests" / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"
INJECTED = "\nimport os; os.system('echo pwned')\n"  # a line of code, were it not quoted
TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
RLO = "\u202e"  # shows what follows right to left


def _cli(args, cwd, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        cwd=cwd,
        capture_output=True,
        timeout=timeout,  # a read that blocks (a FIFO) fails here instead of hanging the suite
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture(scope="module")
def fixture_report():
    return compiler.load_trace(TRACE)


@pytest.fixture
def crafted(fixture_report, tmp_path):
    """The CPU fixture's report, its compile 0/0 failed, with a line of code after a line break
    in every string the repro's header quotes, and control characters in its runnable."""
    r = fixture_report
    c = r.compiles[0]
    cg = dataclasses.replace(c.stages.codegen, fx_graph_runnable=f"# torch's {TITLE}{RLO}\nx = 1\n")
    c = dataclasses.replace(
        c,
        name="f" + INJECTED,
        status="failed",
        failed_stage="fuse" + INJECTED,
        error="boom" + INJECTED,
        stages=dataclasses.replace(c.stages, codegen=cg),
    )
    r = dataclasses.replace(
        r, compiles=(c, *r.compiles[1:]), torch_version="2.13" + INJECTED, device="cpu" + INJECTED
    )
    path = tmp_path / "shared.json"
    r.to_json(path)
    return path


def _code_lines(source: str) -> list[str]:
    """The lines of ``source`` that hold code (not only a comment), as Python tokenizes it."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING, tokenize.ENDMARKER}
    rows = {t.start[0] for t in tokenize.tokenize(io.BytesIO(source.encode()).readline) if t.type not in skip}
    return [source.splitlines()[i - 1] for i in sorted(rows)]


def test_a_repros_header_quotes_the_reports_strings_on_one_line_and_names_the_report(crafted, tmp_path):
    out = tmp_path / "repro.py"
    proc = _cli(["repro", crafted.name, "--compile", "0/0", "-o", "repro.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    script = out.read_text()
    head = script.split("import torch.fx.traceback\n")[0].splitlines()
    assert head == [
        "# Runnable repro of compile [0/0] (forward graph) of "
        "\"f\\nimport os; os.system('echo pwned')\\n\", saved by pt2-explorer.",
        "# Made from the report shared.json. A report is a shared file that anyone can write, and what",
        "# follows comes from it: read it before you run it.",
        "# torch's fx_graph_runnable: the graph Inductor received, the non-default config, and",
        "# inputs of the recorded shapes, strides and dtypes (random values). `python repro.py`",
        "# compiles it with Inductor and runs it once.",
        "# Recorded with torch \"2.13\\nimport os; os.system('echo pwned')\\n\" on "
        "\"cpu\\nimport os; os.system('echo pwned')\\n\"; the compile ended FAILED in "
        "\"fuse\\nimport os; os.system('echo pwned')\\n\": 'boom'.",
    ]
    # the only code is ours and the runnable's: nothing the report's strings added
    assert [ln for ln in _code_lines(script) if "pwned" in ln] == []
    # to a pipe: the runnable file, byte for byte
    piped = _cli(["repro", crafted.name, "--compile", "0/0"], cwd=tmp_path)
    assert piped.returncode == 0 and piped.stdout == out.read_bytes()


def test_a_repro_printed_on_a_terminal_shows_its_control_characters_escaped(crafted, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm"}
    cmd = [sys.executable, "-m", "explorer", "repro", str(crafted), "--compile", "0/0"]
    status, shown = run_in_pty(cmd, 120, 40, env)
    assert status == 0
    text = shown.decode().replace("\r\n", "\n")
    assert "# torch's \\x1b]0;pwned\\x07\\u202e\nx = 1\n" in text
    assert not re.search("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u202e]", text)


def _break_in(report, filename: str):
    b = report.graph_breaks[0]
    frames = tuple(dataclasses.replace(f, filename=filename) for f in b.user_stack)
    b = dataclasses.replace(b, filename=filename, user_stack=frames)
    return dataclasses.replace(report, graph_breaks=(b,))


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "directory", "too large"])
def test_a_source_file_the_report_names_is_read_only_where_it_is_a_regular_file(
    kind, fixture_report, tmp_path
):
    if kind == "fifo":
        name = str(tmp_path / "model.py")
        os.mkfifo(name)  # no writer: an open for reading would wait forever
        why = "not a regular file"
    elif kind == "directory":
        name = str(tmp_path / "model.py")
        os.mkdir(name)
        why = "not a regular file"
    elif kind == "too large":
        name = str(tmp_path / "model.py")
        with open(name, "wb") as f:
            f.truncate(SOURCE_LIMIT + 1)  # sparse: no disk, and past the limit
        why = "larger than 8 MiB"
    else:
        name, why = kind, "not a regular file"
    _break_in(fixture_report, name).to_json(tmp_path / "r.json")
    proc = _cli(["repro", "r.json", "--break", f"{os.path.basename(name)}:15"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.decode() == f"pt2-explorer: error: {name} not read: {why}: no starting point\n"
    assert proc.stdout == b""
    view = _cli(["report", "r.json", "--view", "breaks"], cwd=tmp_path)
    assert view.returncode == 0
    lines = view.stdout.decode().splitlines()
    assert lines[1] == f"  source: {name} not read: {why}"  # in the context lines' place
    assert not any(" | " in ln for ln in lines)  # no context lines


def test_read_source_reads_a_regular_file_and_a_notebook_cell_and_says_why_not_otherwise(tmp_path):
    import linecache

    from compiler.parse._flex import _function_source

    good = tmp_path / "m.py"
    good.write_bytes(b"# -*- coding: latin-1 -*-\ndef f(x):\r\n    return '\xe9'\n")
    assert compiler._viewer.read_source(str(good)) == (
        ("# -*- coding: latin-1 -*-\n", "def f(x):\n", "    return 'é'\n"),
        None,
    )
    linecache.cache["Cell In[3]"] = (9, None, ["x = 1\n"], "Cell In[3]")  # as IPython keeps a cell
    try:
        assert compiler._viewer.read_source("Cell In[3]") == (("x = 1\n",), None)
    finally:
        del linecache.cache["Cell In[3]"]
    assert compiler._viewer.read_source(str(tmp_path / "gone.py")) == ((), None)  # nothing to say
    assert compiler._viewer.read_source("<string>") == ((), None)
    assert compiler._viewer.read_source("/dev/zero") == ((), "not a regular file")
    fifo = tmp_path / "p.py"
    os.mkfifo(fifo)
    assert compiler._viewer.read_source(str(fifo)) == ((), "not a regular file")
    # a FlexAttention mask's function, looked up in the file a trace names
    assert _function_source(str(fifo), 3, "f") is None
    assert _function_source(str(good), 3, "f") == "def f(x):\n    return 'é'"


BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_bidi_and_format_controls_are_escaped_on_the_terminal(fixture_report, tmp_path, capsys):
    assert printable("a" + BIDI + "\u200b\u2028\u2029\u2060\ufeff\tb\n") == (
        "a\\u061c\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069"
        "\\u200b\\u2028\\u2029\\u2060\\ufeff\tb\n"
    )
    assert printable("é ü 前向 ✓ \x1b") == "é ü 前向 ✓ \\x1b"  # letters stay; controls as before
    r = fixture_report
    c = dataclasses.replace(r.compiles[0], name=f"f{RLO}evil")
    dataclasses.replace(r, compiles=(c, *r.compiles[1:])).to_json(tmp_path / "r.json")
    assert cli.main(["report", str(tmp_path / "r.json"), "--view", "capture", "--compile", "0/0"]) == 0
    out = capsys.readouterr().out
    assert "f\\u202eevil" in out and RLO not in out
    assert cli.main(["repro", str(tmp_path / f"r{RLO}.json"), "--compile", "0/0"]) == 2
    assert capsys.readouterr().err == (
        f"pt2-explorer: error: {tmp_path}/r\\u202e.json: No such file or directory\n"
    )
