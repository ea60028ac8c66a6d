"""FlexAttention in a recording: the ``flex_attention`` higher-order op in a compile's
captured graph, its score_mod / mask_mod subgraphs traced back to the user's functions
(torch's ``# File: …:N in fn, code: …`` comments inside the subgraph modules Dynamo prints),
the block grid of its BlockMask, and the Inductor template kernel(s) that compute it
(``triton_tem_fused_flex_attention_0``: the kernel whose source nodes include the op).

The mask's values (which blocks are computed) are graph inputs, not in the trace:
``flex_summary(block_mask)`` reads them from the BlockMask at the call (torch's own
``sparsity()`` and block counts)."""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from ..model._report import Report
from ..model._sourcefile import read_source
from ._text import split_args

HOP = "torch.ops.higher_order.flex_attention"
_CLASS = re.compile(r"^([ \t]*)class (\w+)\(torch\.nn\.Module\):", re.M)
_FILE = re.compile(r"# File: (.+?):(\d+) in (\S+), code: (.*)$", re.M)


@dataclass(frozen=True)
class ModSource:
    """A score_mod or mask_mod: the subgraph Dynamo traced and the user function it came from."""

    role: str  # score_mod | mask_mod
    subgraph: str  # the get_attr submodule: score_mod_0, mask_fn_0
    function: str | None = None
    filename: str | None = None
    line: int | None = None
    code: tuple[str, ...] = ()  # the user's lines torch names in the subgraph, in order
    graph: str = ""  # the subgraph module as Dynamo printed it
    source: str | None = None  # the whole function, where its file is readable here

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.line}" if self.filename else "?"


@dataclass(frozen=True)
class FlexCall:
    """One flex_attention op in one compile."""

    compile_id: str
    node: str
    query: str | None  # the query's dtype and shape, as the graph annotates it
    q_len: int | None
    kv_len: int | None
    block_size: tuple[int, int] | None  # (Q_BLOCK, KV_BLOCK)
    score_mod: ModSource | None
    mask_mod: ModSource | None
    kernels: tuple[str, ...]  # Inductor's template kernels computing it

    @property
    def block_grid(self) -> tuple[int, int] | None:
        if not (self.q_len and self.kv_len and self.block_size):
            return None
        return (math.ceil(self.q_len / self.block_size[0]), math.ceil(self.kv_len / self.block_size[1]))


def _subgraph(code: str, name: str) -> str:
    m = re.search(rf"^([ \t]*)class {re.escape(name)}\(torch\.nn\.Module\):", code, re.M)
    if not m:
        return ""
    nxt = _CLASS.search(code, m.end())
    return textwrap.dedent(code[m.start() : nxt.start() if nxt else len(code)]).rstrip()


def _function_source(filename: str, line: int, function: str) -> str | None:
    """The whole ``def function`` around ``line`` of ``filename``, where the file is readable."""
    import inspect

    lines, _ = read_source(filename)  # the trace names it: only a regular file of a bounded size
    for i in range(min(line, len(lines)) - 1, -1, -1):
        if re.match(rf"\s*(async\s+)?def {re.escape(function)}\(", lines[i]):
            return "".join(inspect.getblock(lines[i:])).rstrip()
    return None


def _mod(role: str, name: str, code: str) -> ModSource:
    sub = _subgraph(code, name)
    files = _FILE.findall(sub)
    if not files:
        return ModSource(role, name, graph=sub)
    filename, line, fn, _ = files[0]
    lines = tuple(dict.fromkeys(c.strip() for f, _, g, c in files if (f, g) == (filename, fn)))
    return ModSource(
        role, name, fn, filename, int(line), lines, sub, _function_source(filename, int(line), fn)
    )


def _int(s: str) -> int | None:
    return int(s) if s.isdigit() else None


def flex_calls(report: Report) -> tuple[FlexCall, ...]:
    """Every flex_attention op in the report's captured graphs, with its mods and kernels."""
    out = []
    for c in report.compiles:
        cap = c.stages.capture
        if cap is None or cap.graph is None or HOP not in cap.graph.code:
            continue
        code = cap.graph.code
        kernels = tuple(
            k.name for k in report.kernels_of(c.id) if any(n.startswith("flex_attention") for n in k.nodes)
        )
        for m in re.finditer(rf"(\w+) = {re.escape(HOP)}\(", code):
            args = split_args(code[m.end() :])
            if len(args) < 5:
                continue
            inner = split_args(args[4].lstrip("("))
            q = args[0]
            ann = re.search(
                rf"\b(?:{re.escape(q)}|{re.escape(q[:1].upper() + q[1:])}): \"(\w+\[[^\]]*\])", code
            )
            block = (_int(inner[-3]), _int(inner[-2])) if len(inner) >= 3 else (None, None)
            out.append(
                FlexCall(
                    c.id,
                    m.group(1),
                    ann.group(1) if ann else None,
                    _int(inner[0]) if inner else None,
                    _int(inner[1]) if len(inner) > 1 else None,
                    block if None not in block else None,  # type: ignore[arg-type]
                    None if args[3] in ("None", "") else _mod("score_mod", args[3], code),
                    _mod("mask_mod", inner[-1], code) if inner and inner[-1] != "None" else None,
                    kernels,
                )
            )
    return tuple(out)


@dataclass(frozen=True)
class FlexMask:
    """A BlockMask read at the call: what the trace cannot hold (its values)."""

    shape: tuple[int, ...]  # (B, H, Q_LEN, KV_LEN)
    block_size: tuple[int, int]
    sparsity: float  # percent of blocks skipped: torch's BlockMask.sparsity()
    partial_blocks: tuple[int, ...]  # per query block of batch 0, head 0: blocks the mask_mod runs in
    full_blocks: tuple[int, ...]  # … blocks computed without calling mask_mod
    mask_mod: str | None
    picture: str  # torch's own rendering of the block grid (str(block_mask))

    def text(self) -> str:
        return (
            f"BlockMask {list(self.shape)}, blocks {self.block_size[0]}×{self.block_size[1]}, "
            f"sparsity {self.sparsity:.2f}% (blocks skipped); per query block: partial "
            f"{list(self.partial_blocks)}, full {list(self.full_blocks)}"
        )


def flex_summary(block_mask: Any) -> FlexMask:
    """Sparsity and block counts of a ``torch.nn.attention.flex_attention.BlockMask``."""
    from torch.nn.attention.flex_attention import BlockMask

    if not isinstance(block_mask, BlockMask):
        raise TypeError(f"flex_summary expects a BlockMask, got {type(block_mask).__name__}")
    full = block_mask.full_kv_num_blocks
    mm = block_mask.mask_mod
    return FlexMask(
        tuple(int(x) for x in block_mask.shape),
        tuple(int(x) for x in block_mask.BLOCK_SIZE),  # type: ignore[arg-type]
        float(block_mask.sparsity()),
        tuple(int(x) for x in block_mask.kv_num_blocks[0, 0].tolist()),
        tuple(int(x) for x in full[0, 0].tolist()) if full is not None else (),
        getattr(mm, "__name__", None),
        str(block_mask),
    )
