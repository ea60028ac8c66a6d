"""Reports and logs are untrusted input, so reading one costs time linear in its size: every
parser function in compiler/parse, the loader of TORCH_TRACE logs and every view (each view of
the registry as text, for every compile; the static page; a diff) on lines of 100,000 repeated
characters of one class (blanks, digits, letters, punctuation). A regex that backtracks
quadratically takes minutes there (the bytecode listing's row regex took 25 s at 20,000
blanks); linear code takes well under a second.

The bound, BOUND seconds per call, is generous because this machine is shared and noisy; a
quadratic call at 100k clearly exceeds it. Each call is first timed at a tenth of the size: one
that takes BOUND / 10 longer there than without the long lines fails at once rather than run a
hundred times longer."""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib
import inspect
import json
import os
import pkgutil
import string
import time
import types
import warnings

import pytest

import compiler
import compiler._viewer
import compiler.model._fxcode
import compiler.model._guards
import compiler.model._reasons
import compiler.parse
import compiler.parse._modules
import compiler.parse._outputcode
import compiler.parse._text
import explorer
import explorer.diffs._normalize
import explorer.model._guards
import explorer.model._summary
from compiler.parse._tritonir import LEVELS
from explorer.views._registry import names
from tests._torch_trace import read_log

BOUND = 10.0  # seconds one call may take at SIZE characters a line
SIZE = 100_000
CLASSES = {"blanks": " ", "tabs": "\t", "digits": "0", "letters": "a", "capitals": "A", "underscores": "_"}
CLASSES |= {"newlines": "\n", "blank lines": "  \n"}
CLASSES |= {f"punctuation {c}": c for c in string.punctuation}
# the classes the whole pipeline (load, every view, the page, a diff) is timed on
PIPELINE = (
    "blanks",
    "digits",
    "letters",
    "capitals",
    "punctuation [",
    "punctuation (",
    "punctuation .",
    "punctuation #",
)
TRACE = os.path.join(os.path.dirname(__file__), "fixtures", "traces", "cpu-torch213-breaks.log.gz")
HEAD = "V1122 08:16:07.449000 399 torch/_dynamo/utils.py:2126] "
VALUES = {"level": LEVELS}  # parameters that choose what a parser reads: every choice


def _line(c: str, size: int) -> str:
    """``size`` times ``c``, then a character of another class (where a match fails)."""
    return c * size + ("x" if c in string.punctuation + " \t" else "!")


def _timed(what: str, call, make) -> None:
    """``call(make(SIZE))`` within BOUND; first ``call(make(SIZE // 10))`` within a tenth of
    it more than ``call(make(0))`` took (what the call costs without the long lines)."""
    took = {}
    for size in (0, SIZE // 10, SIZE):
        arg = make(size)
        start = time.perf_counter()
        call(arg)
        took[size] = time.perf_counter() - start
        if size == SIZE // 10:
            more = took[size] - took[0]
            assert more < BOUND / 10, f"{what}: {more:.1f} s more at {size:,} characters a line than at 0"
    assert took[SIZE] < BOUND, f"{what}: {took[SIZE]:.1f} s at {SIZE:,} characters a line (bound {BOUND:g} s)"


def _str_params(f) -> list[str] | None:
    """The parameters of ``f`` that take text; None where another one is required."""
    names = []
    for p in inspect.signature(f).parameters.values():
        if p.annotation in ("str", "str | None"):
            names.append(p.name)
        elif p.default is inspect.Parameter.empty:
            return None
    return names or None


def _parsers() -> list[tuple[str, types.FunctionType, list[str]]]:
    """Every public function of compiler/parse whose required parameters all take text."""
    out = []
    for m in pkgutil.iter_modules(compiler.parse.__path__, "compiler.parse."):
        mod = importlib.import_module(m.name)
        for name, f in vars(mod).items():
            if inspect.isfunction(f) and f.__module__ == m.name and not name.startswith("_"):
                params = _str_params(f)
                if params is not None:
                    out.append((f"{m.name}.{name}", f, params))
    return out


PARSERS = _parsers()


def test_the_parsers_are_found():
    """The enumeration finds the parsers (it is not silently empty)."""
    names = {n.rsplit(".", 1)[1] for n, _, _ in PARSERS}
    assert {"bytecode_steps", "parse_graph", "split_kernels", "parse_graph_break", "ir_source_lines"} <= names


@pytest.mark.parametrize("name, f, params", PARSERS, ids=[n for n, _, _ in PARSERS])
def test_parsers_are_linear(name, f, params):
    for cls, c in CLASSES.items():
        for fixed in [{}] + [{p: v} for p in params if p in VALUES for v in VALUES[p]]:

            def call(text, fixed=fixed):
                try:
                    f(**{p: fixed.get(p, text) for p in params})
                except (ValueError, KeyError, IndexError):
                    pass  # refusing it is fine; taking long is not

            _timed(f"{name}({fixed or ''}) on {cls}", call, lambda n, c=c: _line(c, n))


def _crafted_trace(path, line: str) -> None:
    """The fixture's log with ``line`` added to every text payload (MD5s made again)."""
    out = []
    for meta, payload in read_log(TRACE):
        if payload is not None and not payload.lstrip().startswith(("{", "[")):
            payload = payload + "\n" + line
            meta["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
        out.append(
            HEAD + json.dumps(meta) + "".join("\n\t" + ln for ln in (payload or "").split("\n") if payload)
        )
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


@pytest.fixture(scope="module")
def plain():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compiler.load_trace(TRACE)


def _diff(plain, r) -> None:
    d = explorer.diff(plain, r)
    str(d), d.html()


@pytest.mark.parametrize("cls", PIPELINE)
def test_loading_and_every_view_are_linear(cls, tmp_path, plain):
    """The fixture's log with a long line added to every text payload: loaded, every view of
    the registry as text for each compile, the static page, a diff with the plain log's."""
    c = CLASSES[cls]
    reports = {}

    def load(path):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reports[path] = compiler.load_trace(path)

    def crafted(size):
        path = str(tmp_path / f"crafted-{size}.log.gz")
        _crafted_trace(path, _line(c, size))
        return path

    _timed(f"load_trace on {cls}", load, crafted)
    by_size = {n: reports[str(tmp_path / f"crafted-{n}.log.gz")] for n in (0, SIZE // 10, SIZE)}
    big = by_size[SIZE]
    assert any(_line(c, SIZE) in (x.stages.capture.guards or "") for x in big.compiles if x.stages.capture)
    for name in names():
        for x in [None, *(x.id for x in big.compiles)]:
            view = functools.partial(explorer.text, view=name, compile=x)
            _timed(f"--view {name} --compile {x} on {cls}", view, by_size.get)
    page = functools.partial(explorer.save_html, path=tmp_path / "page.html")
    _timed(f"the page on {cls}", page, by_size.get)
    _timed(f"diff on {cls}", functools.partial(_diff, plain), by_size.get)


# inputs that took seconds to minutes before (a quadratic regex each), made of the text its
# regex repeats: quadratic no more
CRAFTED = {
    "bytecode row (N blanks then x)": (compiler.analysis.bytecode_steps, lambda n: " " * n + "x"),
    "module path (N [)": (compiler.parse._modules.module_path, lambda n: "[" * n),
    "provenance of a CPU kernel (N blank lines)": (
        compiler.parse._outputcode.split_kernels,
        lambda n: "k = async_compile.cpp('''\nbody\n''')\n" + "  \n" * n + "k(",
    ),
    "wrapped callable (N managers of L['fn'])": (
        functools.partial(compiler.parse._text.wrapped_callable, "inner", "torch/_dynamo/external_utils.py"),
        lambda n: "GuardManager: source=L['fn'], " * (n // 30),
    ),
    "graph source comment (N ':1 in ')": (
        compiler.model._fxcode.graph_nodes,
        lambda n: "    # File: " + ":1 in " * (n // 6) + ",x, code: y",
    ),
    "graph annotation (N letters)": (
        compiler.model._fxcode.graph_nodes,
        lambda n: '    x: "' + "a" * n + '" = y()',
    ),
    "graph parameter (N letters)": (
        compiler.model._fxcode.graph_nodes,
        lambda n: "    def forward(self, " + "x" * n + ")",
    ),
    "notebook cell paths (N letters)": (compiler.analysis.normalize, lambda n: "ipykernel_ " + "a" * n),
    "a recompile reason's padding (N blanks)": (compiler.model._reasons.one_gap, lambda n: " " * n + "x"),
    "guard manager sources (N source=)": (
        compiler.model._guards.parse_guards,
        lambda n: "| +- GuardManager: " + "source=" * (n // 7),
    ),
}


@pytest.mark.parametrize("what", CRAFTED)
def test_the_crafted_inputs_are_linear(what):
    f, make = CRAFTED[what]
    _timed(what, f, make)
