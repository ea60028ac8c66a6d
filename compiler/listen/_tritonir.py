"""Triton all the way down (``recording(triton_ir=True)``): every Inductor Triton kernel's IR
at each level, its registers, spills and shared memory, and the config autotuning chose.

How: Triton's compilation listener (``triton.knobs.compilation.listener``, Triton >= 3.4) is
called by ``triton.compile`` with the kernel's source, its metadata (warps, stages, shared
memory, target, hash) and ``metadata_group``, the paths of the files it wrote (``.ttir``,
``.ttgir``, ``.llir``, ``.ptx``, ``.cubin``). Inductor compiles kernels in worker processes by
default, where a listener in this process sees nothing, so the recording sets
``torch._inductor.config.compile_threads = 1`` (through config.patch): kernels compile one
after another in this process. That is the cost: a compile with many kernels takes longer
(benchmarks/README.md has the figure). The slot holds one callable: ours calls the one that
was there before (a user's, tritonparse's), and the slot gets it back on exit.

Why not tritonparse: its ``structured_logging.init()`` installs the same listener and needs
the same in-process compile, then writes its own NDJSON files, to be read back by its parser;
we need a few facts in memory, tied to the report's kernels.

Registers and spills are what ptxas reports when the binary is loaded: Triton's own
``driver.active.utils.load_binary`` (what ``CompiledKernel`` calls) gives them for the cubin
Triton wrote. The autotuning choice is the ``.best_config`` file Inductor writes beside the
kernel's module (``triton_cache_hash`` names the binary). SASS comes from ``nvdisasm`` where
Triton bundles it or it is on the PATH.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

from ..model._irbounds import ir_bounds
from ..model._report import Report
from ..model._tritontypes import TritonBinary
from ..parse._tritonsrc import read_triton_source

LEVELS = ("ttir", "ttgir", "llir", "ptx")
Heard = tuple[str | None, TritonBinary, str | None]  # (kernel module file, binary, cubin path)


def triton_knobs() -> Any | None:
    """``triton.knobs.compilation`` where Triton >= 3.4 is importable, else None."""
    try:
        from triton import knobs
    except Exception:  # no Triton (a CPU build of torch), or one without knobs
        return None
    return getattr(knobs, "compilation", None)


class TritonCapture:
    """Our listener in Triton's slot while attached; what it heard, as ``TritonBinary``s."""

    def __init__(self, knobs: Any | None = None):
        self.knobs = knobs if knobs is not None else triton_knobs()
        self.prior: Any = None
        self.heard: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._attached = False

    @property
    def available(self) -> bool:
        return self.knobs is not None and hasattr(self.knobs, "listener")

    def attach(self) -> None:
        if not self.available or self._attached:
            return
        self.prior = self.knobs.listener
        self.knobs.listener = self
        self._attached = True

    def detach(self) -> None:
        """Give the slot back: to the prior listener where ours is still in it (a listener set
        inside the block is the user's: left there)."""
        if not self._attached:
            return
        if self.knobs.listener is self:
            self.knobs.listener = self.prior
        self._attached = False

    def __call__(self, *, src: Any, metadata: Any, metadata_group: Any, times: Any, cache_hit: bool, **rest):
        try:
            if self._attached:
                self._hear(src, metadata, metadata_group)
        finally:
            if self.prior is not None:
                self.prior(
                    src=src,
                    metadata=metadata,
                    metadata_group=metadata_group,
                    times=times,
                    cache_hit=cache_hit,
                    **rest,
                )

    def _hear(self, src: Any, metadata: Any, group: Any) -> None:
        meta = dict(metadata) if isinstance(metadata, dict) else dict(getattr(metadata, "_asdict", dict)())
        fn = getattr(getattr(src, "fn", None), "fn", None)
        constants = getattr(src, "constants", None) or {}
        with self._lock:
            self.heard.append(
                {
                    "name": meta.get("name") or getattr(src, "name", None),
                    "meta": meta,
                    "files": {str(k): str(v) for k, v in dict(group or {}).items()},
                    "file": getattr(getattr(fn, "__code__", None), "co_filename", None),
                    "constants": {_const_name(k, src): v for k, v in dict(constants).items()},
                }
            )

    def binaries(self, load: bool = True) -> dict[str, list[Heard]]:
        """kernel name -> [(its module file, binary, its cubin)], the files read now; ``load``:
        load each cubin for its register and spill counts (needs the GPU)."""
        out: dict[str, list[Heard]] = {}
        seen: set[str] = set()
        for h in self.heard:
            meta = h["meta"]
            key = str(meta.get("hash") or "")
            if key in seen:
                continue
            seen.add(key)
            b = _binary(h, load)
            cubin = next((p for f, p in h["files"].items() if f.endswith(".cubin")), None)
            out.setdefault(str(h["name"]), []).append((h["file"], b, cubin))
        return out


def _const_name(key: Any, src: Any) -> str:
    """Triton keys constexprs by argument position (a tuple) in 3.x: the argument's name."""
    if isinstance(key, str):
        return key
    names = getattr(getattr(src, "fn", None), "arg_names", None) or []
    idx = key[0] if isinstance(key, tuple) and key else key
    return names[idx] if isinstance(idx, int) and idx < len(names) else str(key)


def _binary(h: dict[str, Any], load: bool) -> TritonBinary:
    meta, files = h["meta"], h["files"]
    ir = {}
    for level in LEVELS:
        path = next((p for f, p in files.items() if f.endswith("." + level)), None)
        if path and os.path.exists(path):
            ir[level] = Path(path).read_text(errors="replace")
    cubin = next((p for f, p in files.items() if f.endswith(".cubin")), None)
    target = meta.get("target") or {}
    if isinstance(target, dict):
        target_s = f"{target.get('backend')}:{target.get('arch')}"
    else:
        target_s = f"{getattr(target, 'backend', '?')}:{getattr(target, 'arch', '?')}"
    config = {k: v for k, v in h["constants"].items() if isinstance(v, int | float) and k.isupper()}
    config.update(num_warps=meta.get("num_warps"), num_stages=meta.get("num_stages"))
    regs, spills = _load(h, cubin) if load and cubin else (None, None)
    return TritonBinary(
        hash=str(meta.get("hash") or ""),
        config=config,
        num_warps=meta.get("num_warps"),
        num_stages=meta.get("num_stages"),
        shared=meta.get("shared"),
        n_regs=regs,
        n_spills=spills,
        target=target_s,
        ir=ir,
        ir_bounds=ir_bounds(ir),
        line_offset=_def_line(h["file"], str(h["name"])),
        **_device_limits(load),
    )


def _load(h: dict[str, Any], cubin: str) -> tuple[int | None, int | None]:
    """Registers and spills of the cubin, as Triton's driver reports them on loading it."""
    try:
        import torch
        from triton.runtime.driver import driver

        got = driver.active.utils.load_binary(
            h["name"], Path(cubin).read_bytes(), h["meta"].get("shared") or 0, torch.cuda.current_device()
        )
        return int(got[2]), int(got[3])
    except Exception:
        return None, None


def _device_limits(load: bool) -> dict[str, int | None]:
    if not load:
        return {}
    try:
        import torch

        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        return {
            "regs_per_sm": getattr(p, "regs_per_multiprocessor", None),
            "threads_per_sm": getattr(p, "max_threads_per_multi_processor", None),
            "shared_per_sm": getattr(p, "shared_memory_per_multiprocessor", None),
        }
    except Exception:
        return {}


def nvdisasm() -> str | None:
    """Triton's bundled nvdisasm, else one on the PATH."""
    try:
        import triton.backends.nvidia as nv

        bundled = Path(nv.__file__).parent / "bin" / "nvdisasm"
        if bundled.exists():
            return str(bundled)
    except Exception:
        pass
    return shutil.which("nvdisasm")


def _sass(cubin: str) -> str | None:
    tool = nvdisasm()
    if tool is None:
        return None
    try:
        run = subprocess.run(
            [tool, "--print-line-info", "--print-code", cubin], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return run.stdout if run.returncode == 0 and run.stdout else None


def _def_line(path: str | None, name: str) -> int:
    """The line of ``def name(`` in the kernel's module file (Triton's locations count lines
    of that file); 0 when unreadable. Made an offset against the report's source on joining."""
    if not path:
        return 0
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return 0
    return next((i + 1 for i, ln in enumerate(lines) if ln.startswith(f"def {name}(")), 0)


def best_config(path: str | None) -> dict[str, Any] | None:
    """Inductor's autotuning choice for the kernel in module ``path``: its ``.best_config``."""
    if not path:
        return None
    p = Path(path).with_suffix(".best_config")
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _hex(h: Any) -> str | None:
    """A Triton cache hash as hex: Inductor's ``.best_config`` writes it in base32 (upper
    case, no padding), Triton's listener hands it in hex."""
    if not isinstance(h, str) or not h:
        return None
    if all(c in "0123456789abcdef" for c in h):
        return h
    try:
        return base64.b32decode(h + "=" * (-len(h) % 8)).hex()
    except (ValueError, binascii.Error):
        return None


def _best_beside(mine: list[Heard]) -> dict[str, Any] | None:
    """Inductor's ``.best_config`` for these binaries where it is not named after the module
    (torch 2.11 names it by its autotune cache key): the one in the module's folder whose
    ``triton_cache_hash`` is one of them."""
    hashes = {_hex(b.hash) for _, b, _c in mine if b.hash}
    folders = {Path(p).parent for p, _b, _c in mine if p}
    for folder in folders:
        for f in sorted(folder.glob("*.best_config")):
            data = best_config(str(f.with_suffix(".py")))
            if data and _hex(data.get("triton_cache_hash")) in hashes:
                return data
    return None


def with_binaries(report: Report, found: dict[str, list[Heard]]) -> Report:
    """``report`` with each Triton kernel's binaries attached: matched by name and by the
    module's text (two graphs may each have a ``triton_poi_fused_0``), the chosen one marked,
    the IR kept for the chosen one only (the others keep their resources)."""
    if not found:
        return report
    kernels = []
    named: dict[str, int] = {}
    for k in report.kernels:
        if k.language == "triton":
            named[k.name] = named.get(k.name, 0) + 1
    for k in report.kernels:
        heard = found.get(k.name, [])
        mine = [h for h in heard if _same_module(h[0], k.source)]
        if not mine and named.get(k.name) == 1:  # one kernel of that name: its module, even if
            mine = heard  # the file differs from the wrapper's copy in whitespace or escapes
        if k.language != "triton" or not mine:
            kernels.append(k)
            continue
        kernels.append(dataclasses.replace(k, binaries=_marked(k, mine)))
    return dataclasses.replace(report, kernels=tuple(kernels))


def _same_module(path: str | None, source: str) -> bool:
    if not path:
        return True
    try:
        return Path(path).read_text(errors="replace").strip() == source.strip()
    except OSError:
        return True


def _marked(k, mine: list[Heard]) -> tuple[TritonBinary, ...]:
    best = best_config(mine[0][0]) or _best_beside(mine)
    want = _hex((best or {}).get("triton_cache_hash"))
    chosen = next((i for i, (_, b, _c) in enumerate(mine) if want and b.hash and _hex(b.hash) == want), None)
    if chosen is None and best:
        cfg = {a: v for a, v in best.items() if a.isupper() or a in ("num_warps", "num_stages")}
        chosen = next(
            (i for i, (_, b, _c) in enumerate(mine) if all(b.config.get(a) == v for a, v in cfg.items())),
            None,
        )
    if chosen is None and len(mine) == 1:
        chosen = 0
    t = read_triton_source(k.source)
    out = []
    for i, (_, b, cubin) in enumerate(mine):
        offset = b.line_offset - t.body_line if t and b.line_offset else 0
        keep = i == chosen or (chosen is None and i == 0)
        ir = dict(b.ir) if keep else {}
        if keep and cubin and (sass := _sass(cubin)):  # disassembled for the kept variant only
            ir["sass"] = sass
        out.append(
            dataclasses.replace(b, chosen=i == chosen, line_offset=offset, ir=ir, ir_bounds=ir_bounds(ir))
        )
    return tuple(out)
