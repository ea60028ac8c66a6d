"""The state a compiled call ran under, kept at the call and put back around each call a
benchmark makes (``compiler.compiled_calls``, ``compiler.benchmark``).

A compiled call depends on more than its arguments: Dynamo's global-state guard covers grad
mode, autocast (each device type's switch and dtype, and its cache), the default dtype,
deterministic algorithms, the matmul and cuDNN precision flags and the thread count, and its
guards check each module's ``training`` flag. A call made under other state fails those guards
and torch compiles another graph: a benchmark run after the program, outside the program's
``torch.no_grad()`` or autocast, times a graph the program never ran. So the state is read at
each kept call with torch's public getters, and a benchmark enters it with torch's own
context managers and setters, putting back what it changed when it leaves. Nothing of torch's
is patched.

Random numbers: the generators' states at the call are kept too; ``seed_rng`` puts them back
before a call whose outputs are compared, so a function that draws (dropout) draws what the
program's call drew.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

# the device types whose autocast is read (torch.is_autocast_enabled(device_type), torch >= 2.4)
AUTOCAST_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu")


@dataclass(frozen=True)
class CallState:
    """What a compiled call ran under, beyond its arguments (module docstring)."""

    grad: bool
    inference: bool
    autocast: tuple[tuple[str, bool, Any], ...]  # (device type, enabled, dtype) for AUTOCAST_DEVICES
    autocast_cache: bool
    default_dtype: Any
    matmul_precision: str
    reduced_precision: tuple[bool, bool] | None  # cuda matmul fp16, bf16 reduced-precision reductions
    cudnn: tuple[bool, bool, bool, bool] | None  # enabled, benchmark, deterministic, allow_tf32
    deterministic: tuple[bool, bool]  # use_deterministic_algorithms, warn_only
    threads: int
    training: tuple[tuple[torch.nn.Module, bool], ...] = ()  # each module's flag at the call
    rng_cpu: Any = None
    rng_cuda: Any = None

    def seed_rng(self) -> None:
        """Put the random-number generators where they were at the call."""
        if self.rng_cpu is not None:
            torch.set_rng_state(self.rng_cpu)
        if self.rng_cuda is not None and torch.cuda.is_initialized():
            torch.cuda.set_rng_state_all(self.rng_cuda)

    def words(self) -> str:
        """The state as code a reader knows, only what differs from torch's defaults:
        ``torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16)``; "" when none does."""
        out = []
        if self.inference:
            out.append("torch.inference_mode()")
        elif not self.grad:
            out.append("torch.no_grad()")
        for device, enabled, dtype in self.autocast:
            if enabled:
                out.append(f'torch.autocast("{device}", dtype={dtype})')
        if self.default_dtype is not torch.float32:
            out.append(f"torch.set_default_dtype({self.default_dtype})")
        if self.deterministic[0]:
            out.append("torch.use_deterministic_algorithms(True)")
        evals = [m for m, flag in self.training if not flag]
        if self.training and len(evals) == len(self.training):
            out.append("model.eval()")
        elif evals:
            out.append(f"{len(evals)} of {len(self.training)} modules in eval mode")
        return ", ".join(out)


def _try(get, default=None):
    try:
        return get()
    except Exception:  # a getter this torch or build lacks (no CUDA, another backend)
        return default


def _autocast() -> tuple[tuple[str, bool, Any], ...]:
    out = []
    for device in AUTOCAST_DEVICES:
        enabled = _try(lambda d=device: torch.is_autocast_enabled(d))
        if enabled is None:
            continue
        out.append((device, bool(enabled), _try(lambda d=device: torch.get_autocast_dtype(d))))
    return tuple(out)


def _cudnn() -> tuple[bool, bool, bool, bool] | None:
    b = torch.backends.cudnn
    return _try(lambda: (bool(b.enabled), bool(b.benchmark), bool(b.deterministic), bool(b.allow_tf32)))


def _reduced() -> tuple[bool, bool] | None:
    m = torch.backends.cuda.matmul
    return _try(
        lambda: (
            bool(m.allow_fp16_reduced_precision_reduction),
            bool(m.allow_bf16_reduced_precision_reduction),
        )
    )


def modules_in(*objs: Any) -> list[torch.nn.Module]:
    """Every module of the nn.Modules among ``objs`` (a compiled module's own, a bound
    method's owner, modules passed as arguments), each once, in order."""
    seen: dict[int, torch.nn.Module] = {}
    for obj in objs:
        obj = getattr(obj, "_orig_mod", obj)  # torch's OptimizedModule: the module it compiled
        owner = getattr(obj, "__self__", None)
        if isinstance(owner, torch.nn.Module):
            obj = owner
        if isinstance(obj, torch.nn.Module):
            for m in obj.modules():
                seen.setdefault(id(m), m)
    return list(seen.values())


def capture(modules: list[torch.nn.Module] = ()) -> CallState:  # type: ignore[assignment]
    """The state now (module docstring), with ``modules``' training flags."""
    return CallState(
        grad=torch.is_grad_enabled(),
        inference=torch.is_inference_mode_enabled(),
        autocast=_autocast(),
        autocast_cache=bool(_try(torch.is_autocast_cache_enabled, True)),
        default_dtype=torch.get_default_dtype(),
        matmul_precision=torch.get_float32_matmul_precision(),
        reduced_precision=_reduced(),
        cudnn=_cudnn(),
        deterministic=(
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        ),
        threads=torch.get_num_threads(),
        training=tuple((m, m.training) for m in modules),
        rng_cpu=torch.get_rng_state(),
        rng_cuda=torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None,
    )


def differences(state: CallState) -> list[str]:
    """What of ``state`` does not hold now, each in words; [] inside ``replaying(state)``."""
    now = capture([m for m, _ in state.training])
    out = []
    for name in ("grad", "inference", "autocast", "autocast_cache", "default_dtype", "matmul_precision"):
        if getattr(now, name) != getattr(state, name):
            out.append(f"{name}: {getattr(state, name)} at the call, {getattr(now, name)} now")
    for name in ("reduced_precision", "cudnn", "deterministic", "threads"):
        if getattr(now, name) != getattr(state, name):
            out.append(f"{name}: {getattr(state, name)} at the call, {getattr(now, name)} now")
    changed = [m for (m, a), (_, b) in zip(state.training, now.training, strict=True) if a != b]
    if changed:
        out.append(f"training: {len(changed)} modules' flags differ from the call's")
    return out


@contextlib.contextmanager
def replaying(state: CallState | None) -> Iterator[None]:
    """Inside the block, the state ``state`` holds (None: the state as it is); what was
    changed is put back on leaving. Only what differs from now is touched: torch's grad,
    inference-mode and autocast context managers, its setters for the rest."""
    if state is None:
        yield
        return
    with contextlib.ExitStack() as stack:
        if torch.is_inference_mode_enabled() != state.inference:
            stack.enter_context(torch.inference_mode(state.inference))
        if torch.is_grad_enabled() != state.grad:
            stack.enter_context(torch.set_grad_enabled(state.grad))
        now = dict((d, (e, t)) for d, e, t in _autocast())
        for device, enabled, dtype in state.autocast:
            if now.get(device) != (enabled, dtype) or (
                enabled and _try(torch.is_autocast_cache_enabled, True) != state.autocast_cache
            ):
                stack.enter_context(
                    torch.autocast(device, dtype=dtype, enabled=enabled, cache_enabled=state.autocast_cache)
                )
        _set(stack, torch.get_default_dtype, torch.set_default_dtype, state.default_dtype)
        _set(
            stack,
            torch.get_float32_matmul_precision,
            torch.set_float32_matmul_precision,
            state.matmul_precision,
        )
        if state.reduced_precision is not None and _reduced() != state.reduced_precision:
            m = torch.backends.cuda.matmul
            before = _reduced()
            m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction = (
                state.reduced_precision
            )
            stack.callback(_put_reduced, before)
        if state.cudnn is not None and _cudnn() != state.cudnn:
            enabled, benchmark, deterministic, tf32 = state.cudnn
            stack.enter_context(
                torch.backends.cudnn.flags(
                    enabled=enabled, benchmark=benchmark, deterministic=deterministic, allow_tf32=tf32
                )
            )
        det = (
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        )
        if det != state.deterministic:
            torch.use_deterministic_algorithms(state.deterministic[0], warn_only=state.deterministic[1])
            stack.callback(torch.use_deterministic_algorithms, det[0], warn_only=det[1])
        _set(stack, torch.get_num_threads, torch.set_num_threads, state.threads)
        for m, flag in state.training:
            if m.training != flag:
                m.training = flag  # this module alone: .train() would set its children too
                stack.callback(setattr, m, "training", not flag)
        yield


def _set(stack: contextlib.ExitStack, get, put, value) -> None:
    before = get()
    if before != value:
        put(value)
        stack.callback(put, before)


def _put_reduced(before: tuple[bool, bool] | None) -> None:
    if before is not None:
        m = torch.backends.cuda.matmul
        m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction = before
