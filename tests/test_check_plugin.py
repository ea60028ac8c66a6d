"""The pytest plugin (``pytest11`` entry point ``pt2_explorer``): ``@pytest.mark.pt2_check`` and
the ``pt2_check`` fixture fail a test whose compiles break a rule, with the sites in its
message; run in an inner pytest session (pytester) on a package written there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]

OPS = """\
def scale(x):
    y = x * 2
    n = y.sum().item()  # BREAK
    return y / n


def clean(x):
    return x.relu() + 1
"""
TESTS = """\
import pytest
import torch

import mypkg.ops


@pytest.mark.pt2_check(no_breaks_in="mypkg")
def test_breaks_in_mypkg():
    torch.compile(mypkg.ops.scale, backend="eager")(torch.ones(3))


@pytest.mark.pt2_check(no_breaks_in=["mypkg"], max_recompiles=0)
def test_clean():
    torch.compile(mypkg.ops.clean, backend="eager")(torch.ones(3))


@pytest.mark.pt2_check(max_breaks=0)
def test_own_failure_first():
    torch.compile(mypkg.ops.scale, backend="eager")(torch.ones(3))
    assert 1 == 2


@pytest.mark.pt2_check("mypkg")
def test_rules_by_name():
    pass


def test_fixture(pt2_check):
    f = torch.compile(mypkg.ops.clean, backend="eager")
    with pt2_check(max_recompiles=1) as rec:
        f(torch.ones(3))
        f(torch.ones(4))
    assert len(rec.report.recompiles) == 1
    with pt2_check(max_recompiles=0):
        f(torch.ones(3))
        f(torch.ones(5))


@pytest.mark.pt2_check(min_speedup=1000)
def test_min_speedup():
    torch.compile(mypkg.ops.clean, backend="eager")(torch.ones(3))


@pytest.mark.pt2_check(min_sped=1.1)
def test_a_rule_misspelt():
    pass
"""
# the worktree's plugin, whatever an installed pt2-explorer registers under the entry point's name
PLUGIN = ("-p", "no:pt2_explorer", "-p", "explorer._pytestplugin")


def test_marker_and_fixture_fail_with_the_sites(pytester, monkeypatch):
    pytester.mkpydir("mypkg")
    (pytester.path / "mypkg" / "ops.py").write_text(OPS)
    pytester.makepyfile(test_models=TESTS)
    # in a process of its own: an inline run drops the modules it imported when it ends, and the
    # recording's hooks of a dropped module would stay set in this one (the tests after it)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(pytester.path), str(ROOT)]))
    result = pytester.runpytest_subprocess(*PLUGIN, "--strict-markers")  # pytest's log capture on
    result.assert_outcomes(passed=1, failed=6)
    line = next(i for i, ln in enumerate(OPS.splitlines(), 1) if "# BREAK" in ln)
    # each failure's section: the lines `pt2-explorer check` prints, or the test's own failure
    result.stdout.fnmatch_lines(
        [
            "*_ test_breaks_in_mypkg _*",
            "check: graph break in mypkg (mypkg/ops.py:"
            f"{line}, GB0124 Unsupported Tensor.item() call with capture_scalar_outputs=False)",
            "check: 1 rule broken (--no-breaks-in mypkg: 1 break)",
            "*_ test_own_failure_first _*",
            "E       assert 1 == 2",
            "*_ test_rules_by_name _*",
            "pt2_check: give the rules by name, e.g. pt2_check(no_breaks_in='mypkg')",
            "*_ test_fixture _*",
            "check: recompile [[]0/1] clean: 0/0: tensor 'x' size mismatch at index 0. expected 3, "
            "actual 5; failing guard: TENSOR_MATCH: check_tensor(L[[]'x'], *",
            "check: 1 rule broken (--max-recompiles 0: 1 recompile)",
            # min_speedup: the function the block compiled, benchmarked after it
            "*_ test_min_speedup _*",
            "check: clean: compiled is *",
            "check: 1 rule broken (--min-speedup 1000: 1 benchmark below it)",
            "*_ test_a_rule_misspelt _*",
            "pt2_check: no rule named 'min_sped': the rules are no_breaks_in, max_breaks, max_recompiles, "
            "min_speedup, count_torch_breaks, reset",
            "*short test summary info*",
        ]
    )
    # torch's structured trace (empty DEBUG records) is not in the failures' captured log: each
    # failure's message is what the user sees first
    result.stdout.no_fnmatch_line("*torch.__trace*")
    assert "During handling" not in result.stdout.str()
    result.stdout.no_fnmatch_line("*test_clean*")  # it passed


def test_the_entry_point_loads_the_plugin_without_torch(tmp_path):
    """pytest finds the plugin through the entry point pyproject.toml declares (written here as
    an installed distribution's metadata), registers the marker, and imports no torch."""
    # the table's lines as written (tomllib is Python 3.11's; we support 3.10)
    (group,) = re.findall(
        r"^\[project\.entry-points\.pytest11\]\n((?:\w+ = \S+\n)+)",
        (ROOT / "pyproject.toml").read_text(),
        re.M,
    )
    dist = tmp_path / "site" / "pt2_explorer_here-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pt2-explorer-here\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[pytest11]\n" + group.replace('"', ""))
    code = (
        "import sys, pytest\n"
        "rc = pytest.main(['--markers', '-p', 'no:cacheprovider'])\n"
        "print('torch imported:', 'torch' in sys.modules, 'plugin:', 'explorer._pytestplugin' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert (
        "@pytest.mark.pt2_check(no_breaks_in=(), max_breaks=None, max_recompiles=None, min_speedup=None, "
        "reset=True, count_torch_breaks=False):" in out.stdout
    )
    assert out.stdout.splitlines()[-1] == "torch imported: False plugin: True"


QUIET_TESTS = """\
import logging

import pytest
import torch

import mypkg.ops


@pytest.mark.pt2_check(no_breaks_in="mypkg")
def test_inductor_training_step():
    x = torch.ones(3, requires_grad=True)
    torch.compile(mypkg.ops.scale)(x).sum().backward()


@pytest.mark.pt2_check(max_breaks=0)
def test_aot_eager_training_step():
    logging.getLogger("mypkg").warning("the test's own warning")
    logging.getLogger("torch._dynamo").warning("a warning of torch")
    x = torch.ones(3, requires_grad=True)
    torch.compile(mypkg.ops.scale, backend="aot_eager")(x).sum().backward()
"""


@pytest.mark.slow
def test_a_failing_check_prints_no_debug_record_of_torch(pytester, monkeypatch):
    """Two failing checks of training steps (AOTAutograd traces their joint graphs, on whose
    seq_nr loggers the recording listens at DEBUG): their report holds the check's lines and
    what torch and the test log at WARNING, and no DEBUG record of torch."""
    pytester.mkpydir("mypkg")
    (pytester.path / "mypkg" / "ops.py").write_text(OPS)
    pytester.makepyfile(test_quiet=QUIET_TESTS)
    # in a process of its own: torch's Inductor modules, imported by the run, are not imported
    # twice (an inline run drops the modules it imported when it ends)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(pytester.path), str(ROOT)]))
    result = pytester.runpytest_subprocess(*PLUGIN, "--strict-markers")  # pytest's log capture on
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    debug = [ln for ln in out.splitlines() if re.match(r"DEBUG +torch[.:]", ln)]
    assert debug == [], f"{len(debug)} DEBUG records of torch, e.g. {debug[:3]}"
    assert "torch.__trace" not in out
    # what torch showed without us (a warning), and the test's own log, are captured as ever
    assert "WARNING  torch._dynamo:test_quiet.py:" in out and "a warning of torch" in out
    assert "WARNING  mypkg:test_quiet.py:" in out and "the test's own warning" in out
    result.stdout.fnmatch_lines(
        [
            "*_ test_inductor_training_step _*",
            "check: graph break in mypkg (mypkg/ops.py:3, GB0124 *",
            "*_ test_aot_eager_training_step _*",
            "check: 1 rule broken (--max-breaks 0: 1 break site)",
        ]
    )


MERGED = """\
import pytest
import torch

import mypkg.ops

pytestmark = pytest.mark.pt2_check(max_breaks=0)


@pytest.mark.pt2_check(max_recompiles=5)
def test_module_rule_kept_beside_the_tests_own():
    torch.compile(mypkg.ops.scale, backend="eager")(torch.ones(3))


@pytest.mark.pt2_check(max_breaks=3)
class TestClass:
    @pytest.mark.pt2_check(max_recompiles=5, reset=True)
    def test_the_strictest_of_three(self):
        torch.compile(mypkg.ops.scale, backend="eager")(torch.ones(3))


@pytest.mark.pt2_check(no_breaks_in=[1])
def test_a_package_that_is_no_name():
    pass


@pytest.mark.pt2_check(min_speedup=float("inf"))
def test_an_infinite_speedup():
    pass
"""


@pytest.mark.child  # a pytest session of its own: torch cannot be imported twice in one process
def test_markers_of_module_class_and_test_merge_at_their_strictest(pytester, monkeypatch):
    pytester.mkpydir("mypkg")
    (pytester.path / "mypkg" / "ops.py").write_text(OPS)
    pytester.makepyfile(test_merged=MERGED)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(pytester.path)]))
    result = pytester.runpytest_subprocess(*PLUGIN, "--strict-markers", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=4)
    line = next(i for i, ln in enumerate(OPS.splitlines(), 1) if "# BREAK" in ln)
    site = f"check: graph break (mypkg/ops.py:{line}, GB0124 Unsupported Tensor.item() call with capture_scalar_outputs=False)"
    result.stdout.fnmatch_lines(
        [
            "*_ test_module_rule_kept_beside_the_tests_own _*",
            site,
            "check: 1 rule broken (--max-breaks 0: 1 break site)",
            "*_ TestClass.test_the_strictest_of_three _*",
            site,
            "check: 1 rule broken (--max-breaks 0: 1 break site)",
            "*_ test_a_package_that_is_no_name _*",
            "pt2_check: no_breaks_in=[[]1]: give a package's name or directory, or a list of them",
            "*_ test_an_infinite_speedup _*",
            "pt2_check: min_speedup=inf: give a number above 0, e.g. 1.1",
        ]
    )
    assert "Traceback" not in result.stdout.str()
