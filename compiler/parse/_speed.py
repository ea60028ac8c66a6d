"""torch's records of a compile's mode, caches and CUDA graphs, read into facts (pure).

* The runnable repro (``fx_graph_runnable``) starts with torch's own list of the config that
  differs from the defaults (``torch._inductor.config.triton.cudagraphs = True``): the mode
  and options in force.
* A cache artifact (``fx_graph_cache_miss`` ...) is JSON: its state, key, bypass reason,
  time saved and the key's components, one line each: ``[hash] name: value``.
* Inductor's ``cudagraphs`` logger (in-process only; TORCH_TRACE does not carry it) tells each
  recording, re-recording and warm-up with the compile id in brackets, and the skips.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from typing import Any

from ..model import _fastjson
from ..model._cgfacts import SKIP
from ..model._speedtypes import CacheLookup, CudaGraphRun

_CONFIG_LINE = re.compile(r"^torch\.(_inductor|_dynamo)\.config\.([\w.]+) = (.*)$", re.M)


def runnable_options(runnable: str | None) -> dict[str, str] | None:
    """The non-default Inductor and Dynamo config a runnable repro sets, by name (Dynamo's
    prefixed ``dynamo.``), values as torch printed them; None for no runnable."""
    if not runnable:
        return None
    out = {}
    for module, name, value in _CONFIG_LINE.findall(runnable):
        out[name if module == "_inductor" else f"dynamo.{name}"] = value.strip()
    return out


def mode_of(cudagraphs: bool, max_autotune: bool) -> str:
    """torch.compile's mode from the two options its modes set (torch's list_mode_options)."""
    if max_autotune:
        return "max-autotune" if cudagraphs else "max-autotune-no-cudagraphs"
    return "reduce-overhead" if cudagraphs else "default"


def is_true(value: str | None) -> bool:
    return value in ("True", "BoxedBool(value=True)")


_COMPONENT = re.compile(r"^\[(\w+)\] ([^:\n]+): ?(.*)$")


def component_lines(components: list) -> tuple[str, ...]:
    """torch's key components, a line each; a multi-line value (the graph's code) is cut to
    its first line and a ``…``. Equal lines are one object (``sys.intern``): the lookups of a
    big log share most of theirs."""
    lines = list(map(str, components))
    for i in [i for i, text in enumerate(lines) if "\n" in text]:  # a few: a graph's code
        lines[i] = lines[i][: lines[i].index("\n")] + " …"
    return tuple(map(sys.intern, lines))


def components(lines: str | tuple[str, ...] | None) -> dict[str, tuple[str, str]]:
    """name -> (hash, value) of a CacheLookup's components (its ``component_lines``, or the
    text ``components``)."""
    if type(lines) is tuple:  # a lookup's lines: the same few keys recur in a log's compiles
        return dict(_key_components(lines))
    return _text_components(lines if isinstance(lines, str) else "\n".join(lines or ()))


_KEY_CONFIG = re.compile(r"^inductor_config\[(.+)\]$")


def inductor_option_of(component: str) -> str | None:
    """``inductor_config[max_autotune]`` (a cache key's component) -> ``max_autotune``."""
    m = _KEY_CONFIG.match(component)
    return m.group(1) if m else None


@functools.lru_cache(maxsize=64)
def _key_components(lines: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    return _text_components("\n".join(lines))


def _text_components(text: str) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():  # as the text was read: a value may hold "\r" or "\x1c"
        got = _component(line)
        if got is not None:
            out[got[0]] = got[1]
    return out


@functools.lru_cache(maxsize=4096)
def _component(line: str) -> tuple[str, tuple[str, str]] | None:
    """(name, (hash, value)) of one component line (the same lines recur in every lookup)."""
    m = _COMPONENT.match(line)
    return (m.group(2), (m.group(1), m.group(3))) if m else None


def cache_lookup(kind: str, state: str, payload: str | None) -> CacheLookup:
    """One cache artifact's payload (JSON; torch < 2.4 logged none) as a CacheLookup."""
    try:
        body = _artifact_json(payload) if payload else {}
    except (json.JSONDecodeError, TypeError, RecursionError):  # the last: nested too deep
        body = {}
    if not isinstance(body, dict):
        body = {}
    saved = None
    if isinstance(body.get("time_saved_ns"), int | float):
        saved = body["time_saved_ns"] / 1e9
    elif isinstance(body.get("time_saved_ms"), int | float):
        saved = body["time_saved_ms"] / 1e3
    comps = body.get("components")
    return CacheLookup(
        kind=kind,
        state=str(body.get("cache_state") or state),
        key=body.get("key") if isinstance(body.get("key"), str) else None,
        reason=body.get("cache_bypass_reason") if isinstance(body.get("cache_bypass_reason"), str) else None,
        time_saved_s=saved,
        component_lines=component_lines(comps) if isinstance(comps, list) else (),
    )


_STR = frozenset({str})


def _artifact_json(payload: str) -> Any:
    """``json.loads(payload)``, read by orjson (2x faster: a cache miss's key components are
    ~100 KB of JSON) where nothing ``cache_lookup`` reads is a float, which orjson makes of an
    integer past 64 bits (a component that is not a string, a number where torch writes an
    int or a string): json reads those."""
    body = _fastjson.loads(payload)
    if type(body) is not dict:
        return body
    numbers = (body.get("cache_state"), body.get("time_saved_ns"), body.get("time_saved_ms"))
    comps = body.get("components")
    if float in map(type, numbers) or (type(comps) is list and not _STR.issuperset(map(type, comps))):
        return json.loads(payload)
    return body


def differing(
    a: str | tuple[str, ...] | None, b: str | tuple[str, ...] | None
) -> list[tuple[str, str | None, str | None]]:
    """The components of two keys that differ: (name, value in a, value in b); a component
    only one of them has is None on the other side. A value torch logged as bytes (the
    torch version's hash) or a graph's code is named by its hash."""
    ca, cb = components(a), components(b)
    out = []
    for name in list(ca) + [n for n in cb if n not in ca]:
        ha, hb = ca.get(name), cb.get(name)
        if ha is None or hb is None or ha[0] != hb[0]:
            out.append((name, _shown(ha), _shown(hb)))
    return out


def _shown(component: tuple[str, str] | None) -> str | None:
    if component is None:
        return None
    h, value = component
    if not value.isprintable() or value.endswith(" …"):
        return f"hash {h[:10]}"
    return value


def cache_pairs(a, b) -> list[tuple[object, object]]:
    """Two compiles' cache lookups (``CacheLookup``) paired: a lookup with the one of the same
    kind and key, else with the next unpaired one of its kind in order (a compile looks up the
    FX graph cache for its forward, then its backward); a lookup with none is left out."""
    pairs, free = [], list(b.caches)
    for la in a.caches:
        lb = next((x for x in free if x.kind == la.kind and x.key == la.key and la.key is not None), None)
        pairs.append([la, lb])
        if lb is not None:
            free.remove(lb)
    for pair in pairs:
        if pair[1] is None:
            pair[1] = next((x for x in free if x.kind == pair[0].kind), None)
            if pair[1] is not None:
                free.remove(pair[1])
    return [(x, y) for x, y in pairs if y is not None]


def cache_key_changes(a, b) -> list[tuple[str, list[tuple[str, str | None, str | None]]]]:
    """For each cache two compiles (``Compile``) both looked up with different keys, the
    components that differ: [(kind, [(name, value in a, value in b), ...]), ...]."""
    out = []
    for la, lb in cache_pairs(a, b):
        if la.key is None or lb.key is None or la.key == lb.key:
            continue
        out.append((la.kind, differing(la.component_lines, lb.component_lines)))
    return out


# Inductor's cudagraphs logger (torch/_inductor/cudagraph_trees.py, cudagraph_utils.py)
_BRACKET = re.compile(r"^\[([!\d/:]+)\] ")
_RECORD = re.compile(r"Recording function=(?P<fn>[^\s,]+)")
_TREE = re.compile(r"Recording cudagraph tree for (?:symint key (?P<key>.+)|graph without symints)")
_RERECORD = re.compile(r"Re-recording function=(?P<fn>[^\s,]+),.*?reason=(?P<why>.*)", re.S)
_WARMUP = re.compile(r"Running warmup function=(?P<fn>[^\s,]+)")
_USER_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def cudagraph_message(text: str) -> tuple[str | None, str, object]:
    """One cudagraphs-logger message: (compile id in brackets or None, what it is, its fact).
    What: "run" (a CudaGraphRun), "skip" (the reason), "warning" (the text), "other"."""
    m = _BRACKET.match(text)
    cid = m.group(1) if m else None
    body = text[m.end() :] if m else text
    if r := _RERECORD.search(body):
        return cid, "run", CudaGraphRun("re-record", r.group("why").strip(), r.group("fn"))
    if r := _RECORD.search(body):
        return cid, "run", CudaGraphRun("record", None, r.group("fn"))
    if r := _TREE.search(body):
        return cid, "tree", r.group("key")
    if r := _WARMUP.search(body):
        return cid, "run", CudaGraphRun("warmup", None, r.group("fn"))
    if SKIP.match(body):
        return cid, "skip", body.strip()
    if "distinct sizes" in body or "CUDAGraph" in body:
        return cid, "warning", body.strip()
    return cid, "other", body.strip()


def reason_line(reason: str) -> str | None:
    """The innermost ``file:line`` torch names in a skip reason's stack ("Found from: File
    "model.py", line 5"), or None."""
    found = _USER_LINE.findall(reason or "")
    if not found:
        return None
    file, line = found[-1]
    return f"{file}:{line}"
