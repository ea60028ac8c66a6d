"""What the CLI writes and says: the report's files (each whole or not at all), a refusal to
write over its own input, and errors as one line on stderr."""

from __future__ import annotations

import os
import sys

from explorer import _program


def write_all(ns, report, title: str) -> tuple[list[str], bool]:
    """Write --json and --html (each whole or not at all); a failure is one error line.
    Returns the paths written, and whether every one asked for was."""
    written = []
    if ns.json and saving(ns.json, lambda: report.to_json(ns.json)):
        written.append(ns.json)
    if ns.html and saving(ns.html, lambda: save_html(report, ns.html, title)):
        written.append(ns.html)
    return written, len(written) == bool(ns.json) + bool(ns.html)


def saving(path: str, write) -> bool:
    """Run ``write`` (which writes ``path``) after making its directory; an OSError is one line
    `pt2-explorer: error: cannot write PATH: REASON` on stderr and False."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        write()
        return True
    except OSError as e:
        reason = e.strerror or str(e)
        if e.filename and os.path.abspath(os.fspath(e.filename)) != os.path.abspath(path):
            reason += f": {os.fspath(e.filename)}"  # a directory of the path: the file in the way
        say(f"pt2-explorer: error: cannot write {path}: {reason}")
        return False


def save_html(report, path: str, title: str) -> None:
    from explorer import save_html

    save_html(report, path, title=title)


def same_file(a: str, b: str) -> bool:
    """Both name one existing file (through links, relative paths, hard links)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one does not exist (an output not written yet)
        return False


def output_is_input(ns) -> str | None:
    """The usage error where --json / --html name the input (the script, the trace, the
    report): writing would destroy it. Under torchrun each rank writes its own name."""
    import compiler  # reading and names: no torch

    source = {"record": "script", "load": "trace", "report": "report", "repro": "report"}.get(ns.command)
    if source is None:  # writes nothing
        return None
    given = getattr(ns, source, None)
    rank = _program.torchrun_rank()[0] if ns.command == "record" else None
    for opt in ("json", "html", "out"):
        out = getattr(ns, opt, None)
        if out and rank is not None:
            out = compiler.rank_path(out, rank)
        if out and given and same_file(out, given):
            return f"--{opt} {out} is the {source} itself: refusing to overwrite it"
    return None


def error(e: Exception) -> int:
    """A file that cannot be read: one line on stderr, exit status 2, no traceback."""
    msg = f"{e.filename}: {e.strerror}" if isinstance(e, OSError) and e.filename and e.strerror else str(e)
    say(f"pt2-explorer: error: {' '.join(msg.splitlines())}")
    return 2


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


def say(line: str) -> None:
    """One line on stderr, its control characters escaped (it may quote a report or a trace)."""
    from explorer._summary import printable

    print(printable(line), file=sys.stderr)
