"""MkDocs hook: the pages made from the code (`make docs`, mkdocs.yml).

- the site's home page is README.md and its contributing page CONTRIBUTING.md, their links
  taken from the repository's root to the site's;
- the API pages: one ``:::`` entry (mkdocstrings) per name of ``__all__`` of ``compiler``,
  ``compiler.types``, ``compiler.analysis`` and ``explorer``, at the module that defines it;
  a value that is not a class or function is one row of its page's table of values;
- the report's fields: every dataclass a ``Report`` holds, read off the types
  (``dataclasses.fields``, the comment on each field's line);
- the views: the rows of ``explorer.views._registry.VIEWS``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import sys
import types
import typing
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

API = {
    "api/compiler.md": "compiler",
    "api/types.md": "compiler.types",
    "api/analysis.md": "compiler.analysis",
    "api/explorer.md": "explorer",
}


def _from_root(text: str) -> str:
    """A page written at the repository's root, with links as the site has them."""
    text = re.sub(r"\]\(docs/", "](", text)
    return text.replace("](CONTRIBUTING.md", "](contributing.md")


def _api_page(module_name: str) -> str:
    module = importlib.import_module(module_name)
    head = (module.__doc__ or "").strip()
    entries, values = [], []
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, (type, types.FunctionType)) and obj.__module__.startswith(
            ("compiler", "explorer")
        ):
            entries.append(f"::: {obj.__module__}.{obj.__qualname__}\n    options:\n      heading: {name}\n")
        else:
            shown = repr(obj) if len(repr(obj)) <= 60 else type(obj).__name__
            values.append(f"| `{name}` | `{shown}` |")
    out = [f"# `{module_name}`\n", "```text", head, "```\n"] if head else [f"# `{module_name}`\n"]
    if values:
        out += ["## Values\n", "| name | value |", "|---|---|", *values, ""]
    return "\n".join(out + entries)


def _type_name(tp: typing.Any) -> str:
    text = tp.__name__ if isinstance(tp, type) else str(tp)
    return re.sub(r"\b(?:typing|compiler(?:\.\w+)*)\.", "", text).replace("NoneType", "None")


def _classes(root: type) -> list[type]:
    seen, todo = [], [root]
    while todo:
        cls = todo.pop(0)
        if cls in seen:
            continue
        seen.append(cls)
        for tp in typing.get_type_hints(cls).values():
            stack = [tp]
            while stack:
                t = stack.pop()
                if dataclasses.is_dataclass(t) and isinstance(t, type):
                    todo.append(t)
                stack.extend(typing.get_args(t))
    return seen


def _schema_page() -> str:
    from compiler import Report
    from compiler.types import SCHEMA_VERSION

    out = [
        "# The report's fields\n",
        f"Made from the types themselves (schema_version {SCHEMA_VERSION}): every frozen dataclass a "
        "`Report` holds, each field with its type, its default and the comment on its line. "
        "The JSON form, its file form and its limits: [the report schema](../report-schema.md).\n",
    ]
    for cls in _classes(Report):
        src = inspect.getsource(cls)
        notes = dict(re.findall(r"^\s+(\w+): [^\n#]*#\s*(.*)$", src, re.M))
        hints = typing.get_type_hints(cls)
        out += [f"## `{cls.__name__}`\n", "| field | type | default | note |", "|---|---|---|---|"]
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                default = f"`{f.default!r}`"
            elif f.default_factory is not dataclasses.MISSING:
                default = f"`{f.default_factory()!r}`"
            else:
                default = ""
            note = notes.get(f.name, "").replace("|", "\\|")
            out.append(
                f"| `{f.name}` | `{_type_name(hints[f.name])}` | {default} | {note} |".replace("`|", "`\\|")
            )
        out.append("")
    return "\n".join(out)


def _views_page() -> str:
    from explorer.views._registry import VIEWS

    out = [
        "# The views\n",
        "Made from `VIEWS` (`explorer/views/_registry.py`), the one list the CLI's `--view`, "
        "`explorer.text`, the static page and the notebook's tabs are made from. A view's name is "
        "what `pt2-explorer report R --view NAME` and `explorer.text(report, NAME)` take.\n",
        "| view | what it shows | where |",
        "|---|---|---|",
    ]
    for v in VIEWS:
        where = ["text"]
        if v.header:
            where.append("the header above the tabs")
        elif v.tab is not None:
            where.append("a tab" + (" (a widget in the notebook)" if v.widget else ""))
        out.append(f"| `{v.name}` | {v.help} | {', '.join(where)} |")
    return "\n".join(out) + "\n"


def on_files(files, config):
    pages = {
        "index.md": _from_root((ROOT / "README.md").read_text(encoding="utf-8")),
        "contributing.md": _from_root((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")),
        "reference/schema.md": _schema_page(),
        "reference/views.md": _views_page(),
        **{path: _api_page(name) for path, name in API.items()},
    }
    for path, content in pages.items():
        files.append(File.generated(config, path, content=content))
    return files


def on_page_markdown(markdown, page, config, files):
    # a docs page links CONTRIBUTING.md where the repository has it; the site has it beside
    return markdown.replace("](../CONTRIBUTING.md", "](contributing.md")
