"""The shape of the code (docs/architecture.md): compiler/'s and explorer/'s layers import only
downwards (import-linter's contracts in pyproject.toml, no exception listed), explorer/ in folders
by role with a small top, no import circle anywhere in
compiler/ or explorer/ (grimp's import graph, imports inside functions and TYPE_CHECKING
blocks included), explorer uses compiler's public names only (``compiler``, ``compiler.types``,
``compiler.analysis``), the face stays small, and each public name is where its docs name it."""

from __future__ import annotations

import ast
import importlib
import re
import sys
import types
from pathlib import Path

import grimp
import pytest

import compiler
import compiler._viewer
import compiler.analysis
import compiler.types

ROOT = Path(__file__).resolve().parent.parent


def test_the_layer_contracts_hold():
    import subprocess

    lint = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run([str(lint), "--no-cache"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "BROKEN" not in out.stdout and out.stdout.count("KEPT") >= 4
    assert "compiler's layers are its own" in out.stdout  # explorer imports compiler's three modules only
    assert "ignore_imports" not in (ROOT / "pyproject.toml").read_text()  # no exception listed


def test_both_packages_have_a_layer_contract_over_every_folder():
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    for package in ("compiler", "explorer"):
        (layers,) = [c["layers"] for c in contracts if c["type"] == "layers" and c["containers"] == [package]]
        named = {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}
        folders = {d.name for d in (ROOT / package).iterdir() if (d / "__init__.py").exists()}
        assert folders <= named, f"{package}: folders in no layer: {sorted(folders - named)}"


def test_the_view_model_imports_only_base_and_compiler():
    # explorer/model/ is pure (docs/architecture.md): its contract forbids every other folder
    # of explorer/, so a new folder is forbidden to it the day it is made, and the UI libraries
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (forbidden,) = [
        c["forbidden_modules"] for c in contracts if c.get("source_modules") == ["explorer.model"]
    ]
    folders = {d.name for d in (ROOT / "explorer").iterdir() if (d / "__init__.py").exists()}
    assert {f"explorer.{name}" for name in folders - {"model", "base"}} <= set(forbidden)
    assert {"rich", "IPython", "ipywidgets", "plotly"} <= set(forbidden)
    graph = grimp.build_graph("explorer", "compiler", include_external_packages=True)
    imported = {
        target.split(".")[0] if not target.startswith("explorer.") else ".".join(target.split(".")[:2])
        for module in graph.find_descendants("explorer.model")
        for target in graph.find_modules_directly_imported_by(module)
    }
    assert imported - set(sys.stdlib_module_names) == {"explorer.model", "explorer.base", "compiler"}


def test_explorer_keeps_a_small_top():
    # explorer/ is in folders by role (docs/architecture.md); its top holds the package's face
    top = sorted(p.name for p in (ROOT / "explorer").glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "_pytestplugin.py"]  # the last: the pytest11 entry point


def test_no_explorer_folder_takes_a_public_name():
    # importing explorer/diffs/ binds the attribute `explorer.diffs`: a folder named `diff` would
    # replace the function `explorer.diff` once anything imported it
    import explorer

    folders = {d.name for d in (ROOT / "explorer").iterdir() if (d / "__init__.py").exists()}
    assert folders & set(explorer.__all__) == set()
    import explorer.diffs._diff
    import explorer.repros._compile  # noqa: F401

    assert callable(explorer.diff) and callable(explorer.repro)


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_circle_in_compiler_or_explorer():
    graph = grimp.build_graph("compiler", "explorer", cache_dir=None)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path, monkeypatch):
    pkg = tmp_path / "circled"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n")
    (pkg / "c.py").write_text("from . import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles(grimp.build_graph("circled", cache_dir=None)) == [["circled.a", "circled.b"]]


# compiler's three public modules (docs/api/index.md: the public surface): everything else
# in compiler/ is its own (import-linter's protected contract in pyproject.toml)
PUBLIC = {"compiler": compiler, "compiler.types": compiler.types, "compiler.analysis": compiler.analysis}
# and what explorer alone reads besides (no user's name: undocumented, import-linter's protected
# contract "compiler._viewer is explorer's")
VIEWER = {"compiler._viewer": compiler._viewer}


def _public_module(dotted: str) -> str | None:
    """The public module a dotted name begins with (``compiler.types.Graph`` -> compiler.types)."""
    for module in sorted(PUBLIC, key=len, reverse=True):
        if dotted == module or dotted.startswith(module + "."):
            return module
    return None


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _compiler_imports(path: Path) -> list[str]:
    """Every use of compiler by ``path`` other than its three public modules' ``__all__``: an
    import of another compiler module, a name a public module does not export (imported, or
    read as ``compiler.NAME`` / ``compiler.types.NAME``), a module named in a string."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "compiler"
        ):
            known = {**PUBLIC, **VIEWER}
            if node.module not in known:
                bad.append(f"{where}: from {node.module} import …")
                continue
            public = known[node.module].__all__
            names = [a.name for a in node.names]
            bad += [
                f"{where}: {node.module}.{n}"
                for n in names
                if n not in public and f"{node.module}.{n}" not in PUBLIC
            ]
        elif isinstance(node, ast.Import):
            bad += [
                f"{where}: import {a.name}"
                for a in node.names
                if a.name.startswith("compiler.") and a.name not in PUBLIC
            ]
        elif isinstance(node, ast.Attribute) and not node.attr.startswith("__"):
            dotted = _dotted(node)
            if dotted is None or dotted.split(".")[0] not in ("compiler", "_compiler"):
                continue
            dotted = dotted.removeprefix("_")
            module, _, name = dotted.rpartition(".")
            if module in PUBLIC and dotted not in PUBLIC and name not in PUBLIC[module].__all__:
                bad.append(f"{where}: {dotted}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.fullmatch(r"compiler(\.\w+)+", node.value) and _public_module(node.value) == "compiler":
                bad.append(f"{where}: {node.value!r}")  # importlib, sys.modules
    return sorted(bad, key=lambda b: int(b.split(":")[1]))  # in line order


def test_explorer_uses_compilers_public_names_only():
    bad = [b for p in sorted((ROOT / "explorer").rglob("*.py")) for b in _compiler_imports(p)]
    assert bad == []


def test_the_public_check_sees_a_private_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from compiler.model._report import Report\nimport compiler\ncompiler._x\n"
        "import sys\nsys.modules.get('compiler.bench._modes')\n"
        "from compiler import verdict, Report\nfrom compiler.types import Graph, load\n"
        "compiler.Graph\ncompiler.types.Graph\ncompiler.analysis.Graph\ncompiler.model._report\n"
        "import compiler.analysis\nfrom compiler import types\n"
    )
    assert _compiler_imports(bad) == [
        "bad.py:1: from compiler.model._report import …",
        "bad.py:3: compiler._x",
        "bad.py:5: 'compiler.bench._modes'",
        "bad.py:6: compiler.verdict",
        "bad.py:7: compiler.types.load",
        "bad.py:8: compiler.Graph",
        "bad.py:10: compiler.analysis.Graph",
        "bad.py:11: compiler.model",
    ]


def test_the_public_face_is_small_and_each_name_has_one_home():
    names = [name for module in PUBLIC.values() for name in module.__all__]
    assert len(compiler.__all__) <= 40
    # the three public modules together, at most 110: the records of compiler.types, the verbs of
    # compiler and the analyses a user calls (those the README, docs and notebooks use); what
    # explorer alone reads (advise's runner, the fill's preamble and reasons, a remembered call,
    # files read and written) is compiler._viewer's, and a fact the views read again from
    # torch's text is a field the build stores
    assert len(names) <= 110
    # explorer's own readers are no public name, and no public module exports one of them
    assert set(compiler._viewer.__all__).isdisjoint(names)
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
    # compiler gives its own names only: a record or an analysis is not also compiler.NAME
    given = {
        n for n, v in vars(compiler).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)
    }
    assert given - set(compiler.__all__) == set()
    for name in compiler.types.__all__ + compiler.analysis.__all__:
        assert not hasattr(compiler, name), name


def test_every_public_name_resolves_and_is_documented():
    for layer in ("model", "parse", "assemble", "why", "read", "listen", "bench"):
        importlib.import_module(f"compiler.{layer}")
    docs = "".join(
        p.read_text() for p in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")]
    )
    undocumented = []
    for module_name, module in PUBLIC.items():
        for name in module.__all__:
            if name in ("Recording", "ModeComparison", "ModeRow", "StateMutationError"):
                assert name in docs, name
            value = getattr(module, name)  # torch is installed here: the lazy names import
            # a layer's folder must not take a public name (compiler.record is a function)
            assert not isinstance(value, types.ModuleType), name
            if f"`{name}" not in docs and f"{name}(" not in docs and f"{module_name}.{name}" not in docs:
                undocumented.append(name)
    assert undocumented == []


def test_the_public_modules_are_listed_in_the_api_doc():
    # the API page's public surface (docs/api/index.md) has a section for each of compiler's
    # three modules and one for explorer's own face, each naming every name of the module's __all__
    import explorer

    doc = (ROOT / "docs" / "api" / "index.md").read_text()
    surface = doc[doc.index("## The public surface") :].split("\n## ")[0]
    sections = {part.split("`")[1]: part for part in surface.split("\n### ")[1:]}
    assert sorted(sections) == ["compiler", "compiler.analysis", "compiler.types", "explorer"]
    for module_name, module in {**PUBLIC, "explorer": explorer}.items():
        missing = [n for n in module.__all__ if f"`{n}" not in sections[module_name]]
        assert missing == [], (module_name, missing)


@pytest.mark.parametrize("layer", ["model", "parse", "why", "read"])
def test_reading_layers_import_no_torch(layer, tmp_path):
    # a fresh interpreter where torch cannot be imported reads through these layers
    import subprocess

    code = (
        "import sys; sys.modules['torch'] = None\n"
        f"import compiler.{layer}, pkgutil, importlib\n"
        f"for m in pkgutil.iter_modules(compiler.{layer}.__path__):\n"
        f"    importlib.import_module('compiler.{layer}.' + m.name)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout == "ok\n", out.stderr


def test_no_package_folder_has_an_output_name():
    # tools that treat build/, dist/ or out/ as output skip such a folder, and GitHub's Python
    # .gitignore ignores build/ and dist/ at any depth: a layer named so vanishes from a checkout.
    # A folder counts where it holds Python files (a renamed layer's old folder may linger in a
    # checkout with only its __pycache__).
    output_names = {"build", "dist", "out"}
    found = [
        str(d.relative_to(ROOT))
        for package in ("compiler", "explorer")
        for d in (ROOT / package).rglob("*")
        if d.is_dir() and d.name in output_names and any(d.glob("*.py"))
    ]
    assert found == []


# ---- torch's text is parsed in compiler/parse/ only -----------------------------------------

# The regular expressions outside compiler/parse/, and only those: each reads text that is not
# torch's (ours, the user's, Python's or IPython's, a file path), never a text torch wrote. Keyed
# "path:top-level name" (the constant, function or class whose body calls ``re``), with what it
# reads. A reader of torch's text is not listed here: it belongs in compiler/parse/, and there is
# no list of those "not moved yet".
OWN_TEXT = {
    "compiler/model/_paths.py:_TORCH_PATH": "a file path: torch's own files",
    "compiler/model/_paths.py:_LIBRARY_PATH": "a file path: installed packages, the standard library",
    "compiler/model/_surrogates.py:_LONE": "any string the report holds: a lone surrogate",
    "compiler/model/_surrogates.py:_ESCAPE_TEXT": "our report's JSON text: a surrogate's escape",
    "compiler/model/_surrogates.py:_ESCAPE_BYTES": "our report's JSON bytes: a surrogate's escape",
    "explorer/notebook/_celltb.py:_CELL_FUNCTION_HEADER": "IPython's traceback line of our cell function",
    "explorer/diffs/_view.py:_TOKEN": "any text's words, for a word diff",
    "explorer/graph/_data.py:_COLOR": "our own colours",
    "explorer/lower/_html.py:_cell_html": "our own table cell's list of lines",
    "explorer/notebook/_magic.py:_MAGIC_LINE": "the user's cell: a %%compile line",
    "compiler/why/_fixes.py:LOGGING_CODE": "our own fix code: the logging break's, read back for advise's fix",
    "explorer/pages/_modes.py:_slug": "our own row label, as an HTML id",
    "compiler/why/_compilefix.py:_NUMBERED": "our own module path (parse/_modules.py's): its numbered blocks",
    "explorer/base/_paths.py:_MACHINERY": "a file path: IPython's and the kernel's files",
    "explorer/repros/_compile.py:_TOKEN": "a value we write into a comment line (escaped unless a plain word)",
    "explorer/base/_words.py:_INSTALLED": "a file path: installed packages",
    "explorer/lower/_terminal.py:_CONTROL": "any text we print: control characters escaped",
    "explorer/census/_files.py:_TOKEN": "our census files' JSON",
    "explorer/census/_files.py:_SURROGATE": "our census files' strings: a lone surrogate",
    "explorer/lower/_fit.py:_FIGURE": "our own text: a figure and its unit, kept together where a line wraps",
    "explorer/lower/_fit.py:PLACE": "our own text: a place (file:line) kept whole where a cell or a line is cut",
    "explorer/lower/_fit.py:cut_words": "our own table cells: their words, each cut to its column",
    "compiler/model/_progress.py:_COUNT": "our own progress lines: their figures (a step's lines alike)",
    "explorer/lower/_html.py:_NUMBER": "our own table cells: a figure",
    "explorer/views/_compiles.py:_names": "our own block titles: a kernel's name in them",
}
# Readers of torch's text that sit below parse/ on purpose: a report's file form stores each
# graph as the FX code torch printed and reads its nodes again from that code when a report is
# loaded, so the FX-code reader is in the file form's layer (model/), where nothing above has to
# wire it in at run time. Likewise torch's WON'T CONVERT header: reports written before the
# fold keep the warning as a break of its own, folded when such a report is loaded. And the name
# Dynamo gives a resumed frame's code (torch_dynamo_resume_in_<fn>_at_<line>): a report written
# before frames' callers came from the break stacks finds each frame's function when it loads.
# And what the names of torch's timed phases say (an attempt, a hook, a pass): stored by the
# build, read for a report written before when it loads; so are a CUDA-graph skip reason's first
# line and the count of sizes torch's CUDA-graph warning gives, and the extern calls of Inductor's
# wrapper code, and a recompile reason's short form; and where the kernel's function is in each
# Triton IR (stored when recorded, read for an older report when it loads). And the guard tree:
# the record reads its own guards when first asked (``Capture.guard_list``), not stored, as the
# list would repeat the tree's text.
FILE_FORM_READERS = {
    "compiler/model/_fxcode.py",
    "compiler/model/_skipwarn.py",
    "compiler/model/_callsites.py",
    "compiler/model/_phasenames.py",
    "compiler/model/_cgfacts.py",
    "compiler/model/_externcalls.py",
    "compiler/model/_reasons.py",
    "compiler/model/_irbounds.py",
    "compiler/model/_guards.py",
}


def _regex_sites(root: Path) -> dict[str, int]:
    """Each ``re.<function>(...)`` call (``re.escape`` aside) in compiler/ and explorer/
    outside compiler/parse/, counted by file and top-level name."""
    out: dict[str, int] = {}
    for package in ("compiler", "explorer"):
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith("compiler/parse/") or rel in FILE_FORM_READERS:
                continue
            for top in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = top.name
                elif isinstance(top, (ast.Assign, ast.AnnAssign)):
                    target = top.targets[0] if isinstance(top, ast.Assign) else top.target
                    name = ast.unparse(target)
                else:
                    name = "<module>"
                for n in ast.walk(top):
                    f = n.func if isinstance(n, ast.Call) else None
                    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "re":
                        if f.attr != "escape":
                            out[f"{rel}:{name}"] = out.get(f"{rel}:{name}", 0) + 1
    return out


def test_torch_text_is_parsed_in_parse_only():
    sites = _regex_sites(ROOT)
    unexplained = sorted(set(sites) - set(OWN_TEXT))
    assert unexplained == [], (
        "a regex outside compiler/parse/: over torch's text, move it there; else list what it reads"
    )
    stale = sorted(set(OWN_TEXT) - set(sites))
    assert stale == [], "listed, but no regex there any more: take it off the list"
    # no module imports re's names directly (which the scan would not see)
    for package in ("compiler", "explorer"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module in ("re", "regex"):
                    raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import")


def test_the_regex_scan_sees_each_call(tmp_path):
    (tmp_path / "compiler" / "parse").mkdir(parents=True)
    (tmp_path / "explorer").mkdir()
    (tmp_path / "compiler" / "parse" / "_p.py").write_text("import re\nX = re.compile('a')\n")
    (tmp_path / "compiler" / "_m.py").write_text(
        "import re\n_A = re.compile('a')\n\n\ndef f(s):\n    return re.sub('b', '', re.escape(s)) or re.match('c', s)\n"
    )
    (tmp_path / "explorer" / "_v.py").write_text(
        "import re\n\n\nclass V:\n    def g(self, s):\n        return re.findall('d', s)\n"
    )
    assert _regex_sites(tmp_path) == {"compiler/_m.py:_A": 1, "compiler/_m.py:f": 2, "explorer/_v.py:V": 1}


# ---- sibling modules share public names -------------------------------------------------------

# A module's underscored names are its own: no module of compiler/ or explorer/ takes one from
# another, by ``from ._a import _x`` or as ``_a._x`` of a module it imported (33 such names in
# compiler/ two rounds ago, 18 a round ago, none now). A name a sibling needs is public within
# its package (the package is underscored), or the two modules are one.


def _private_imports(root: Path) -> list[str]:
    out = []
    for package in ("compiler", "explorer"):
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            modules: set[str] = set()  # our modules it imported, by the name it binds
            for node in ast.walk(tree):
                if not (isinstance(node, ast.ImportFrom) and node.level):
                    continue
                base = path.parents[node.level - 1]
                source = base.joinpath(*node.module.split(".")) if node.module else base
                for a in node.names:
                    if (source / f"{a.name}.py").exists() or (source / a.name).is_dir():
                        modules.add(a.asname or a.name)  # a module: its name says it is the package's own
                    elif a.name.startswith("_") and not a.name.startswith("__"):
                        out.append(f"{rel}: {a.name} from {'.' * node.level}{node.module or ''}")
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in modules
                    and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                ):
                    out.append(f"{rel}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


def test_no_private_name_crosses_a_module():
    assert _private_imports(ROOT) == []


def test_the_private_name_scan_sees_names_not_modules(tmp_path):
    (tmp_path / "compiler" / "p").mkdir(parents=True)
    (tmp_path / "explorer").mkdir()
    (tmp_path / "compiler" / "p" / "_a.py").write_text("_X = 1\n")
    (tmp_path / "compiler" / "p" / "_b.py").write_text(
        "from . import _a\nfrom ._a import _X, Y\nfrom ..p._a import _Z\n\nW = _a._X + _a.Y + _a.__name__\n"
    )
    (tmp_path / "explorer" / "_c.py").write_text("from ._d import _e\n")
    assert _private_imports(tmp_path) == [
        "compiler/p/_b.py: _X from ._a",
        "compiler/p/_b.py: _Z from ..p._a",
        "compiler/p/_b.py:5: _a._X",
        "explorer/_c.py: _e from ._d",
    ]


def _state_keyed_by_id(root: Path) -> list[str]:
    """Where a module of compiler/ or explorer/ keeps state at its top level keyed by ``id()``:
    a module-level name read or written with an ``id(...)`` key (``_SEEN[id(x)] = ...``,
    ``_SEEN.get(id(x))``, ``id(x) in _SEEN``). An id is reused once its object is gone, and
    such a dict slips past the ban on ``global``: state belongs to an object, with a bound."""
    out = []
    for package in ("compiler", "explorer"):
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = {
                t.id
                for node in tree.body
                for t in (node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)])
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(t, ast.Name)
            }

            def is_id(x) -> bool:
                return isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == "id"

            for node in ast.walk(tree):
                hit = None
                if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and is_id(node.slice):
                    hit = node.value.id
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.args
                    and is_id(node.args[0])
                ):
                    hit = node.func.value.id
                elif (
                    isinstance(node, ast.Compare)
                    and is_id(node.left)
                    and isinstance(node.comparators[0], ast.Name)
                ):
                    hit = node.comparators[0].id
                if hit in names:
                    out.append(f"{path.relative_to(root).as_posix()}:{node.lineno}: {hit}")
    return sorted(out)


def test_no_module_level_state_is_keyed_by_id():
    assert _state_keyed_by_id(ROOT) == []


def test_the_id_state_scan_sees_each_use(tmp_path):
    (tmp_path / "compiler").mkdir()
    (tmp_path / "explorer").mkdir()
    (tmp_path / "compiler" / "_a.py").write_text(
        "_SEEN: dict[int, int] = {}\n_ALSO = {}\n\n\ndef f(x, local):\n"
        "    _SEEN[id(x)] = 1\n    local[id(x)] = 2\n    return _ALSO.get(id(x)), id(x) in _SEEN\n"
    )
    (tmp_path / "explorer" / "_b.py").write_text(
        "class C:\n    def __init__(self):\n        self.seen = {}\n\n"
        "    def f(self, x):\n        self.seen[id(x)] = 1\n"
    )
    assert _state_keyed_by_id(tmp_path) == [
        "compiler/_a.py:6: _SEEN",
        "compiler/_a.py:8: _ALSO",
        "compiler/_a.py:8: _SEEN",
    ]


def test_no_frozen_record_is_changed_after_it_is_made():
    # no object.__setattr__ on a record outside its construction: a graph's file-form fields
    # and a report's remembered subject are kept beside it; a report's one open field,
    # benchmarks, is assigned as any attribute is
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for package in ("compiler", "explorer")
        for path in sorted((ROOT / package).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr == "__setattr__"
        and isinstance(node.value, ast.Name)
        and node.value.id == "object"
    ]
    assert found == []


# ---- nothing is wired at run time ---------------------------------------------------------------


def _run_time_wiring(root: Path) -> list[str]:
    """Where a module of compiler/ sets a name that another module reads as its own: a
    ``global`` statement (a hook a setter fills in), or an assignment to an attribute of a name
    imported from compiler/ itself (``Report.benchmark = f``, ``_report._HOOK = f``)."""
    out = []
    for path in sorted((root / "compiler").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            (a.asname or a.name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level
            for a in node.names
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                out.append(f"{rel}:{node.lineno}: global {', '.join(node.names)}")
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for t in targets if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) else ():
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in imported:
                    out.append(f"{rel}:{node.lineno}: {ast.unparse(t)} =")
    return out


def _imports_of_the_face(root: Path) -> list[str]:
    """Where a module inside compiler/'s layers imports the package's face (``import compiler``,
    ``from compiler import ...``, ``from .. import x`` at the top): an up arrow past every layer."""
    out = []
    for path in sorted((root / "compiler").glob("*/*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.split(".")[0] == "compiler"]
                out += [f"{rel}:{node.lineno}: import {n}" for n in names if n.count(".") < 2]
            elif isinstance(node, ast.ImportFrom):
                absolute = node.level == 0 and node.module in (
                    "compiler",
                    "compiler.types",
                    "compiler.analysis",
                )
                if absolute or (node.level == 2 and node.module in (None, "types", "analysis")):
                    out.append(f"{rel}:{node.lineno}: from {'.' * node.level}{node.module or ''} import")
    return out


def test_no_layer_of_compiler_imports_its_face():
    # compiler/__init__.py, types.py and analysis.py gather the layers for users and explorer;
    # a layer that imported them would reach every layer above its own
    assert _imports_of_the_face(ROOT) == []


def test_an_import_of_the_face_is_found(tmp_path):
    (tmp_path / "compiler" / "bench").mkdir(parents=True)
    (tmp_path / "compiler" / "bench" / "_b.py").write_text(
        "def f():\n    import compiler\n    from .. import analysis\n    from ..listen import _torch\n"
    )
    assert _imports_of_the_face(tmp_path) == [
        "compiler/bench/_b.py:2: import compiler",
        "compiler/bench/_b.py:3: from .. import",
    ]


def test_nothing_in_compiler_is_wired_at_run_time():
    # the model never calls up into bench: a benchmark is compiler.benchmark(report, ...),
    # a verb of bench that appends to report.benchmarks (openly mutable), and compiler.fill
    # returns a new report; import-linter's layers contract keeps the imports, this the hooks
    assert _run_time_wiring(ROOT) == []
    assert not hasattr(compiler.Report, "benchmark") and not hasattr(compiler.Report, "fill")
    assert compiler.benchmark.__module__ == "compiler.bench._bench"
    assert compiler.fill.__module__ == "compiler.bench._fill"


def test_the_wiring_scan_sees_a_hook(tmp_path):
    (tmp_path / "compiler" / "model").mkdir(parents=True)
    (tmp_path / "compiler" / "model" / "_r.py").write_text(
        "_RUN = None\n\n\ndef use(run):\n    global _RUN\n    _RUN = run\n"
    )
    (tmp_path / "compiler" / "__init__.py").write_text(
        "from .model._r import Report\nfrom .model import _r\n\nReport.benchmark = print\n_r._RUN = print\n"
    )
    (tmp_path / "compiler" / "_own.py").write_text("def f():\n    pass\n\n\nf.__signature__ = None\n")
    assert _run_time_wiring(tmp_path) == [
        "compiler/__init__.py:4: Report.benchmark =",
        "compiler/__init__.py:5: _r._RUN =",
        "compiler/model/_r.py:5: global _RUN",
    ]


# ---- modules stay at 400 lines or fewer ---------------------------------------------------------


def test_the_size_step_of_make_lint_fails_above_400_lines(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import sizes
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    lint = (ROOT / "Makefile").read_text().split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "\t@$(BIN)/python benchmarks/sizes.py" in lint  # run by make lint, its status kept
    assert sizes.main([]) == 0, capsys.readouterr().err
    (tmp_path / "compiler").mkdir()
    (tmp_path / "explorer").mkdir()
    (tmp_path / "compiler" / "_big.py").write_text("x = 1\n" * 401)
    (tmp_path / "explorer" / "_ok.py").write_text("x = 1\n" * 400)
    (tmp_path / "extension" / "src" / "graph").mkdir(parents=True)
    (tmp_path / "extension" / "src" / "graph" / "view.ts").write_text("let x = 1;\n" * 402)
    (tmp_path / "extension" / "test").mkdir()
    (tmp_path / "extension" / "test" / "graph.test.ts").write_text("let x = 1;\n" * 500)  # a test, no module
    monkeypatch.setattr(sizes, "ROOT", tmp_path)
    capsys.readouterr()
    assert sizes.main(["2"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "module sizes: 3 modules, 1203 lines; 2 over 400 lines; the largest:",
        "    402  extension/src/graph/view.ts",
        "    401  compiler/_big.py",
    ]
    assert err.splitlines() == [
        "extension/src/graph/view.ts: 402 lines, over 400: split it by role (CONTRIBUTING.md)",
        "compiler/_big.py: 401 lines, over 400: split it by role (CONTRIBUTING.md)",
    ]
