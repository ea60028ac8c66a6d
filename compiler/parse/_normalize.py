"""Noise that differs between two compiles of the same code, taken out before diffing.

Every rule keeps the number of lines (so highlighted lines still point at the same text) and
is applied to each side on its own; ``normalize`` says which rules changed something, so the
diff can say so. The rules, in the order they run:

=================  ======================================================================
rule               what it rewrites
=================  ======================================================================
cache path         any path into Inductor's cache dir (``/tmp/torchinductor_root/xy/cxy….py``,
                   or any ``…/ab/c<hash of 40+ chars>.py`` under another cache dir) →
                   ``<inductor-cache>/<hash>.py`` (``<inductor-cache>`` for the dir itself)
notebook cell      IPython's file of a cell (``/tmp/ipykernel_2165/1892539066.py``, in a
                   terminal ``<ipython-input-3-c2ada7628c21>``) → ``<ipykernel cell>``; its name
                   in tracebacks, ``Cell In[12]`` → ``Cell In[n]``
hash               hex strings of 32+ digits (Triton's ``backend_hash``, git commits) → ``<hash>``
object id          CPython object addresses: ``at 0x7f3a…`` (9–16 hex digits, as ``repr`` writes
                   them) and, on lines that name an id (``___check_obj_id(L['x'], 140234…)``,
                   ``___check_type_id``, ``ID_MATCH``, ``# graph id: 1399…``, ``data_ptr``),
                   decimal integers of 12–16 digits → ``<id>``. Other long numbers are values
                   and stay.
aot id             ``# AOT ID: ['3_forward']`` (a process-wide counter) → ``['<n>_forward']``
timing             ``Guard latency = 82.59 us`` → ``<t>``, ``'compile_time_us': 423642`` → ``<t>``
timestamp          ISO date-times (``2026-11-22T10:31:02.5Z``, ``2026-11-22 10:31:02``) → ``<time>``
kernel name        Inductor's kernel counter: ``triton_poi_fused_add_3``, ``cpp_fused_mul_relu_0``
                   → ``…_N``; a second kernel of the same fused name in one text → ``…_N2``, …
                   (by first appearance)
buffer number      ``buf3``, ``buf12``, IR nodes ``op7`` renumbered by first appearance
                   (``buf0``, ``buf1``, … / ``op0``, …)
FX node name       in an FX graph's code (``class …(torch.nn.Module):``), the nodes it assigns
                   renumbered per name in the order they are defined, as FX numbers a graph
                   built from scratch: ``mul``, ``mul_5``, ``mul_8`` → ``mul``, ``mul_1``,
                   ``mul_2`` (``sum_1`` stays ``sum_1``: FX starts there for a builtin's name).
                   FX numbers names process-wide per graph it traces, so a graph with a few more
                   nodes (a dynamic-shape compile's size arithmetic) renames every later node
=================  ======================================================================

``compiler.normalize`` and ``compiler.kernel_base``; explorer's diffs call them
(explorer/diffs/_parts.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

# path-like tokens, checked one by one (a pattern that looks for the marker inside a token from
# every start position is quadratic on long lines)
_PATH_TOKEN = re.compile(r"[^\s'\"(),=\[\]{}<>]+")
_INDUCTOR_DIR = re.compile(r"torchinductor_[^/]*(?P<tail>/.*)?")
_HASHED_FILE = re.compile(r"/[a-z0-9]{2}/c[a-z0-9]{40,64}(?P<ext>\.\w+)")
_HASH = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])")
_HEX_ID = re.compile(r"(?<=\bat )0x[0-9a-f]{9,16}\b")
_DEC_ID = re.compile(r"(?<![\w.])\d{12,16}(?![\w.])")
_ID_LINE = re.compile(r"_id\(|\bID_MATCH\b|\bTYPE_MATCH\b|\bid[:=]|\bdata_ptr")
# also as torch shortens it in guard comments: "mp/ipykernel_25861/3004398281.py"
# a path starts where a run of path characters does (a match can start nowhere else; from each
# character of a long run, the run was scanned again: quadratic)
_IPYKERNEL_FILE = re.compile(r"(?<![\w./-])[\w./-]*ipykernel_\d+/\d+\.py|<ipython-input-\d+-[0-9a-f]+>")
_CELL_NAME = re.compile(r"\bCell In\[\d+\]")
_AOT_ID = re.compile(r"(# AOT ID: \[')\d+(_\w+'\])")
_TIMING = re.compile(r"(Guard latency = )[\d.]+(?= ?[num]?s\b)|(['\"]compile_time_us['\"]:\s*)\d+(?:\.\d+)?")
_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_KERNEL = re.compile(r"\b((?:triton|cpp)_[A-Za-z0-9_]*?[A-Za-z0-9])_(\d+)\b")
# also inside fused names: op0_op1_op3
_BUFFER = re.compile(r"(?<![A-Za-z0-9])(buf|op)(\d+)(?!\d)")


def _cache_path(text: str) -> str:
    if "torchinductor_" not in text and not _HASHED_FILE.search(text):
        return text

    def repl(m: re.Match) -> str:
        path = m.group(0)
        hashed = _HASHED_FILE.search(path)
        if "torchinductor_" not in path and not hashed:
            return path
        if hashed:
            return f"<inductor-cache>/<hash>{hashed.group('ext')}"
        d = _INDUCTOR_DIR.search(path)
        tail = d.group("tail") if d else None
        if tail and tail != "/":
            dot = tail.rfind(".")
            return f"<inductor-cache>/<hash>{tail[dot:]}" if dot > tail.rfind("/") else "<inductor-cache>/…"
        return "<inductor-cache>"

    return _PATH_TOKEN.sub(repl, text)


def _object_ids(text: str) -> str:
    text = _HEX_ID.sub("<id>", text)
    if not _ID_LINE.search(text):
        return text
    return "".join(
        _DEC_ID.sub("<id>", line) if _ID_LINE.search(line) else line for line in text.splitlines(True)
    )


def _cells(text: str) -> str:
    if "ipykernel_" not in text and "Cell In[" not in text and "<ipython-input-" not in text:
        return text
    return _CELL_NAME.sub("Cell In[n]", _IPYKERNEL_FILE.sub("<ipykernel cell>", text))


def _timing(text: str) -> str:
    return _TIMING.sub(lambda m: (m.group(1) or m.group(2)) + "<t>", text)


def _kernel_names(text: str) -> str:
    names: dict[tuple[str, str], str] = {}
    per_base: dict[str, int] = {}

    def repl(m: re.Match) -> str:
        key = (m.group(1), m.group(2))
        if key not in names:
            n = per_base[key[0]] = per_base.get(key[0], 0) + 1
            names[key] = f"{key[0]}_N" + (str(n) if n > 1 else "")
        return names[key]

    return _KERNEL.sub(repl, text)


def _buffers(text: str) -> str:
    seen: dict[tuple[str, str], str] = {}
    count: dict[str, int] = {}

    def repl(m: re.Match) -> str:
        key = (m.group(1), m.group(2))
        if key not in seen:
            n = count.get(key[0], 0)
            count[key[0]] = n + 1
            seen[key] = f"{key[0]}{n}"
        return seen[key]

    return _BUFFER.sub(repl, text)


_FX_CLASS = re.compile(r"^class [\w<>]+\(torch\.nn\.Module\):", re.M)
_FX_ASSIGN = re.compile(r'^[ \t]+([A-Za-z_]\w*)(?:: "[^"\n]*")? = ', re.M)
_FX_NUMBERED = re.compile(r"(?P<base>[A-Za-z_]\w*?)_(?P<n>\d+)")


def _fx_names(text: str) -> str:
    if not _FX_CLASS.search(text):
        return text
    groups: dict[str, list[str]] = {}
    for name in dict.fromkeys(m.group(1) for m in _FX_ASSIGN.finditer(text)):
        m = _FX_NUMBERED.fullmatch(name)
        groups.setdefault(m.group("base") if m else name, []).append(name)
    rename = {}
    for base, names in groups.items():
        start = 0 if names[0] == base else 1  # `mul`, `mul_1`, … or `sum_1`, `sum_2`, …
        for i, name in enumerate(names):
            new = base if i + start == 0 else f"{base}_{i + start}"
            if new != name:
                rename[name] = new
    if not rename:
        return text
    names = "|".join(map(re.escape, sorted(rename, key=len, reverse=True)))
    return re.sub(rf"(?<![\w.])({names})(?!\w)", lambda m: rename[m.group(1)], text)


RULES: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("cache paths", _cache_path),
    ("notebook cells", _cells),
    ("hashes", lambda t: _HASH.sub("<hash>", t)),
    ("object ids", _object_ids),
    ("AOT ids", lambda t: _AOT_ID.sub(r"\1<n>\2", t)),
    ("timings", _timing),
    ("timestamps", lambda t: _TIMESTAMP.sub("<time>", t)),
    ("kernel names", _kernel_names),
    ("buffer numbers", _buffers),
    ("FX node names", _fx_names),
)


def normalize(text: str, skip: tuple[str, ...] = ()) -> tuple[str, list[str]]:
    """``text`` with the noise of every rule (but those named in ``skip``) taken out, and the
    names of the rules that changed something."""
    applied: list[str] = []
    for name, rule in RULES:
        if name in skip:
            continue
        new = rule(text)
        if new != text:
            applied.append(name)
            text = new
    return text, applied


def kernel_base(name: str) -> str:
    """A kernel's name without Inductor's counter: ``triton_poi_fused_add_3`` →
    ``triton_poi_fused_add``; the key kernels are matched by."""
    m = _KERNEL.fullmatch(name)
    return m.group(1) if m else name
