"""torch's own structured trace, read directly: the oracle the recorder's answers are checked
against (tests/test_hf_corpus.py). Deliberately small and independent of compiler/: records
come from a plain logging handler on torch's trace logger or from a TORCH_TRACE file read
line by line; facts are what torch itself states in them."""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field

import torch

REGISTRY = json.load(
    open(f"{torch.__path__[0]}/_dynamo/graph_break_registry.json", encoding="utf-8")  # noqa: SIM115
)


class RawTrace(logging.Handler):
    """Collects (metadata, payload) of every structured-trace record torch emits."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records: list[tuple[dict, str | None]] = []

    def emit(self, record):
        self.records.append((dict(record.metadata), getattr(record, "payload", None)))

    def __enter__(self):
        logging.getLogger("torch.__trace").addHandler(self)
        return self

    def __exit__(self, *exc):
        logging.getLogger("torch.__trace").removeHandler(self)


def read_log(path: str) -> list[tuple[dict, str | None]]:
    """A TORCH_TRACE file (gzipped, or as torch wrote it): `<glog prefix>] {json}` lines,
    payload lines start with a tab."""
    out: list[tuple[dict, list[str]]] = []
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\t"):
                out[-1][1].append(line[1:])
            elif line.strip():
                out.append((json.loads(line.split("] ", 1)[1]), []))
    return [(m, "\n".join(p) if p else None) for m, p in out]


def _cid(meta: dict) -> str:
    return f"{meta['frame_id']}/{meta['frame_compile_id']}"


def _artifact(meta: dict) -> str | None:
    art = meta.get("artifact")
    return art.get("name") if isinstance(art, dict) else None


@dataclass
class Facts:
    # (file, line) of each break site -> compile ids torch logged it in
    break_sites: dict[tuple[str, int], set[str]] = field(default_factory=lambda: defaultdict(set))
    # (file, line) -> the registered types of the GB ids torch gave it
    break_types: dict[tuple[str, int], set[str]] = field(default_factory=lambda: defaultdict(set))
    break_gb: dict[tuple[str, int], set[str]] = field(default_factory=lambda: defaultdict(set))
    recompiles: dict[str, list[str]] = field(default_factory=dict)  # compile id -> reasons
    guards: dict[str, str] = field(default_factory=dict)  # compile id -> guard tree
    symbols: dict[str, set[tuple[str, str]]] = field(default_factory=lambda: defaultdict(set))
    # compile id -> (function, file, first line, the exception "Type: message") of each frame
    # torch warned it will not convert (torch._dynamo.exc.unimplemented_with_warning)
    frame_warnings: dict[str, tuple[str, str, int, str]] = field(default_factory=dict)


_HEADER = re.compile(r"^Graph break in user code at (.+):(\d+)$")
_WONT = re.compile(r"^WON'T CONVERT (\S+) (.+) line (\d+)\s*$")
_GB = re.compile(r"/gb/gb(\d{4})\.html")


def facts(records: list[tuple[dict, str | None]]) -> Facts:
    f = Facts()
    for meta, payload in records:
        name = _artifact(meta)
        if name == "dynamo_graph_break_reason":
            wont = _WONT.match(payload.splitlines()[0])
            if wont:  # the frame's traceback: the exception is its one unindented line after it
                lines = payload.splitlines()
                at = lines.index("Traceback (most recent call last):")
                exc = next(ln for ln in lines[at + 1 :] if ln and not ln[0].isspace())
                f.frame_warnings[_cid(meta)] = (wont.group(1), wont.group(2), int(wont.group(3)), exc)
                continue
            # torch names the site in the payload's first line; the GB id in its link
            site_m = _HEADER.match(payload.splitlines()[0])
            site = (site_m.group(1), int(site_m.group(2)))
            f.break_sites[site].add(_cid(meta))
            gb = "GB" + _GB.search(payload).group(1)
            f.break_gb[site].add(gb)
            if gb in REGISTRY:
                f.break_types[site] |= {e["Gb_type"] for e in REGISTRY[gb]}
            else:  # an id newer than the installed torch: the type torch printed
                f.break_types[site].add(_printed_type(payload))
        elif name == "recompile_reasons":
            # torch writes one reason as it is, several as a JSON list
            f.recompiles[_cid(meta)] = json.loads(payload) if payload.startswith("[") else [payload]
        elif "dynamo_cpp_guards_str" in meta:
            f.guards[_cid(meta)] = payload
        elif "create_symbol" in meta:
            body = meta["create_symbol"]
            f.symbols[_cid(meta)].add((body["symbol"], body["source"]))
    return f


def _printed_type(payload: str) -> str:
    """The line after "Graph Break Reason:", or the cause under a wrapper line ending in ":"."""
    lines = payload.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("Graph Break Reason:"))
    first = lines[i][len("Graph Break Reason:") :].strip()
    if not first.endswith(":"):
        return first
    return next(ln.strip() for ln in lines[i + 1 :] if ln.strip())


def strip_local(source: str) -> str:
    """L['kwargs']['ids'].size()[1] -> kwargs['ids'].size()[1], as torch writes reasons."""
    return re.sub(r"^L\['(\w+)'\]", r"\1", source)


def local_source(reason_source: str) -> str:
    """kwargs['ids'] -> L['kwargs']['ids'], as torch writes guards."""
    m = re.match(r"^(\w+)(.*)$", reason_source, re.S)
    return f"L['{m.group(1)}']{m.group(2)}"


class InductorIR(logging.Handler):
    """Inductor's fusion IR loggers, as TORCH_LOGS=ir_pre_fusion,ir_post_fusion shows them."""

    ARTIFACTS = ("ir_pre_fusion", "ir_post_fusion")

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.texts: dict[str, list[str]] = {a: [] for a in self.ARTIFACTS}
        self._saved: list = []

    def emit(self, record):
        self.texts[record.name.rsplit(".", 1)[-1].split("__")[-1]].append(record.getMessage())

    def __enter__(self):
        for artifact in self.ARTIFACTS:
            log = torch._logging.getArtifactLogger("torch._inductor.debug", artifact)
            self._saved.append((log, log.level, log.propagate))
            log.setLevel(logging.DEBUG)
            log.propagate = False
            log.addHandler(self)
        return self

    def __exit__(self, *exc):
        for log, level, propagate in self._saved:
            log.removeHandler(self)
            log.setLevel(level)
            log.propagate = propagate


class ModuleStacks:
    """A backend that notes torch's own metadata of each graph Dynamo hands it (node -> the
    innermost module of its ``nn_module_stack``, the source as torch wrote it, None for none)
    and compiles it with ``aot_eager``."""

    def __init__(self):
        self.graphs: list[dict[str, str | None]] = []

    def __call__(self, gm, inputs):
        self.graphs.append(
            {
                n.name: (
                    [v[0] for v in n.meta["nn_module_stack"].values()][-1]
                    if n.meta.get("nn_module_stack")
                    else None
                )
                for n in gm.graph.nodes
                if n.op.startswith("call")
            }
        )
        from torch._dynamo.backends.registry import lookup_backend

        return lookup_backend("aot_eager")(gm, inputs)


def provenance_calls(records: list[tuple[dict, str | None]]) -> dict[str, set[str]]:
    """Each kernel call Inductor's provenance map (``*CodeToPost``) names, its place left out
    (``extern_kernels.addmm``, ``cpp_fused_gelu_sum_0``) -> the post-grad nodes it names."""
    out: dict[str, set[str]] = {}
    for meta, payload in records:
        if meta.get("artifact", {}).get("name") == "inductor_provenance_tracking_node_mappings":
            for key, mapping in json.loads(payload).items():
                if key.endswith("CodeToPost"):
                    for call, nodes in mapping.items():
                        out.setdefault(call.rsplit(":", 1)[0], set()).update(nodes)
    return out
