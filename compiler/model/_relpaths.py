"""A report's paths without the machine that recorded it: a file under the project's root named
relative to it (``/root/proj/train.py`` → ``train.py``), an installed package's as
``site-packages/…`` (``/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py`` →
``site-packages/torch/nn/modules/module.py``), in every text the report holds: a frame's file,
a stack, a graph's code and its nodes' stacks, a kernel's lines, torch's own texts. Other paths
(the standard library) stay as written; Inductor's cache directory (named after the user) is
cut to ``torchinductor/…``, a fill's temporary one to ``pt2x-fill/…``, and this tool's own
files (its runner's frames, from a checkout) are named from its root.

The rewrite runs over the report's file form (``_compact.encode``: every text is a string of
its table or a plain value there) and reads it back, so each text is rewritten once and the
report's derived parts (a graph's nodes parsed from its code) agree with it. A path is found by
its prefix where a path can start (the text's start or after a space, a quote, a bracket…); no
pattern is matched over torch's text (compiler/parse/ holds those)."""

from __future__ import annotations

import os
from typing import Any

_PACKAGES = ("/site-packages/", "/dist-packages/")
_BEFORE = frozenset(" \t\r\n\"'`<>|,;:=()[]{}")  # what may stand before a path in a text


def relative_text(text: str, root: str) -> str:
    """``text`` with each path under ``root`` (an absolute directory) made relative to it and
    each installed package's path cut to ``site-packages/…``."""
    prefix = os.path.join(os.path.abspath(root), "")
    if prefix != "/" and prefix in text:
        text = _cut(text, prefix, len(prefix))
    for mark in _PACKAGES:
        if mark in text:
            text = _packages(text, mark)
    own = os.path.join(_OWN_ROOT, "")
    if own in text and own != prefix:  # this tool's own files, run from a checkout
        text = _cut(text, own, len(own))
    for mark, name in _NAMED_DIRS:
        if mark in text:
            text = _named_dir(text, mark, name)
    return text


# this tool's own root (compiler/ and explorer/ under it): its runner's frames are named from it
_OWN_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# directories named after the user or made at random, each cut to a name of its own: Inductor's
# cache (``/tmp/torchinductor_<user>/``) and a fill's runnables (``/tmp/pt2x-fill-<random>/``)
_NAMED_DIRS = (("/torchinductor_", "torchinductor/"), ("/pt2x-fill-", "pt2x-fill/"))


def _named_dir(text: str, mark: str, name: str) -> str:
    """``text`` with each absolute path through a directory named ``mark<something>`` cut to
    ``name`` and what follows that directory."""
    out, at = [], 0
    while (i := text.find(mark, at)) >= 0:
        start = i
        while start > at and text[start - 1] not in _BEFORE:
            start -= 1
        end = text.find("/", i + len(mark))
        if text[start] != "/" or end < 0 or any(ch in _BEFORE for ch in text[i + len(mark) : end]):
            out.append(text[at : i + len(mark)])
            at = i + len(mark)
            continue
        out.append(text[at:start] + name)
        at = end + 1
    out.append(text[at:])
    return "".join(out)


def _cut(text: str, prefix: str, n: int) -> str:
    """``text`` with ``prefix`` taken out where it starts a path."""
    out, at = [], 0
    while (i := text.find(prefix, at)) >= 0:
        keep = i > 0 and text[i - 1] not in _BEFORE  # inside another path: /x/root/…
        out.append(text[at : i + (n if keep else 0)])
        at = i + n
    out.append(text[at:])
    return "".join(out)


def _packages(text: str, mark: str) -> str:
    """``text`` with each absolute path that runs into ``mark`` cut to ``site-packages/…``."""
    out, at = [], 0
    while (i := text.find(mark, at)) >= 0:
        start = i
        while start > at and text[start - 1] not in _BEFORE:
            start -= 1
        out.append(text[at:start] if text[start] == "/" else text[at : i + 1])
        out.append("site-packages/")
        at = i + len(mark)
    out.append(text[at:])
    return "".join(out)


def _walk(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return relative_text(value, root)
    if isinstance(value, list):
        return [_walk(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, root) for k, v in value.items()}
    return value


def relative_paths(report, root: str | os.PathLike[str]):
    """``report`` (a ``Report``, or a ``ModeComparison`` of them) with its paths relative to
    ``root`` and its installed packages' as ``site-packages/…``: a report to share or ship,
    whose lines still name their files (read from ``root``, as ``read_source`` reads a
    relative name from the working directory)."""
    import dataclasses

    from . import _compact
    from ._modetypes import ModeComparison
    from ._report import from_json

    root = os.fspath(root)
    if isinstance(report, ModeComparison):
        rows = tuple(
            dataclasses.replace(r, report=relative_paths(r.report, root)) if r.report is not None else r
            for r in report.rows
        )
        return dataclasses.replace(report, rows=rows)
    from ._trust import remarked

    form = _walk(_compact.encode(report), root)
    # its runnables' paths are rewritten too: marked again where they were this user's own
    return remarked(report, from_json(form, None, float("inf"), type(report)))
