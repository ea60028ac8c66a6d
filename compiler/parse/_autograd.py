"""Compiled Autograd's captured graph code (``compiled_autograd_graph``), read for what it
calls: autograd's nodes in the order they run, and the hooks it calls."""

from __future__ import annotations

import re

_NODE_CALL = re.compile(r"code: (?P<node>\S+) \(NodeCall (?P<n>\d+)\)")
_HOOK = re.compile(r"call_hook\(.*hook_type = '(?P<type>\w+)'")


def autograd_nodes(code: str) -> tuple[str, ...]:
    """Autograd's nodes in the order they run (NodeCall number), each once."""
    seen: dict[int, str] = {}
    for m in _NODE_CALL.finditer(code):
        seen.setdefault(int(m["n"]), m["node"])
    return tuple(seen[n] for n in sorted(seen))


def autograd_hooks(code: str) -> tuple[str, ...]:
    """The type of each hook the graph calls, in order (``tensor_pre_hook``, ``post_hook``, ...)."""
    return tuple(m["type"] for m in _HOOK.finditer(code))
