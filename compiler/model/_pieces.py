"""The file form's string table and its texts cut into pieces (compiler/model/_compact.py)."""

from __future__ import annotations


class Table(dict):
    """The string table: text -> its index in ``strings``, a text not in it yet appended
    (``table[text]``)."""

    def __init__(self) -> None:
        super().__init__()
        self.strings: list[str] = []

    def __missing__(self, s: str) -> int:
        i = self[s] = len(self.strings)
        self.strings.append(s)
        return i


def pieces(s: str) -> list[str]:
    """``s`` cut after each newline and each ", " (the pieces join to ``s``)."""
    if _CUT in s:  # the mark is in the text itself: line by line
        return _pieces_by_line(s)
    out = s.replace(", ", ", " + _CUT).replace("\n", "\n" + _CUT).split(_CUT)
    if not out[-1]:  # s ends with a cut
        out.pop()
    return out


_CUT = "\x00"  # marks the cuts for one split: a text holding it is cut line by line


def _pieces_by_line(s: str) -> list[str]:
    out: list[str] = []
    lines = s.split("\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        parts = line.split(", ")
        out += [p + ", " for p in parts[:-1]]
        tail = parts[-1] + "\n" if i < last else parts[-1]
        if tail:
            out.append(tail)
    return out
