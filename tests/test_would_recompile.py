"""explorer.would_recompile and %%compile --would-recompile: the guard that would fail is the one torch
then names when the call really recompiles (its structured trace read directly), and checking
compiles nothing."""

from __future__ import annotations

import pytest
import torch
from _torch_trace import RawTrace

import explorer
from compiler.bench._recheck import NotCompiledError

K = 1.0  # read after a graph break by `broken`


def scaled(x, n=2):
    return x.sin() * n


def broken(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y * K


def _net_init(self):
    torch.nn.Module.__init__(self)
    self.fc = torch.nn.Linear(4, 4)


def _net_forward(self, x):
    return self.fc(x).relu()


def _reasons(records) -> list[str]:
    out = []
    for meta, payload in records:
        if (meta.get("artifact") or {}).get("name") == "recompile_reasons":
            out.append(payload)
    return out


def _starts(records) -> int:
    return sum("dynamo_start" in meta for meta, _ in records)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((torch.ones(4),), {}), ((torch.ones(3, dtype=torch.float64),), {}), ((torch.ones(3),), {"n": 3})],
    ids=["size", "dtype", "constant"],
)
def test_predicted_guard_is_torchs_recompile_reason(args, kwargs):
    torch._dynamo.reset()
    cf = torch.compile(scaled, backend="eager")
    cf(torch.ones(3))
    with RawTrace() as raw:
        same = explorer.would_recompile(cf, torch.full((3,), 2.0))
        answer = explorer.would_recompile(cf, *args, **kwargs)
    assert _starts(raw.records) == 0  # checking compiled nothing
    assert not same.would_recompile and same.matching_entry == "0/0"
    assert answer.would_recompile and not answer.limit_hit and answer.entries == 1
    with RawTrace() as raw:
        torch.testing.assert_close(cf(*args, **kwargs), scaled(*args, **kwargs))
    (torch_reason,) = _reasons(raw.records)  # the call recompiled, for the reason predicted
    assert [r.splitlines()[0] for r in answer.failures] == [torch_reason.splitlines()[0]]
    assert str(answer).splitlines()[:2] == ["scaled: would recompile", "  " + torch_reason.splitlines()[0]]


def test_module_and_run_mode_after_a_graph_break():
    global K
    torch._dynamo.reset()
    m = torch.nn.Sequential(torch.nn.Linear(4, 4))
    cm = torch.compile(m, backend="eager")
    cm(torch.ones(2, 4))
    wide = explorer.would_recompile(cm, torch.ones(5, 4))
    assert wide.function == "Sequential.forward" and wide.would_recompile
    assert "size mismatch at index 0. expected 2, actual 5" in wide.failures[0]

    # a module of the program's own class: torch compiles its forward's frame
    net = type("Net", (torch.nn.Module,), {"__init__": _net_init, "forward": _net_forward})()
    cn = torch.compile(net, backend="eager")
    cn(torch.ones(2, 4))
    assert not explorer.would_recompile(cn, torch.full((2, 4), 3.0)).would_recompile
    wide = explorer.would_recompile(cn, torch.ones(6, 4))
    assert wide.function == "Net.forward" and "expected 2, actual 6" in wide.failures[0]

    cb = torch.compile(broken, backend="eager")
    with RawTrace() as raw:
        cb(torch.ones(3))
    first = next(f"{m['frame_id']}/{m['frame_compile_id']}" for m, _ in raw.records if "dynamo_start" in m)
    K = 2.0
    try:
        own = explorer.would_recompile(cb, torch.ones(3))  # the first frame's guards hold
        assert not own.would_recompile and own.matching_entry == first and "graph break" in own.note
        with RawTrace() as raw:
            ran = explorer.would_recompile(cb, torch.ones(3), run=True)
        assert ran.would_recompile and ran.ran
        assert _starts(raw.records) == 0  # torch refused to recompile the frame after the break
        assert "torch_dynamo_resume_in_broken" in ran.failures[0]
    finally:
        K = 1.0


def test_not_compiled_is_one_line():
    with pytest.raises(NotCompiledError, match=r"^would_recompile: scaled is not a torch.compile'd function"):
        explorer.would_recompile(scaled, torch.ones(3))


def test_magic_form():
    ip = pytest.importorskip("IPython.testing.globalipapp").get_ipython()
    ip.run_line_magic("load_ext", "explorer")
    torch._dynamo.reset()
    ip.user_ns["torch"] = torch
    ip.user_ns["cf"] = torch.compile(scaled, backend="eager")
    ip.run_cell("cf(torch.ones(3))")
    out = ip.run_cell_magic("compile", "--would-recompile", "x_new = torch.ones(6)\ncf(x_new)")
    assert out.would_recompile and "expected 3, actual 6" in out.failures[0]
    assert ip.user_ns["x_new"].shape == (6,)  # earlier lines ran as a plain cell
    assert not ip.run_cell_magic("compile", "--would-recompile", "cf(torch.zeros(3), n=2)").would_recompile
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="last line must be a call"):
        ip.run_cell_magic("compile", "--would-recompile", "y = 1")
    for n in ("cf", "x_new"):
        ip.user_ns.pop(n, None)


def test_the_old_names_still_answer_and_warn(capsys):
    import compiler

    torch._dynamo.reset()
    cf = torch.compile(scaled, backend="eager")
    cf(torch.ones(3))
    with pytest.warns(
        DeprecationWarning, match=r"^explorer\.check_recompile is now explorer\.would_recompile$"
    ):
        old = explorer.check_recompile
    assert old is explorer.would_recompile
    assert old(cf, torch.ones(4)).failures == explorer.would_recompile(cf, torch.ones(4)).failures
    with pytest.warns(
        DeprecationWarning, match=r"^compiler\.check_recompile is now compiler\.would_recompile$"
    ):
        assert compiler.check_recompile is compiler.would_recompile
    with pytest.warns(DeprecationWarning):  # each use warns: the old name is not kept in the package
        compiler.check_recompile  # noqa: B018
    assert "check_recompile" not in vars(compiler) and "check_recompile" not in compiler.__all__

    ip = pytest.importorskip("IPython.testing.globalipapp").get_ipython()
    ip.run_line_magic("load_ext", "explorer")
    ip.user_ns.update(torch=torch, cf=cf)
    capsys.readouterr()
    out = ip.run_cell_magic("compile", "--check", "cf(torch.ones(5))")
    assert out.would_recompile and "expected 3, actual 5" in out.failures[0]
    assert capsys.readouterr().err == "%%compile --check is now %%compile --would-recompile\n"
    ran = ip.run_cell_magic("compile", "--check --run", "cf(torch.ones(7))")
    assert ran.would_recompile and ran.ran
    ip.user_ns.pop("cf", None)
