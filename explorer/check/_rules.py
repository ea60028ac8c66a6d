"""The CI gate's rules over a report (``pt2-explorer check``, the pytest plugin's ``pt2_check``):
no graph break in a package, at most N break sites, at most N recompiles, compiled at least X
times as fast as eager in each benchmark (with the verdict and its fixes where it is not). Pure over the report:
the run is ``record``'s (explorer/cli/_check.py) or the test's (explorer/_pytestplugin.py).

Whose break is it: walking the break's stack from the break outwards, the first frame that is
in a checked package or in the program's own code (``StackFrame.kind == "user"``) owns it. A
break inside torch or another library counts for the package whose frame called into it; a
break in the user's callback that the package called does not count for the package. A break
torch asks for in its own files (``GraphBreak.torch_own``: the optimizer's ``_use_grad`` calls
``torch._dynamo.graph_break()``) is torch's, counted for no package unless the rules say
``count_torch_breaks``."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from dataclasses import dataclass

from compiler import Report
from compiler.analysis import verdict
from compiler.types import GraphBreak, StackFrame

from ..base._words import display_name
from ..model._summary import reasons_line, where


@dataclass(frozen=True)
class Package:
    """A package (or a directory, or one file) whose breaks are checked."""

    name: str  # as the user gave it: "mypkg", "mypkg.models", "src/mypkg"
    roots: tuple[str, ...]  # real paths: directories (ending in a separator) or single files
    base: str  # its files are shown relative to this directory ("mypkg/models/attn.py")

    def holds(self, filename: str) -> bool:
        path = _real(filename)
        return any(path.startswith(r) if r.endswith(os.sep) else path == r for r in self.roots)

    def shown(self, frame: StackFrame) -> str:
        rel = os.path.relpath(_real(frame.filename), self.base)
        return f"{rel}:{frame.line}"


@dataclass(frozen=True)
class Rules:
    """What ``check`` enforces; ``None``: no limit."""

    no_breaks_in: tuple[Package, ...] = ()
    max_breaks: int | None = None  # graph-break sites, as the summary counts them
    max_recompiles: int | None = None
    # eager median / compiled median of each benchmark (``check --bench`` runs them as
    # ``record --bench`` does, before the check); a report with none breaks the rule
    min_speedup: float | None = None
    # a break torch asks for in its own files (the optimizer's ``_use_grad``) counts for the
    # package that called into torch only when asked (``--count-torch-breaks``)
    count_torch_breaks: bool = False

    @property
    def empty(self) -> bool:
        return (
            not self.no_breaks_in
            and self.max_breaks is None
            and self.max_recompiles is None
            and self.min_speedup is None
        )


@dataclass(frozen=True)
class CheckResult:
    lines: tuple[str, ...]  # one per offending break site or recompile, "check: …"
    broken: tuple[str, ...]  # each rule broken, "--max-recompiles 0: 3 recompiles"
    summary: str  # "check: passed (…)" or "check: 2 rules broken (…)"

    @property
    def passed(self) -> bool:
        return not self.broken

    @property
    def text(self) -> str:
        return "\n".join((*self.lines, self.summary))


def resolve_package(spec: str, first_path: str | None = None) -> Package:
    """The package ``spec`` names: a path where it has a separator or ends in ``.py``
    (``src/mypkg``, ``./mypkg``, ``tools/gen.py``), else a module name found as ``import`` would
    find it, with ``first_path`` first on ``sys.path`` (the program's directory). Nothing is
    imported: a dotted name's parts are looked up as directories or modules under the
    top-level package's directories. Raises LookupError naming what was tried."""
    if os.sep in spec or (os.altsep and os.altsep in spec) or spec.endswith(".py"):
        path = _real(spec)
        if os.path.isdir(path):
            return Package(spec, (os.path.join(path, ""),), os.path.dirname(path))
        if os.path.isfile(path):
            return Package(spec, (path,), os.path.dirname(path))
        raise LookupError(f"{spec}: no such directory or file")
    if not all(part.isidentifier() for part in spec.split(".")):
        raise LookupError(f"{spec}: not a package name or a path")
    top, *rest = spec.split(".")
    saved = list(sys.path)
    if first_path is not None:
        sys.path.insert(0, first_path)
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        found = None
    finally:
        sys.path[:] = saved
    if found is None:
        where_ = f" (the program's directory {first_path} first)" if first_path else ""
        raise LookupError(f"{spec}: no package or module of that name on sys.path{where_}")
    locations = list(found.submodule_search_locations or ())
    if not locations:  # a module: one file
        if rest or not found.origin or not os.path.isfile(found.origin):
            raise LookupError(f"{spec}: {top} is a module, not a package, and has no file here")
        path = _real(found.origin)
        return Package(spec, (path,), os.path.dirname(path))
    roots = [_real(p) for p in locations]
    depth = len(rest) + 1
    for part in rest:
        deeper = [os.path.join(r, part) for r in roots if os.path.isdir(os.path.join(r, part))]
        files = [
            os.path.join(r, part + ".py") for r in roots if os.path.isfile(os.path.join(r, part + ".py"))
        ]
        if not deeper and not files:
            raise LookupError(f"{spec}: no {part} in {', '.join(roots)}")
        if not deeper:  # mypkg.ops: one module's file
            (path,) = files[:1]
            return Package(spec, (path,), _up(path, depth))
        roots = deeper
    return Package(spec, tuple(os.path.join(r, "") for r in roots), _up(roots[0], depth))


def check_report(report: Report, rules: Rules) -> CheckResult:
    """The rules over ``report``: the offending break sites and recompiles, one line each (a
    break listed once, under the package that owns it), then the verdict."""
    owners = [
        (None, None) if b.torch_own and not rules.count_torch_breaks else _owner(b, rules.no_breaks_in)
        for b in report.graph_breaks
    ]
    in_pkg = {p.name: [i for i, (q, _) in enumerate(owners) if q is p] for p in rules.no_breaks_in}
    elsewhere = sum(q is None for q, _ in owners)
    n_breaks, n_recompiles = len(report.graph_breaks), len(report.recompiles)

    broken: list[str] = []
    shown: set[int] = set()
    for p in rules.no_breaks_in:
        if in_pkg[p.name]:
            broken.append(f"--no-breaks-in {p.name}: {_count(len(in_pkg[p.name]), 'break')}")
            shown.update(in_pkg[p.name])
    if rules.max_breaks is not None and n_breaks > rules.max_breaks:
        broken.append(f"--max-breaks {rules.max_breaks}: {_count(n_breaks, 'break site')}")
        shown.update(range(n_breaks))
    recompiles_broken = rules.max_recompiles is not None and n_recompiles > rules.max_recompiles
    if recompiles_broken:
        broken.append(f"--max-recompiles {rules.max_recompiles}: {_count(n_recompiles, 'recompile')}")

    lines = [_break_line(report.graph_breaks[i], *owners[i]) for i in sorted(shown)]
    if recompiles_broken:
        names = {c.id: display_name(c.name) for c in report.compiles}
        for r in report.recompiles:
            line = f"check: recompile [{r.compile_id}] {names.get(r.compile_id, '?')}: "
            line += reasons_line(r) or "(reason not recorded)"
            if r.failing_guard:
                line += f"; failing guard: {r.failing_guard}"
            lines.append(_one_line(line))
    if rules.min_speedup is not None:
        slow = [b for b in report.benchmarks if b.speedup is None or b.speedup < rules.min_speedup]
        if slow or not report.benchmarks:
            n = len(slow) if report.benchmarks else 0
            what = (
                _count(n, "benchmark") + " below it"
                if report.benchmarks
                else "no benchmark (run with --bench)"
            )
            broken.append(f"--min-speedup {rules.min_speedup:g}: {what}")
        for b in slow:
            v = verdict(report, b)
            lines.append(_one_line(f"check: {b.name}: {v.headline}"))
            lines += [_one_line(f"check: {b.name}: fix: {fix}") for fix in v.fixes[:3]]
            lines += [_one_line(f"check: {b.name}: advice: {a}") for a in v.advice[: 3 - len(v.fixes[:3])]]
    if broken:
        rules_word = "rule" if len(broken) == 1 else "rules"
        summary = f"check: {len(broken)} {rules_word} broken ({'; '.join(broken)})"
    else:
        counts = [f"{_count(len(in_pkg[p.name]), 'break')} in {p.name}" for p in rules.no_breaks_in]
        if rules.no_breaks_in:
            own = sum(b.torch_own for b in report.graph_breaks) if not rules.count_torch_breaks else 0
            counts.append(f"{_count(elsewhere - own, 'break')} elsewhere")
            if own:
                counts.append(f"{_count(own, 'break')} torch's own (--count-torch-breaks counts them)")
        else:
            counts.append(_count(n_breaks, "break"))
        counts.append(_count(n_recompiles, "recompile"))
        if not report.compiles:  # a check of nothing is said to be one
            counts.insert(0, "0 compiles: nothing was compiled")
        if rules.min_speedup is not None:
            counts += [f"{b.name} {b.speedup_words}" for b in report.benchmarks]
        summary = f"check: passed ({', '.join(counts)})"
    return CheckResult(tuple(lines), tuple(broken), _one_line(summary))


def _owner(b: GraphBreak, packages) -> tuple[Package | None, StackFrame | None]:
    """The package that owns break ``b`` and its frame that does ((None, frame): the program's
    own code; (None, None): no frame of either). From the break outwards, the first frame in
    one of ``packages`` or of the program's own code decides."""
    stack = list(b.user_stack)
    if b.filename and (not stack or (stack[-1].filename, stack[-1].line) != (b.filename, b.line)):
        stack.append(StackFrame(b.filename, b.line or 0, "?"))  # the site itself, where not last
    for f in reversed(stack):
        holding = [p for p in packages if p.holds(f.filename)]
        if holding:  # mypkg and mypkg.models both given: the deeper one
            return max(holding, key=lambda p: max(map(len, p.roots))), f
        if f.kind == "user":
            return None, f
    return None, None


def _break_line(b: GraphBreak, pkg: Package | None, frame: StackFrame | None) -> str:
    """``check: graph break in mypkg (mypkg/ops.py:6, GB0124 Unsupported Tensor.item() call …)``;
    where the break itself is in a library the package called: ``…ops.py:6, calling
    torch/functional.py:120: GB…``."""
    site = where(b.filename, b.line)
    inside = b.torch_site  # counted on request: torch's own line, reached from the package's
    if inside is not None:
        site = f"torch's own break at {where(inside.filename, inside.line)}"
    if pkg is not None and frame is not None:
        own = pkg.shown(frame)
        mine = (frame.filename, frame.line) == (b.filename, b.line) and inside is None
        at = own if mine else f"{own}, calling {site}"
        head = f"check: graph break in {pkg.name} ({at}, "
    else:
        head = f"check: graph break ({site}, "
    what = " ".join(x for x in (b.gb_id, b.type) if x)
    return _one_line(f"{head}{what or b.reason.strip().splitlines()[0]})")


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _one_line(text: str) -> str:
    return " ".join(text.split("\n"))


@functools.lru_cache(maxsize=4096)
def _real(filename: str) -> str:
    return os.path.realpath(filename)


def _up(path: str, levels: int) -> str:
    for _ in range(levels):
        path = os.path.dirname(path.rstrip(os.sep))
    return path
