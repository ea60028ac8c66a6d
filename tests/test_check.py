"""``pt2-explorer check``: the CI gate (issue 37). Real programs written in the test's tmp dir,
run under the recording as ``record`` runs them; a break's owner decided from its stack; the
program's output and exit status untouched. Facts checked against torch's own: the line is the
one written in the file, the GB id the one torch's graph-break registry gives the break's type."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import compiler
from explorer import cli
from explorer.check._rules import resolve_package

ROOT = Path(__file__).resolve().parent.parent

OPS = """\
import libx


def scale(x):
    y = x * 2
    n = y.sum().item()  # BREAK scale
    return y / n


def via_lib(x):
    return libx.normalize(x) + 1  # CALL via_lib


def apply(fn, x):
    return fn(x) * 2


def clean(x):
    return x.relu() + 1
"""
LIBX = """\
def normalize(x):
    return x / x.max().item()  # BREAK libx
"""
OTHER = """\
def shift(x):
    return x - x.min().item()  # BREAK otherpkg
"""
PROG = """\
import torch
import mypkg
import otherpkg


def callback(x):
    return x / x.sum().item()  # BREAK callback


@torch.compile(backend="eager")
def f(x):
    x = mypkg.scale(x)
    x = mypkg.via_lib(x)
    x = mypkg.apply(callback, x)
    return otherpkg.shift(x)


print("out", f(torch.ones(3)).tolist())
"""
ELSEWHERE = """\
import sys
import torch
import mypkg
import otherpkg


@torch.compile(backend="eager")
def f(x):
    x = mypkg.clean(x)
    if x.sum() > 0:  # BREAK script
        x = x * 2
    return otherpkg.shift(x)


print("out", f(torch.ones(3)).tolist())
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""
RESHAPED = """\
import torch
import mypkg

f = torch.compile(mypkg.clean, backend="eager")
print("out", f(torch.ones(3)).tolist())
print("out", f(torch.ones(4)).tolist())  # a new shape: a recompile
"""
ITEM = "GB0124 Unsupported Tensor.item() call with capture_scalar_outputs=False"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """mypkg (its own break, and a call into libx that breaks), libx (installed: under a
    site-packages directory), otherpkg, and the programs."""
    files = {
        "mypkg/__init__.py": "from mypkg.ops import apply, clean, scale, via_lib\n",
        "mypkg/ops.py": OPS,
        "otherpkg/__init__.py": OTHER,
        "site-packages/libx/__init__.py": LIBX,
        "prog.py": PROG,
        "elsewhere.py": ELSEWHERE,
        "reshaped.py": RESHAPED,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(tmp_path / "site-packages")]))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    _forget()


def _forget() -> None:
    """As in a fresh process: the packages imported again, nothing compiled yet."""
    for name in ("mypkg", "mypkg.ops", "otherpkg", "libx"):
        sys.modules.pop(name, None)
    torch._dynamo.reset()


def _line(text: str, mark: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if f"# {mark}" in ln)


def _check(capsys, *argv) -> tuple[int, str, list[str]]:
    _forget()
    rc = cli.main(["check", "-q", *argv])
    out, err = capsys.readouterr()
    return rc, out, [ln for ln in err.splitlines() if ln.startswith("check:")]


def test_a_break_in_the_package_fails_with_its_site(tree, capsys):
    rc, out, lines = _check(capsys, "--no-breaks-in", "mypkg", "prog.py")
    assert rc == 1
    assert out == "out [0.0, 0.0, 0.0]\n"  # the program's own output, nothing else (-q)
    assert lines == [
        f"check: graph break in mypkg (mypkg/ops.py:{_line(OPS, 'BREAK scale')}, {ITEM})",
        # inside an installed library that mypkg called: counts for mypkg, at mypkg's call
        f"check: graph break in mypkg (mypkg/ops.py:{_line(OPS, 'CALL via_lib')}, calling "
        f"libx/__init__.py:{_line(LIBX, 'BREAK libx')}, {ITEM})",
        "check: 1 rule broken (--no-breaks-in mypkg: 2 breaks)",
    ]


def test_breaks_elsewhere_pass_and_are_counted(tree, capsys):
    rc, _, lines = _check(capsys, "--no-breaks-in", "mypkg", "elsewhere.py")
    assert rc == 0
    assert lines == ["check: passed (0 breaks in mypkg, 2 breaks elsewhere, 0 recompiles)"]


def test_each_package_owns_its_breaks(tree, capsys):
    # the callback's break (prog.py, called back by mypkg.apply) is the program's own: nobody's
    rc, _, lines = _check(capsys, "--no-breaks-in", "otherpkg", "--no-breaks-in", "./mypkg", "prog.py")
    assert rc == 1
    assert lines[0] == f"check: graph break in ./mypkg (mypkg/ops.py:{_line(OPS, 'BREAK scale')}, {ITEM})"
    assert (
        lines[2]
        == f"check: graph break in otherpkg (otherpkg/__init__.py:{_line(OTHER, 'BREAK otherpkg')}, {ITEM})"
    )
    assert lines[3:] == [
        "check: 2 rules broken (--no-breaks-in otherpkg: 1 break; --no-breaks-in ./mypkg: 2 breaks)"
    ]
    rc, _, lines = _check(capsys, "--no-breaks-in", "otherpkg", "--max-breaks", "4", "elsewhere.py")
    assert (rc, lines[-1]) == (1, "check: 1 rule broken (--no-breaks-in otherpkg: 1 break)")
    # a package inside another: the deeper one owns its files' breaks
    rc, _, lines = _check(capsys, "--no-breaks-in", "mypkg", "--no-breaks-in", "mypkg.ops", "prog.py")
    assert lines[-1] == "check: 1 rule broken (--no-breaks-in mypkg.ops: 2 breaks)"


def test_max_breaks_lists_every_site(tree, capsys):
    rc, _, lines = _check(capsys, "--max-breaks", "3", "prog.py")
    assert rc == 1
    assert lines == [
        f"check: graph break (mypkg/ops.py:{_line(OPS, 'BREAK scale')}, {ITEM})",
        f"check: graph break (libx/__init__.py:{_line(LIBX, 'BREAK libx')}, {ITEM})",
        f"check: graph break (prog.py:{_line(PROG, 'BREAK callback')}, {ITEM})",
        f"check: graph break (otherpkg/__init__.py:{_line(OTHER, 'BREAK otherpkg')}, {ITEM})",
        "check: 1 rule broken (--max-breaks 3: 4 break sites)",
    ]
    rc, _, lines = _check(capsys, "--max-breaks", "4", "prog.py")
    assert (rc, lines) == (0, ["check: passed (4 breaks, 0 recompiles)"])


def test_max_recompiles_names_the_failing_guard(tree, capsys):
    rc, out, lines = _check(capsys, "--max-recompiles", "0", "--json", "r.json", "reshaped.py")
    assert rc == 1
    assert out == "out [2.0, 2.0, 2.0]\nout [2.0, 2.0, 2.0, 2.0]\n"
    (recompile,) = compiler.load("r.json").recompiles  # torch's record of it
    assert recompile.failing_guard.startswith("TENSOR_MATCH: check_tensor(L['x']")
    assert lines == [
        "check: recompile [0/1] clean: 0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4; "
        f"failing guard: {recompile.failing_guard}",
        "check: 1 rule broken (--max-recompiles 0: 1 recompile)",
    ]
    rc, _, lines = _check(capsys, "--max-recompiles", "1", "--no-breaks-in", "mypkg", "reshaped.py")
    assert (rc, lines) == (0, ["check: passed (0 breaks in mypkg, 0 breaks elsewhere, 1 recompile)"])


def test_the_facts_are_torchs(tree, capsys):
    """The line is the one written in mypkg/ops.py; the GB id is the one torch's own registry
    gives the break's type."""
    registry = json.loads((Path(torch._dynamo.__file__).parent / "graph_break_registry.json").read_text())
    (gb,) = [k for k, v in registry.items() if any(e["Gb_type"] == ITEM.split(" ", 1)[1] for e in v)]
    assert gb == ITEM.split()[0]
    rc, _, lines = _check(capsys, "--no-breaks-in", "mypkg", "--json", "r.json", "prog.py")
    site = compiler.load("r.json").graph_breaks[0]
    assert (site.filename, site.line, site.gb_id) == (
        str(tree / "mypkg" / "ops.py"),
        _line(OPS, "BREAK scale"),
        gb,
    )
    assert (
        Path(site.filename).read_text().splitlines()[site.line - 1].strip().startswith("n = y.sum().item()")
    )
    assert lines[0] == f"check: graph break in mypkg (mypkg/ops.py:{site.line}, {site.gb_id} {site.type})"


def test_usage_errors_before_the_program_runs(tree, capsys):
    assert cli.main(["check", "prog.py"]) == 2
    assert "no rule given" in capsys.readouterr().err
    assert cli.main(["check", "--no-breaks-in", "nopkg", "prog.py"]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # the program did not run
    assert err.startswith("pt2-explorer check: error: --no-breaks-in nopkg: no package or module")
    with pytest.raises(SystemExit) as e:
        cli.main(["check", "--max-recompiles", "-1", "prog.py"])
    assert e.value.code == 2
    assert cli.main(["check", "--max-breaks", "0", "nope.py"]) == 2


def test_resolve_package_names_and_paths(tree):
    pkg = resolve_package("mypkg", str(tree))
    assert pkg.roots == (str(tree / "mypkg") + os.sep,) and pkg.base == str(tree)
    ops = resolve_package("mypkg.ops", str(tree))  # a module of the package: its file
    assert ops.roots == (str(tree / "mypkg" / "ops.py"),) and ops.base == str(tree)
    assert resolve_package("libx").roots == (str(tree / "site-packages" / "libx") + os.sep,)
    assert resolve_package("./otherpkg").roots == (str(tree / "otherpkg") + os.sep,)
    assert "mypkg" not in sys.modules  # found, not imported
    with pytest.raises(LookupError, match="mypkg.nothere: no nothere in"):
        resolve_package("mypkg.nothere", str(tree))


def _python(*argv, cwd):
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.child
def test_the_programs_output_and_exit_status_are_its_own(tree):
    """In a fresh process (the program runs in record's supervised child): stdout is the
    program's, byte for byte; the program's failing exit status wins over the rules'."""
    plain = _python("elsewhere.py", "3", cwd=tree)
    ours = _python("-m", "explorer", "check", "-q", "--max-breaks", "0", "elsewhere.py", "3", cwd=tree)
    assert plain.returncode == ours.returncode == 3
    assert ours.stdout == plain.stdout == "out [0.0, 0.0, 0.0]\n"
    checked = [ln for ln in ours.stderr.splitlines() if ln.startswith("check:")]
    assert checked[-1] == "check: 1 rule broken (--max-breaks 0: 2 break sites)"
    passed = _python("-m", "explorer", "check", "--max-breaks", "2", "elsewhere.py", cwd=tree)
    assert passed.returncode == 0, passed.stderr
    assert passed.stdout.startswith("out [0.0, 0.0, 0.0]\nPT2 Explorer — elsewhere.py")  # record's summary
    assert passed.stderr.splitlines()[-1] == "check: passed (2 breaks, 0 recompiles)"
    failed = _python("-m", "explorer", "check", "--max-breaks", "1", "-m", "elsewhere", cwd=tree)
    assert failed.returncode == 1
    assert failed.stderr.splitlines()[-1] == "check: 1 rule broken (--max-breaks 1: 2 break sites)"
    # dead before its report was written (os._exit): checked on the report rebuilt from the journal
    (tree / "dies.py").write_text(
        ELSEWHERE.replace("sys.exit(", "os._exit(").replace("import sys", "import os, sys")
    )
    died = _python("-m", "explorer", "check", "-q", "--no-breaks-in", "otherpkg", "dies.py", "7", cwd=tree)
    assert (died.returncode, died.stdout) == (7, "out [0.0, 0.0, 0.0]\n")
    line = _line(OTHER, "BREAK otherpkg")
    assert [ln for ln in died.stderr.splitlines() if ln.startswith("check:")] == [
        f"check: graph break in otherpkg (otherpkg/__init__.py:{line}, {ITEM})",
        "check: 1 rule broken (--no-breaks-in otherpkg: 1 break)",
    ]


def test_report_text_is_escaped(tree, capsys):
    """A file name with terminal control characters (code compiled under any name) is printed
    through the terminal escaping: no ESC or BEL reaches the terminal."""
    (tree / "esc_prog.py").write_text(
        textwrap.dedent(
            """\
            import os, torch
            name = os.path.join(os.path.dirname(__file__), "mypkg", "\\x1b]0;owned\\x07.py")
            ns = {}
            exec(compile("def f(x):\\n    return x / x.sum().item()\\n", name, "exec"), ns)
            torch.compile(ns["f"], backend="eager")(torch.ones(2))
            """
        )
    )
    rc, _, lines = _check(capsys, "--no-breaks-in", "mypkg", "esc_prog.py")
    assert (rc, lines) == (
        1,
        [
            f"check: graph break in mypkg (mypkg/\\x1b]0;owned\\x07.py:2, {ITEM})",
            "check: 1 rule broken (--no-breaks-in mypkg: 1 break)",
        ],
    )


def test_min_speedup_reads_the_benchmarks_and_names_the_verdict():
    """Over the H100 recording of `.item()` breaks (compiled 1.60× slower than eager, by its
    benchmark's own medians): below X it fails with the verdict's headline and its fixes;
    at or above, it passes and says each function's speedup."""
    from explorer.check._rules import Rules, check_report

    r = compiler.load(ROOT / "notebooks" / "data" / "h100-cause-item.json.gz")
    (b,) = r.benchmarks
    v = compiler.analysis.verdict(r, b)
    slow = check_report(r, Rules(min_speedup=1.0))
    assert slow.broken == ("--min-speedup 1: 1 benchmark below it",)
    assert slow.lines == (
        f"check: Scaled: {v.headline}",
        "check: Scaled: fix: torch._dynamo.config.capture_scalar_outputs = True",
        *(f"check: Scaled: fix: {f}" for f in v.fixes[1:3]),
        # the advice after the fixes, where three lines are not yet said
        "check: Scaled: advice: keep the value on the device: no .item(), .cpu() or .tolist() inside the "
        "compiled call",
    )
    assert len(v.fixes) == 2 and v.advice[0].startswith("keep the value on the device")
    assert v.headline.startswith("compiled is 1.60× slower than eager: graph breaks: 2 sites")
    ok = check_report(r, Rules(min_speedup=0.5))
    assert ok.passed and ok.summary == (
        "check: passed (2 breaks, 0 recompiles, Scaled compiled is 1.60× slower than eager)"
    )
    none = check_report(
        compiler.load(ROOT / "tests" / "fixtures" / "reports" / "h100-torch211-gpu-block.json.gz"),
        Rules(min_speedup=1.0),
    )
    assert none.broken == ("--min-speedup 1: no benchmark (run with --bench)",)


def test_min_speedup_needs_bench(tree, capsys):
    assert cli.main(["check", "--min-speedup", "1.1", "prog.py"]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == (
        "",
        "pt2-explorer check: error: --min-speedup needs --bench (the benchmarks it reads)\n",
    )
    for bad in ("0", "-1", "nan", "x"):
        with pytest.raises(SystemExit) as e:
            cli.main(["check", "--min-speedup", bad, "--bench", "prog.py"])
        assert e.value.code == 2
