"""PT2 Explorer's pytest plugin (the ``pytest11`` entry point ``pt2_explorer``): the rules of
``pt2-explorer check`` inside a test suite.

    @pytest.mark.pt2_check(no_breaks_in="mypkg", max_recompiles=0)
    def test_forward():
        torch.compile(mypkg.Model())(x)        # the test's body is recorded, then checked

    def test_steps(pt2_check):
        prepare()                              # not recorded
        with pt2_check(no_breaks_in="mypkg") as rec:
            step(x)                            # recorded, checked when the block ends
        rec.report                             # the report, as compiler.recording() gives it

``min_speedup=X`` benchmarks each function the block compiled on its last call, after the
block, as ``record --bench`` does, and fails the test where compiled is not X times as fast as
eager. A broken rule fails the test with the offending sites in its message, the lines
``check`` prints, first in the test's report. Markers on the module (``pytestmark``), the class
and the test are merged: each rule at its strictest. torch's structured trace and the debug
records of the loggers the recording listens to never reach the captured log. torch's compile
caches are reset first (``torch.compiler.reset()``): a function an
earlier test compiled is compiled again, so its breaks and recompiles are seen; ``reset=False``
keeps them. Loading the plugin imports no torch."""

from __future__ import annotations

import pytest

MARKER = (
    "pt2_check(no_breaks_in=(), max_breaks=None, max_recompiles=None, min_speedup=None, reset=True, "
    "count_torch_breaks=False): "
    "record the test's torch.compile calls and fail it when a rule is broken (PT2 Explorer, "
    "`pt2-explorer check`)"
)
RULES = ("no_breaks_in", "max_breaks", "max_recompiles", "min_speedup")
NAMES = (*RULES, "count_torch_breaks", "reset")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", MARKER)


class _Quiet:
    """Keeps what the recording turns on out of pytest's log capture while a check records:
    torch's structured trace (``torch.__trace``: an empty message, the payload in its
    metadata, for trace files only) and every record of a torch logger below the level that
    logger had before the recording (the debug records of the loggers it listens to at DEBUG:
    ``torch.fx.proxy.__annotation``, ``torch._functorch._aot_autograd.utils.__annotation``, the
    fusion and CUDA-graph loggers, Dynamo's graph code), so that a failing check's lines are
    not followed by thousands of DEBUG records in the test's captured log. What torch showed
    before (a graph break's warning) is captured as without us. pytest attaches its capture
    handlers to the root logger and to every logger that does not propagate (torch's own and
    its artifact loggers); only pytest's handlers on torch's loggers get this filter."""

    def __enter__(self):
        import logging

        loggers = [
            log
            for name, log in list(logging.root.manager.loggerDict.items())
            if isinstance(log, logging.Logger) and (name == "torch" or name.startswith("torch."))
        ]
        # each torch logger's level before the recording sets any of them to DEBUG
        self.before = {log.name: log.getEffectiveLevel() for log in loggers}
        self.handlers = list(
            {
                id(h): h
                for log in (logging.root, *loggers)
                for h in log.handlers
                if type(h).__module__ == "_pytest.logging"
            }.values()
        )
        for h in self.handlers:
            h.addFilter(self.filter)
        return self

    def filter(self, record) -> bool:
        if record.name == "torch.__trace":
            return False
        if record.name != "torch" and not record.name.startswith("torch."):
            return True
        before = self.before.get(record.name)
        return before is None or record.levelno >= before

    def __exit__(self, *exc) -> bool:
        for h in self.handlers:
            h.removeFilter(self.filter)
        return False


def rules_of(
    no_breaks_in=(), max_breaks=None, max_recompiles=None, min_speedup=None, count_torch_breaks=False
):
    """The rules given, checked as ``pt2-explorer check`` checks its options: a mistake is a
    ValueError of one line."""
    import math

    from explorer.check._rules import Rules, resolve_package

    specs = (no_breaks_in,) if isinstance(no_breaks_in, str) else no_breaks_in
    if not isinstance(specs, (tuple, list)) or not all(isinstance(s, str) and s for s in specs):
        raise ValueError(
            f"pt2_check: no_breaks_in={no_breaks_in!r}: give a package's name or directory, or a list of them"
        )
    for name, value in (("max_breaks", max_breaks), ("max_recompiles", max_recompiles)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ValueError(f"pt2_check: {name}={value!r}: give a whole number, 0 or more")
    if min_speedup is not None and (
        isinstance(min_speedup, bool)
        or not isinstance(min_speedup, (int, float))
        or not 0 < min_speedup < math.inf
    ):
        raise ValueError(f"pt2_check: min_speedup={min_speedup!r}: give a number above 0, e.g. 1.1")
    if not isinstance(count_torch_breaks, bool):
        raise ValueError(f"pt2_check: count_torch_breaks={count_torch_breaks!r}: give True or False")
    try:
        packages = tuple(resolve_package(s) for s in specs)
    except LookupError as e:
        raise ValueError(f"pt2_check: no_breaks_in {e}") from None
    return Rules(packages, max_breaks, max_recompiles, min_speedup, count_torch_breaks)


def merged(markers) -> dict:
    """The rules of every ``pt2_check`` marker on a test (its module's, its class's, its own:
    ``markers`` closest first), each checked, as one set: the strictest value of each rule
    (every package of ``no_breaks_in``, the least ``max_breaks`` and ``max_recompiles``, the
    greatest ``min_speedup``); ``reset`` as the closest marker that says it."""
    out: dict = {}
    for marker in reversed(list(markers)):  # the farthest first
        if marker.args:
            raise TypeError("pt2_check: give the rules by name, e.g. pt2_check(no_breaks_in='mypkg')")
        unknown = [k for k in marker.kwargs if k not in NAMES]
        if unknown:
            raise TypeError(f"pt2_check: no rule named {unknown[0]!r}: the rules are {', '.join(NAMES)}")
        rules = {k: v for k, v in marker.kwargs.items() if k != "reset"}
        rules_of(**rules)  # each marker's own mistakes, named as it wrote them
        for name, value in marker.kwargs.items():
            if name == "no_breaks_in":
                specs = (value,) if isinstance(value, str) else tuple(value)
                out[name] = tuple(dict.fromkeys((*out.get(name, ()), *specs)))
            elif name == "reset" or out.get(name) is None:
                out[name] = value
            elif value is not None:
                # the strictest: the least count allowed, the greatest speedup asked, torch's own breaks counted
                out[name] = (max if name in ("min_speedup", "count_torch_breaks") else min)(out[name], value)
    return out


class Check:
    """A recording whose report is checked when the block ends (``with Check(...) as rec``)."""

    def __init__(
        self,
        no_breaks_in: str | tuple[str, ...] | list[str] = (),
        max_breaks: int | None = None,
        max_recompiles: int | None = None,
        min_speedup: float | None = None,
        reset: bool = True,
        count_torch_breaks: bool = False,
    ):
        self.rules = rules_of(no_breaks_in, max_breaks, max_recompiles, min_speedup, count_torch_breaks)
        if self.rules.empty:
            raise ValueError(f"pt2_check: no rule given ({', '.join(RULES)})")
        self.reset = reset
        self._rec = self._calls = None

    @property
    def report(self):
        """The recorded report (after the block)."""
        return self._rec.report if self._rec is not None else None

    def __enter__(self) -> Check:
        import compiler

        if self.reset:
            import torch

            torch.compiler.reset()
        self._quiet = _Quiet().__enter__()
        self._rec = compiler.recording()
        self._rec.__enter__()
        if self.rules.min_speedup is not None:  # the compiled functions and their last calls
            self._calls = compiler.compiled_calls().__enter__()
        return self

    def __exit__(self, typ, value, tb) -> bool:
        import compiler
        from explorer.check._rules import check_report

        if self._calls is not None:
            self._calls.__exit__(typ, value, tb)
        self._rec.__exit__(typ, value, tb)
        self._quiet.__exit__()
        if typ is not None:  # the test's own failure first: not hidden by the rules
            return False
        notes = []
        if self._calls is not None:
            notes = compiler.benchmark_calls(self._rec.report, self._calls.called, progress=False)
        result = check_report(self._rec.report, self.rules)
        if not result.passed:
            from explorer.lower._terminal import printable

            text = "\n".join((result.text, *(f"check: {n}" for n in notes)))
            pytest.fail(printable(text), pytrace=False)
        return False


@pytest.fixture
def pt2_check():
    """``with pt2_check(no_breaks_in="mypkg", max_recompiles=0) as rec: ...``: the block is
    recorded and the test fails when a rule is broken; ``rec.report`` is the report."""
    return Check


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    markers = list(item.iter_markers("pt2_check"))  # the test's own, its class's, its module's
    if not markers:
        return (yield)
    try:
        check, mistake = Check(**merged(markers)), None
    except (TypeError, ValueError) as e:  # the marker's own mistake
        check, mistake = None, str(e)
    if mistake is not None:  # one line, not a traceback of the plugin
        pytest.fail(mistake, pytrace=False)
    with check:
        return (yield)
