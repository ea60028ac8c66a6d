"""torch's seq_nr lines of a joint graph (the ``log:seq_nr`` event, compiler/listen/_seqnr.py)
read into facts, and given to the parsed joint graph's nodes.

In AOTAutograd's joint graph every node traced for a differentiable op carries ``seq_nr``; the
nodes traced while autograd ran that op's backward carry the same number. torch takes the first
forward node of each number as the one its backward nodes differentiate
(``copy_fwd_metadata_to_bw_nodes``) and logs it (``forward:: key: 12, value: relu``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..model._compact import keep_file_fields
from ..model._fxcode import replace_node
from ..model._report import Graph

_FORWARD = re.compile(r"^forward:: key: (-?\d+), value: (\S+)$")
_BACKWARD = re.compile(r"^(\S+): seq_nr from current_meta grad_fn_seq_nr$")


@dataclass(frozen=True)
class SeqNrs:
    seq: dict[str, int] = field(default_factory=dict)  # node name -> seq_nr
    forward: dict[int, str] = field(default_factory=dict)  # seq_nr -> the forward node torch took
    backward: frozenset[str] = frozenset()  # the nodes traced in the backward


def parse_seq_nrs(text: str | None) -> SeqNrs | None:
    """The facts of the lines torch logged, or None without any."""
    if not text:
        return None
    seq: dict[str, int] = {}
    forward: dict[int, str] = {}
    backward: set[str] = set()
    node = None
    for line in text.splitlines():
        if m := _FORWARD.match(line):
            forward[int(m[1])] = m[2]
        elif m := _BACKWARD.match(line):
            backward.add(m[1])
        elif line.startswith("node: "):
            node = line[len("node: ") :]
        elif line.startswith("seq_nr: ") and node is not None:
            value = line[len("seq_nr: ") :]
            if value.lstrip("-").isdigit():
                seq[node] = int(value)
            node = None
    if not seq and not forward:
        return None
    return SeqNrs(seq, forward, frozenset(backward))


_SEQ_FIELDS = frozenset({"seq_nr", "backward", "grad_of"})  # the node fields with_seq_nrs sets


def with_seq_nrs(joint: Graph | None, facts: SeqNrs | None) -> Graph | None:
    """The joint graph's nodes with torch's ``seq_nr``, which of them are backward nodes and
    the forward node each node traced inside a grad_fn differentiates. Backward nodes: those
    torch traced inside a grad_fn, every node after the first of them (the gradient sums
    autograd adds between grad_fns) and the tangents (the gradients the backward starts
    from, as torch's partitioner tags them). Without torch's lines, the backward part is
    told by position: from the first node that reads a tangent on."""
    if joint is None:
        return None
    names = {n.name for n in joint.nodes}
    nodes = []
    if facts is None or not (facts.seq.keys() & names):
        seen = False
        for n in joint.nodes:
            seen = seen or (n.op != "placeholder" and any(a.startswith("tangents") for a in n.args))
            back = _tangent(n) or (seen and _work(n))
            nodes.append(replace_node(n, backward=True) if back else n)
        return keep_file_fields(Graph(code=joint.code, nodes=tuple(nodes)), _SEQ_FIELDS, made_from=joint)
    after = False  # past the first node traced in the backward: the rest of the trace is
    # the backward's (the gradient sums autograd adds outside any grad_fn included)
    for n in joint.nodes:
        s = facts.seq.get(n.name)
        after = after or n.name in facts.backward
        back = n.name in facts.backward or _tangent(n) or (after and _work(n))
        grad_of = facts.forward.get(s) if n.name in facts.backward and s is not None else None
        nodes.append(replace_node(n, seq_nr=s, backward=back, grad_of=grad_of if grad_of in names else None))
    return keep_file_fields(Graph(code=joint.code, nodes=tuple(nodes)), _SEQ_FIELDS, made_from=joint)


def _work(n) -> bool:
    """A node that computes (not an input, the output, or the copy back into a mutated input
    that functionalization puts at the end of the graph)."""
    return n.op not in ("placeholder", "output") and n.target != "torch.ops.aten.copy_.default"


def _tangent(n) -> bool:
    return n.op == "placeholder" and n.name.startswith("tangents")
