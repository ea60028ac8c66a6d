"""Every code block of the README, CONTRIBUTING.md and docs/ runs here, or says why not.

A block is one of:

- output: a ```text fence (what a command printed, a diagram);
- run here: a ```console block's ``$ `` commands (each compared with the lines printed under
  it, ``...`` standing for any lines), a ```python block (run as a script in a fresh
  process), a ```json block (parsed); the commands run in a scratch folder that sees the
  repository's examples/, notebooks/ and tests/, with the installed ``pt2-explorer``;
- run elsewhere: ``<!-- run: tests/test_x.py -->`` on the line before it, where that test
  file holds the block's first line;
- not run: ``<!-- not run: why -->`` on the line before it (a notebook cell, a user's own
  script, a command that makes the environment the tests run in).

A block that is none of these fails ``test_every_block_is_run_or_marked``. Blocks that record
(a program compiled in a child process) carry the ``child`` mark; the others take seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)\s*$")
MARK = re.compile(r"^<!-- (?P<kind>not run|run): (?P<what>.+?) -->$")
RUN_HERE = {"console", "python", "json"}
# a command that runs a program (compiles in a child process) rather than reading a file
RECORDS = re.compile(r"\bpt2-explorer (record|check|advise)\b|\bpt2-explorer census --")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    line: int  # the opening fence's, 1-based
    lang: str
    body: str
    mark: tuple[str, str] | None  # ("not run" | "run", what)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, start = m["indent"], i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :])
            i += 1
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        assert i < len(lines), f"{rel}:{start + 1}: a code block with no closing fence"
        before = next((ln.strip() for ln in reversed(lines[:start]) if ln.strip()), "")
        mark = MARK.match(before)
        out.append(
            Block(
                rel,
                start + 1,
                m["lang"],
                "\n".join(body) + "\n",
                (mark["kind"], mark["what"]) if mark else None,
            )
        )
        i += 1
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def _kind(b: Block) -> str:
    if b.mark:
        return b.mark[0]
    if b.lang == "text":
        return "output"
    return "here" if b.lang in RUN_HERE else "unmarked"


def test_every_block_is_run_or_marked():
    unmarked = [f"{b.id} ```{b.lang}" for b in ALL if _kind(b) == "unmarked"]
    assert unmarked == [], "mark each as ```text (output) or <!-- not run: why -->"
    for b in ALL:
        if b.mark and b.mark[0] == "run":  # the test named holds this very block
            test = ROOT / b.mark[1]
            assert test.is_file(), b.id
            assert b.page in test.read_text(encoding="utf-8"), f"{b.id}: {b.mark[1]} does not read {b.page}"
    # the runner sees every block: two fences a block on each page
    for page in PAGES:
        fences = sum(1 for ln in page.read_text(encoding="utf-8").splitlines() if FENCE.match(ln))
        assert fences == 2 * len(blocks(page)), page  # each block opens and closes


def test_the_runner_reads_marks_and_refuses_an_unmarked_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- not run: a notebook cell -->\n```python\n%%compile\n```\n\n```text\nout\n```\n\n```sh\nls\n```\n"
    )
    found = blocks(page)
    assert [(b.line, b.lang, b.mark) for b in found] == [
        (2, "python", ("not run", "a notebook cell")),
        (6, "text", None),
        (10, "sh", None),
    ]
    assert [_kind(b) for b in found] == ["not run", "output", "unmarked"]
    # a command's output as shown: "..." stands for any lines, the others are exact
    assert _matches(["a", "...", "d"], ["a", "b", "c", "d"]) and _matches(["a", "...", "b"], ["a", "b"])
    assert not _matches(["a", "c"], ["a", "b", "c"]) and not _matches(["a", "..."], ["b", "a"])
    assert _commands("$ ls  # a comment\nx\n$ pwd\n") == [("ls  # a comment", ["x"]), ("pwd", [])]


# ---- running the blocks ------------------------------------------------------------------


def _env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "COLUMNS": "100",
        "OMP_NUM_THREADS": "1",
    }


def _scratch(tmp_path: Path) -> Path:
    for name in ("examples", "notebooks", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def _commands(body: str) -> list[tuple[str, list[str]]]:
    """A console block's commands, each with the lines shown under it."""
    out: list[tuple[str, list[str]]] = []
    for line in body.rstrip("\n").splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            assert out, f"output before any command: {line!r}"
            out[-1][1].append(line)
    return out


def _matches(shown: list[str], printed: list[str]) -> bool:
    """``shown`` is ``printed`` where each ``...`` line stands for any lines (none too)."""
    pattern = "".join(r"(?:[^\n]*\n)*?" if ln == "..." else re.escape(ln) + r"\n" for ln in shown)
    return re.fullmatch(pattern, "".join(ln + "\n" for ln in printed)) is not None


def _slow(b: Block) -> bool:
    if b.lang == "console":
        return any(RECORDS.search(cmd) for cmd, _ in _commands(b.body))
    return b.lang == "python" and "torch" in b.body


def _params(slow: bool):
    return [pytest.param(b, id=b.id) for b in ALL if _kind(b) == "here" and _slow(b) == slow]


def _run(b: Block, tmp_path: Path) -> None:
    cwd = _scratch(tmp_path)
    if b.lang == "json":
        json.loads(b.body)
    elif b.lang == "python":
        script = cwd / "block.py"
        script.write_text(b.body, encoding="utf-8")
        run = subprocess.run(
            [sys.executable, str(script)], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, run.stderr
    else:
        for cmd, shown in _commands(b.body):
            cmd = re.sub(r"\s+#.*$", "", cmd)  # a comment after the command
            run = subprocess.run(
                ["bash", "-c", cmd + " 2>&1"],
                cwd=cwd,
                env=_env(),
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert run.returncode == 0 or cmd.startswith("echo"), (cmd, run.stdout)
            assert _matches(shown, run.stdout.rstrip("\n").splitlines()), (cmd, run.stdout)


@pytest.mark.parametrize("block", _params(slow=False))
def test_block_runs(block, tmp_path):
    _run(block, tmp_path)


@pytest.mark.child
@pytest.mark.parametrize("block", _params(slow=True))
def test_block_that_records_runs(block, tmp_path):
    _run(block, tmp_path)
