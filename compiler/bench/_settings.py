"""A fix's settings made in torch's own config (compiler/why/_advice.py names them): set at a
program's start-up (``apply_fix``, ``pt2-explorer advise``'s runs), or patched around a block
(``patched``, ``compiler.advise``) with torch's config patch context managers. Nothing of
torch's is patched but its config; the user's files are never touched."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

import torch

from ..model._advicetypes import REGIONAL_SETTING, Fix

_MATMUL = "torch.set_float32_matmul_precision"
_regional_done: dict[str, list[str]] = {}  # a regional fix's path -> the block classes it wrapped


def _config(module: str):
    if module not in ("torch._dynamo.config", "torch._inductor.config"):
        raise ValueError(f"not a config module advise sets: {module}")
    return importlib.import_module(module)


def _key(config, key: str) -> str:
    """``recompile_limit`` was ``cache_size_limit`` before torch 2.7: the name this torch has."""
    if key == "recompile_limit" and not hasattr(config, key) and hasattr(config, "cache_size_limit"):
        return "cache_size_limit"
    return key


def _get(config, key: str):
    obj = config
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj


def _set(config, key: str, value) -> None:
    *parents, last = key.split(".")
    obj = config
    for part in parents:
        obj = getattr(obj, part)
    setattr(obj, last, value)


def _function(value: str):
    """The function a set's setting adds, named ``PACKAGE:dotted.name``
    (``transformers:logging.Logger.warning_once``): looked up, and where it is not there yet
    (a library adds it to ``logging.Logger`` when imported), after importing PACKAGE."""
    package, _, dotted = value.rpartition(":")
    first, *rest = dotted.split(".")

    def find():
        obj = importlib.import_module(first)
        for part in rest:
            obj = getattr(obj, part)
        return obj

    try:
        return find()
    except AttributeError:
        if not package:
            raise
        importlib.import_module(package)
        return find()


def apply_fix(fix: Fix) -> None:
    """Make ``fix``'s settings in this process (before the program runs and compiles)."""
    for module, key, value in fix.settings:
        if module == REGIONAL_SETTING:
            _regional(key)
        elif module == _MATMUL:
            torch.set_float32_matmul_precision(value)
        elif key.endswith(".add"):
            _get(_config(module), key[: -len(".add")]).add(_function(value))
        else:
            config = _config(module)
            _set(config, _key(config, key), value)


def _regional(path: str) -> None:
    """Regional compilation of the blocks at ``path`` of the program's model, made before its
    first call: a global forward pre-hook of torch's (``register_module_forward_pre_hook``)
    waits for the first module called outside compiled code that holds ``path`` (the model, or
    the ``torch.compile`` wrapper of it), wraps the ``forward`` of its blocks' class(es) in
    ``torch.compiler.nested_compile_region`` (torch's API for a repeated region: Dynamo traces
    it once and Inductor compiles it once, every block then calls that one compiled region)
    and removes itself. The program's own ``torch.compile`` call is left as it is."""
    from torch.nn.modules.module import register_module_forward_pre_hook

    def hook(module, args):
        if torch.compiler.is_compiling():
            return
        root = getattr(module, "_orig_mod", module)
        try:
            blocks = root.get_submodule(path)
        except AttributeError:
            return
        handle.remove()
        wrapped = _regional_done.setdefault(path, [])
        for cls in dict.fromkeys(type(b) for b in blocks.children()):
            cls.forward = torch.compiler.nested_compile_region(cls.forward)
            wrapped.append(f"{cls.__module__}.{cls.__qualname__}")

    handle = register_module_forward_pre_hook(hook)


def overridden(fix: Fix, calls=()) -> list[str]:
    """The settings of ``fix`` that no longer hold (the program set them itself, after
    start-up), and the compiled functions of ``calls`` (``compiler.compiled_calls()``'s) whose
    own ``torch.compile`` arguments undo it (``dynamic=False``, the key in ``options``), each
    in words."""
    out = []
    for c in calls:
        if fix.name == "dynamic" and c.compile_kwargs.get("dynamic") is False:
            out.append(
                f"{c.name} is compiled with dynamic=False, which keeps its sizes static whatever the config"
            )
        options = c.compile_kwargs.get("options") or {}
        for _module, key, value in fix.settings:
            if key in options and options[key] != value:
                out.append(
                    f"{c.name} is compiled with options={{{key!r}: {options[key]!r}}}, over the fix's {value!r}"
                )
    for module, key, value in fix.settings:
        if module == REGIONAL_SETTING:
            done = _regional_done.get(key)
            out.append(
                f"regional compilation applied to {', '.join(done)} (the blocks of {key})"
                if done
                else f"regional compilation NOT applied: no module called outside compiled code holds {key}"
            )
            continue
        if key.endswith(".add"):
            name = f"{module}.{key[: -len('.add')]}"
            if _function(value) not in _get(_config(module), key[: -len(".add")]):
                out.append(f"{name} no longer holds {value.rpartition(':')[2]}: the program set it itself")
            continue
        if module == _MATMUL:
            now = torch.get_float32_matmul_precision()
            name = "torch.get_float32_matmul_precision()"
        else:
            config = _config(module)
            name = f"{module}.{_key(config, key)}"
            now = _get(config, _key(config, key))
        if now != value:
            out.append(f"{name} is {now!r}, not {value!r}: the program set it itself")
    return out


@contextlib.contextmanager
def patched(fix: Fix | None) -> Iterator[None]:
    """``fix``'s settings inside the block (torch's ``config.patch``; the matmul precision set
    and put back), none for None."""
    with contextlib.ExitStack() as stack:
        for module, key, value in fix.settings if fix else ():
            if module == REGIONAL_SETTING:
                raise ValueError("regional compilation is tried by `pt2-explorer advise --compile-time` only")
            if module == _MATMUL:
                before = torch.get_float32_matmul_precision()
                torch.set_float32_matmul_precision(value)
                stack.callback(torch.set_float32_matmul_precision, before)
            elif key.endswith(".add"):
                config, base = _config(module), key[: -len(".add")]
                stack.enter_context(config.patch({base: {*_get(config, base), _function(value)}}))
            else:
                config = _config(module)
                stack.enter_context(config.patch({_key(config, key): value}))
        yield
