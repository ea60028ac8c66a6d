"""What the CLI writes and says: the report's files (each whole or not at all), a refusal to
write over its own input, and errors as one line on stderr."""

from __future__ import annotations

import os
import sys

from explorer.run import _program


def write_all(ns, report, title: str, written: list[str] | None = None) -> tuple[list[str], bool]:
    """Write --json and --html (each whole or not at all); a failure is one error line.
    Returns the paths written (``written``, each added as it is written), and whether every
    one asked for was."""
    written = [] if written is None else written
    if ns.json and saving(ns.json, lambda: report.to_json(ns.json), shown(ns, ns.json)):
        written.append(ns.json)
    if ns.html and saving(ns.html, lambda: save_html(report, ns.html, title), shown(ns, ns.html)):
        written.append(ns.html)
    return written, len(written) == bool(ns.json) + bool(ns.html)


def shown(ns, path: str) -> str:
    """An output's path as the user gave it (``record`` made it absolute before the program ran)."""
    return getattr(ns, "given", {}).get(path, path)


def saving(path: str, write, name: str | None = None) -> bool:
    """Run ``write`` (which writes ``path``) after making its directory; an OSError is one line
    `pt2-explorer: error: cannot write PATH: REASON` on stderr (PATH: ``name``, where given)
    and False."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        write()
        return True
    except OSError as e:
        reason = e.strerror or str(e)
        if e.filename and os.path.abspath(os.fspath(e.filename)) != os.path.abspath(path):
            reason += f": {os.fspath(e.filename)}"  # a directory of the path: the file in the way
        say(f"pt2-explorer: error: cannot write {name or path}: {reason}")
        return False


def save_html(report, path: str, title: str) -> None:
    from explorer.pages._faces import save_html

    save_html(report, path, title=title)


def same_file(a: str, b: str) -> bool:
    """Both name one existing file (through links, relative paths, hard links)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one does not exist (an output not written yet)
        return False


def same_path(a: str, b: str) -> bool:
    """``a`` and ``b`` name one file, existing (``same_file``) or not yet (the same path once
    links and ``..`` are resolved)."""
    return same_file(a, b) or os.path.realpath(a) == os.path.realpath(b)


def refused_output(outputs: list[tuple[str, str]], inputs: list[tuple[str, str]]) -> str | None:
    """The usage error where an output (``("--json", path)``) would replace an input
    (``("script", path)``) or another output: writing would destroy the one or keep only the
    last. None where every output is a file of its own."""
    for i, (opt, out) in enumerate(outputs):
        for what, given in inputs:
            if given and same_file(out, given):
                return f"{opt} {out} is the {what} itself: refusing to overwrite it"
        for other, path in outputs[:i]:
            if same_path(out, path):
                return f"{other} {path} and {opt} {out} are one file: refusing to write it twice"
    return None


def output_is_input(ns) -> str | None:
    """The usage error where --json / --html / -o name an input (the script, the ``-m``
    module's file, the trace, the report) or name one file twice. Under torchrun each rank
    writes its own name."""
    from compiler._viewer import rank_path

    source = {
        "record": "script",
        "check": "script",
        "load": "trace",
        "report": "report",
        "repro": "report",
    }.get(ns.command)
    if source is None:  # writes nothing
        return None
    inputs = [(source, getattr(ns, source, None))]
    if ns.command in ("record", "check") and ns.module:
        inputs.append((f"module {ns.module}", _program.module_file(ns.module)))
    rank = _program.torchrun_rank()[0] if ns.command in ("record", "check") else None
    outputs = []
    for opt in ("json", "html", "out"):
        out = getattr(ns, opt, None)
        if out and rank is not None:
            out = rank_path(out, rank)
        if out:
            outputs.append((f"--{opt}", out))
    return refused_output(outputs, inputs)


def warned(read):
    """``read()``, each warning it gives (a report's or a log's strings that were no text, events
    not as torch wrote them) said as one line: ``pt2-explorer: warning: …``."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return read()
        finally:
            for w in caught:
                say(f"pt2-explorer: warning: {' '.join(str(w.message).splitlines())}")


def error(e: Exception) -> int:
    """A file that cannot be read: one line on stderr, exit status 2, no traceback."""
    msg = f"{e.filename}: {e.strerror}" if isinstance(e, OSError) and e.filename and e.strerror else str(e)
    say(f"pt2-explorer: error: {' '.join(msg.splitlines())}")
    return 2


def say(line: str) -> None:
    """One line on stderr, its control characters escaped (it may quote a report or a trace)."""
    from explorer.lower._terminal import printable

    print(printable(line), file=sys.stderr)
