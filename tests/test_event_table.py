"""The event table is whole: every payload a row keeps is a typed field of ``Kept`` that the
assembler reads, every in-process event has its row in the listeners' table, and the recipe
"add an event" in CONTRIBUTING.md names files and names that exist, and, for every kind
of row (a payload kept whole, facts of one compile, report-wide, heard in-process, dropped),
every file the table's rows of that kind touch."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

from compiler.assemble import _acc, _collect, _stages
from compiler.listen import _capture, _table

ROOT = Path(__file__).resolve().parent.parent
COMPILER = ROOT / "compiler"


def _kept_fields(source: str) -> tuple[set[str], set[str]]:
    """The ``Kept`` fields a module's code reads and writes: attributes of ``<x>.kept`` or of a
    name ``kept`` / ``k`` bound to it. A read in a function that also writes the same field
    (a handler looking at what it keeps) is not a use of it."""
    reads: set[str] = set()
    writes: set[str] = set()

    def on_kept(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "kept") or (
            isinstance(node, ast.Name) and node.id in ("kept", "k")
        )

    tree = ast.parse(source)
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in scopes or [tree]:
        loads, stores = set(), set()
        for node in ast.walk(scope):
            if isinstance(node, ast.Attribute) and on_kept(node.value):
                (stores if isinstance(node.ctx, ast.Store) else loads).add(node.attr)
        reads |= loads - stores
        writes |= stores
    return reads, writes


def _unread(sources: list[str], rows: set[str]) -> list[str]:
    """The kept payloads (fields ``rows`` keep, and those handlers write) that no code reads."""
    reads: set[str] = set()
    writes: set[str] = set(rows)
    for source in sources:
        r, w = _kept_fields(source)
        reads |= r
        writes |= w
    return sorted(writes - reads)


def _keep_rows() -> dict[str, str]:
    """Event name (or pattern) -> the ``Kept`` field its row keeps."""
    rows = {name: spec.handler.kept for name, spec in _stages.EVENTS.items() if hasattr(spec.handler, "kept")}
    rows.update({pat: spec.handler.kept for pat, spec in _stages.PATTERNS if hasattr(spec.handler, "kept")})
    return rows


def test_every_kept_payload_is_read():
    sources = [p.read_text() for p in sorted(COMPILER.rglob("*.py"))]
    assert _unread(sources, set(_keep_rows().values())) == []


def test_a_payload_kept_and_never_read_fails():
    handler = (
        "def on_x(a, ev, ctx):\n    a.kept.seen = ev.payload\n    if a.kept.seen is None:\n        pass\n"
    )
    build = "def build(a):\n    kept = a.kept\n    return kept.graph\n"
    assert _unread([handler, build], {"graph", "joint"}) == ["joint", "seen"]
    assert _unread([handler, build, "def f(a):\n    return a.kept.seen, a.kept.joint\n"], {"joint"}) == []


def test_every_kept_payload_is_a_typed_field_of_kept():
    fields = {f.name: f for f in dataclasses.fields(_acc.Kept)}
    rows = _keep_rows()
    assert rows["dynamo_output_graph"] == "graph"
    assert rows["artifact:aot_forward_graph_fw_metadata"] == "fw_metadata"
    assert set(rows.values()) <= set(fields)
    assert all(f.type == "str | None" and f.default is None for f in fields.values())
    with pytest.raises(ValueError, match=r"keep\('grpah'\): Kept has no field 'grpah'"):
        _collect.keep("grpah")
    # every field is filled by a row or a handler
    written = set(rows.values())
    for path in sorted((COMPILER / "assemble").glob("*.py")):
        written |= _kept_fields(path.read_text())[1]
    assert written == set(fields)


def test_dynamo_guards_is_dropped_on_purpose():
    assert "dynamo_guards" in _stages.IGNORED and _stages.lookup("dynamo_guards") is None


def test_every_in_process_event_has_its_listener_row():
    made = {name for row in _table.LISTENERS for name in row.events}
    assert "*" in made  # the structured trace
    rows = set(_stages.EVENTS)
    assert made - {"*"} <= rows
    # an artifact logger's records are heard only in-process: each such row has its listener
    assert {name for name in rows if name.startswith("log:")} <= made
    params = inspect.signature(_capture.recording).parameters
    for row in _table.LISTENERS:
        assert row.option is None or (params[row.option].default in (False, None)), row  # off unless asked
    assert len({row.name for row in _table.LISTENERS}) == len(_table.LISTENERS)


def test_listeners_attach_as_their_options_say():
    calls = []
    rows = tuple(
        dataclasses.replace(row, attach=lambda ears, name=row.name: calls.append(name)) if row.attach else row
        for row in _table.LISTENERS
    )
    ears = _table.Ears([], _table.Scope(0), None, None, [])
    real = _table.LISTENERS
    try:
        _table.LISTENERS = rows
        _table.attach(ears, lambda option: option == "fusion_logs")
    finally:
        _table.LISTENERS = real
    always = [row.name for row in real if row.option is None]
    assert calls == [always[0], "fusion decisions", *always[1:]]


# ---- the recipe in CONTRIBUTING.md, against the code ----


def _recipe() -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    start = text.index("## Recipe: add an event")
    return text[start : text.index("\n## ", start + 1)]


def test_the_recipe_names_real_files_and_names():
    recipe = _recipe()
    paths = set(re.findall(r"`((?:compiler|explorer|tests|docs)/[\w/.-]+?)(?::[^`]*)?`", recipe))
    assert {
        "compiler/assemble/_stages.py",
        "compiler/assemble/_acc.py",
        "compiler/assemble/_build.py",
        "compiler/assemble/_collect.py",
        "compiler/listen/_table.py",
        "compiler/listen/_torch.py",
        "compiler/listen/_listeners.py",
        "compiler/parse/",
        "compiler/model/_stagetypes.py",
        "docs/report-schema.md",
        "tests/_torch_trace.py",
        "tests/test_view_fields.py",
        "explorer/views/",
    } <= paths
    for path in paths:
        assert (ROOT / path).exists(), path
    named = re.findall(r"`(compiler/[\w/]+)\.py: (\w+)`", recipe)
    assert len(named) >= 8 and callable(_table._artifacts)  # the artifact logger's row it shows
    for module, name in named:
        assert hasattr(importlib.import_module(module.replace("/", ".")), name), f"{module}.py: {name}"


def test_the_recipes_row_is_in_the_table():
    (block,) = re.findall(r"```python\n(.*?)```", _recipe(), re.S)
    (row,) = [line.strip() for line in block.splitlines() if line.strip()]
    assert row in (COMPILER / "assemble/_stages.py").read_text()
    name, field = re.fullmatch(r'"([^"]+)": Spec\("\w+", c\.keep\("(\w+)"\)\),', row).groups()
    assert _keep_rows()[name] == field
    assert field in {f.name for f in dataclasses.fields(_acc.Kept)}
    assert f"kept.{field}" in (COMPILER / "assemble/_build.py").read_text()


# ---- every kind of row touches only the files the recipe names for it ----

_PATH = re.compile(r"`(compiler/[\w/]+\.py)(?::[^`]*)?`")


def _recipe_kinds() -> dict[str, set[str]]:
    """The recipe's table of row kinds: kind -> the files named in its row."""
    kinds = {}
    for line in _recipe().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.strip().startswith("|") and len(cells) == 3 and not set(cells[0]) <= set("-"):
            kinds[cells[0]] = set(_PATH.findall(cells[1] + cells[2]))
    kinds.pop("kind of row")
    return kinds


def _kind(spec: _stages.Spec) -> str:
    if hasattr(spec.handler, "kept"):
        return "a payload kept whole"
    return (
        "facts of one compile"
        if spec.per_compile
        else "report-wide (`_report_wide(handler)`, no compile of its own)"
    )


def _rel(path: str | None) -> str:
    return Path(path).resolve().relative_to(ROOT).as_posix() if path else "?"


def _row_files(spec: _stages.Spec, sources: dict[str, str]) -> set[str]:
    """The files a row's kind makes it touch besides its row: a kept payload's field (Kept)
    and the modules that read it; a handler's module."""
    if hasattr(spec.handler, "kept"):
        readers = {path for path, text in sources.items() if spec.handler.kept in _kept_fields(text)[0]}
        return {_rel(inspect.getsourcefile(_acc.Kept)), *readers}
    return {_rel(inspect.getsourcefile(spec.handler))}


def _misplaced(rows: dict[str, _stages.Spec], kinds: dict[str, set[str]]) -> list[str]:
    sources = {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted(COMPILER.rglob("*.py"))}
    out = []
    for name, spec in rows.items():
        kind = _kind(spec)
        extra = _row_files(spec, sources) - kinds.get(kind, set())
        if extra:
            out.append(f"{name} ({kind}): {', '.join(sorted(extra))}")
    return out


def test_every_row_touches_only_the_files_its_kind_names():
    kinds = _recipe_kinds()
    assert set(kinds) == {
        "a payload kept whole",
        "facts of one compile",
        "report-wide (`_report_wide(handler)`, no compile of its own)",
        "dropped on purpose",
    }
    rows = {**_stages.EVENTS, **{f"artifact:*{end}": spec for end, spec in _stages.PATTERNS}}
    assert {_kind(s) for s in rows.values()} == set(kinds) - {"dropped on purpose"}  # each kind is real
    assert _misplaced(rows, kinds) == []
    # dropped on purpose: a name of IGNORED has no row, and lookup finds none
    assert kinds["dropped on purpose"] == {"compiler/assemble/_stages.py"}
    assert not _stages.IGNORED & set(_stages.EVENTS)
    assert all(_stages.lookup(name) is None for name in _stages.IGNORED)
    # a pattern row matches by its artifact name's end, and only an artifact's
    end, spec = _stages.PATTERNS[0]
    assert _stages.lookup(f"artifact:forward{end}") is spec
    assert _stages.lookup(f"artifact:{end}") is None and _stages.lookup(f"forward{end}") is None


def _on_here(acc, ev, ctx):  # a handler in a file no kind names
    pass


def test_a_row_touching_a_file_its_kind_does_not_name_fails():
    kinds = _recipe_kinds()
    rows = {
        "mine": _stages.Spec("capture", _on_here),
        "kept": _stages.Spec("capture", _collect.keep("guards")),
    }
    assert _misplaced(rows, kinds) == ["mine (facts of one compile): tests/test_event_table.py"]
    assert _misplaced(rows, {**kinds, "a payload kept whole": {"compiler/assemble/_acc.py"}}) == [
        "mine (facts of one compile): tests/test_event_table.py",
        "kept (a payload kept whole): compiler/assemble/_build.py",
    ]


def _step(n: int) -> str:
    recipe = _recipe()
    start = recipe.index(f"\n{n}. **")
    return recipe[start : recipe.index(f"\n{n + 1}. **", start)]


def test_every_listener_lives_where_the_recipe_says():
    named = set(_PATH.findall(_step(2)))
    for row in _table.LISTENERS:
        if row.attach is None:  # set as torch config by the recording
            assert row.option and f".{row.option}" in (COMPILER / "listen/_capture.py").read_text(), row
            assert {"compiler/listen/_capture.py", "compiler/listen/_torchfusion.py"} <= named
            continue
        used = inspect.getclosurevars(row.attach)
        found = {*used.globals.values(), *used.nonlocals.values()}
        classes = {v for v in found if inspect.isclass(v) and v.__module__.startswith("compiler.listen")}
        files = {_rel(inspect.getsourcefile(row.attach))} | {_rel(inspect.getsourcefile(c)) for c in classes}
        assert files <= named, (row.name, files - named)
