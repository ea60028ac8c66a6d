"""Every view of every report in tests/fixtures, rendered: the text of each view (each compile's
and each stage's view for every compile) and the static HTML page. tests/test_fixture_views.py
holds the digests of these texts as the code before a change rendered them, so that a change
to what the report stores (a fact moved from torch's text to a typed field, filled in for an
older report when it loads) shows the same views, byte for byte.

    python -m tests._fixture_views DIR     # write each text into DIR and print the digests
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
PER_COMPILE = ("compiles", "capture", "autograd", "decompose", "fuse", "codegen")  # and STAGES


def reports() -> Iterator[tuple[str, object]]:
    """Each fixture's name (its path under tests/fixtures) and its report as a reader loads it."""
    import compiler

    for kind in ("reports", "traces"):
        for path in sorted((FIXTURES / kind).iterdir()):
            name = path.relative_to(FIXTURES).as_posix()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if path.is_dir():
                    yield name, compiler.load_ranks(path)
                elif path.name.endswith(".json.gz"):
                    yield name, compiler.load(path)
                elif path.name.endswith(".log.gz"):
                    yield name, compiler.load_trace(path)


def views(report) -> Iterator[tuple[str, str]]:
    """Each view of ``report``: its key (the view, and the compile where it is one compile's)
    and its text."""
    import explorer
    from explorer.views._registry import names

    for view in names():
        yield view, explorer.text(report, view)
        if view in PER_COMPILE or view == "bytecode":
            for c in report.compiles:
                yield f"{view}@{c.id}", explorer.text(report, view, compile=c.id)
    for k in report.kernels:  # a kernel's code, and its Triton IR where recorded
        if any(b.ir for b in k.binaries):
            text = explorer.text(report, "codegen", compile=k.compile_id, kernel=k.name)
            yield f"codegen@{k.compile_id}@{k.name}", text
    yield "html", explorer.html(report)


# where the fixtures were recorded: the checkout whose compiler/ and explorer/ frames the views
# leave out of a stack as the tool's own (compiler/model/_callsites.py, explorer/base/_paths.py),
# wherever this clone is
RECORDED_IN = "/work/main/"


def _portable(text: str, name: str) -> bytes:
    """The text as bytes, the checkout's place left out of the fixture's own path (a trace's
    title names its file). The paths the reports recorded stay as recorded."""
    return text.replace(str(FIXTURES / name), f"tests/fixtures/{name}").encode("utf-8", "surrogatepass")


@contextlib.contextmanager
def _elsewhere() -> Iterator[None]:
    """The views as a clone anywhere renders them: from an empty working directory (views name
    a file under it relative to it) and with the recording checkout's frames as the tool's."""
    from compiler.model import _callsites
    from explorer.base import _paths

    before, own, dirs = os.getcwd(), _callsites._OWN_DIR, _paths.OWN_DIRS
    with tempfile.TemporaryDirectory(prefix="pt2x-views-") as here:
        os.chdir(here)
        _callsites._OWN_DIR = RECORDED_IN + "compiler/"
        _paths.OWN_DIRS = (RECORDED_IN + "explorer/", RECORDED_IN + "compiler/")
        try:
            yield
        finally:
            os.chdir(before)
            _callsites._OWN_DIR, _paths.OWN_DIRS = own, dirs


def rendered() -> Iterator[tuple[str, bytes]]:
    """Each view's key (``fixture::view``) and its portable text."""
    with _elsewhere():
        for name, report in reports():
            for key, text in views(report):
                yield f"{name}::{key}", _portable(text, name)


def digests() -> dict[str, str]:
    return {key: hashlib.sha256(data).hexdigest() for key, data in rendered()}


def main(folder: str) -> int:
    root = Path(folder).resolve()
    out = {}
    for both, data in rendered():
        name, key = both.split("::", 1)
        file = root / name.replace("/", "__") / (key.replace("/", "_") + ".txt")
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
        out[both] = hashlib.sha256(data).hexdigest()
    print(json.dumps(out, indent=0, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
