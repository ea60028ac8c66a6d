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

A broken rule fails the test with the offending sites in its message, the lines ``check``
prints. torch's compile caches are reset first (``torch.compiler.reset()``): a function an
earlier test compiled is compiled again, so its breaks and recompiles are seen; ``reset=False``
keeps them. Loading the plugin imports no torch."""

from __future__ import annotations

import pytest

MARKER = (
    "pt2_check(no_breaks_in=(), max_breaks=None, max_recompiles=None, reset=True): record the "
    "test's torch.compile calls and fail it when a rule is broken (PT2 Explorer, `pt2-explorer check`)"
)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", MARKER)


class Check:
    """A recording whose report is checked when the block ends (``with Check(...) as rec``)."""

    def __init__(
        self,
        no_breaks_in: str | tuple[str, ...] | list[str] = (),
        max_breaks: int | None = None,
        max_recompiles: int | None = None,
        reset: bool = True,
    ):
        from explorer.check._rules import Rules, resolve_package

        specs = (no_breaks_in,) if isinstance(no_breaks_in, str) else tuple(no_breaks_in)
        for name, value in (("max_breaks", max_breaks), ("max_recompiles", max_recompiles)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"pt2_check: {name}={value!r}: give a whole number, 0 or more")
        try:
            packages = tuple(resolve_package(s) for s in specs)
        except LookupError as e:
            raise ValueError(f"pt2_check: no_breaks_in {e}") from None
        self.rules = Rules(packages, max_breaks, max_recompiles)
        if self.rules.empty:
            raise ValueError("pt2_check: no rule given (no_breaks_in, max_breaks, max_recompiles)")
        self.reset = reset
        self._rec = None

    @property
    def report(self):
        """The recorded report (after the block)."""
        return self._rec.report if self._rec is not None else None

    def __enter__(self) -> Check:
        import compiler

        if self.reset:
            import torch

            torch.compiler.reset()
        self._rec = compiler.recording()
        self._rec.__enter__()
        return self

    def __exit__(self, typ, value, tb) -> bool:
        from explorer.check._rules import check_report

        self._rec.__exit__(typ, value, tb)
        if typ is not None:  # the test's own failure first: not hidden by the rules
            return False
        result = check_report(self._rec.report, self.rules)
        if not result.passed:
            from explorer.model._summary import printable

            pytest.fail(printable(result.text), pytrace=False)
        return False


@pytest.fixture
def pt2_check():
    """``with pt2_check(no_breaks_in="mypkg", max_recompiles=0) as rec: ...``: the block is
    recorded and the test fails when a rule is broken; ``rec.report`` is the report."""
    return Check


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    marker = item.get_closest_marker("pt2_check")
    if marker is None:
        return (yield)
    try:
        if marker.args:
            raise TypeError("pt2_check: give the rules by name, e.g. pt2_check(no_breaks_in='mypkg')")
        check, mistake = Check(**marker.kwargs), None
    except (TypeError, ValueError) as e:  # the marker's own mistake
        check, mistake = None, str(e)
    if mistake is not None:  # one line, not a traceback of the plugin
        pytest.fail(mistake, pytrace=False)
    with check:
        return (yield)
