"""The recording options and the benchmark options, each list declared once.

``compiler.recording`` (and ``Recording``) take ``RecordOptions``' fields as keywords,
``compiler.benchmark`` takes ``BenchOptions``'; a field's metadata gives its one-line help and,
where it has one, its flag: ``pt2-explorer record`` and ``%%compile`` build their arguments
from ``flags()`` (explorer/cli/_record.py, explorer/notebook/_magic.py), so the CLI, the magic
and the API share each option's name, default and help (tests/test_options.py).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._progresstypes import Progress


def _option(default: Any, help: str, flag: str | None = None, *, type: type | None = None) -> Any:
    """A field of an options list: ``flag`` where the CLI and ``%%compile`` have it (a switch
    unless ``type`` says what its value is), ``help`` shown by both and by ``help()``."""
    return dataclasses.field(default=default, metadata={"help": help, "flag": flag, "type": type})


class _Options:
    """What both lists do: checked keywords, a signature, flags."""

    @classmethod
    def of(cls, given: Mapping[str, Any], where: str):
        """The options from the keywords ``where`` was given; an unknown one is a TypeError
        naming it and the known ones (as Python's own, with the list)."""
        known = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        unknown = [k for k in given if k not in known]
        if unknown:
            raise TypeError(
                f"{where}() got an unexpected keyword argument {unknown[0]!r} (its options: {', '.join(known)})"
            )
        return cls(**given)

    @classmethod
    def split(cls, kwargs: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The keywords named like an option, as options, and the others (the function's own)."""
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        ours = {k: v for k, v in kwargs.items() if k in names}
        return cls(**ours), {k: v for k, v in kwargs.items() if k not in names}

    def keywords(self) -> dict[str, Any]:
        """Every option by its name (for the function that takes them as keywords)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        """The options as keyword-only parameters (for a function's ``__signature__``)."""
        return [
            inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.type)
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        ]

    @classmethod
    def help(cls) -> dict[str, str]:
        """Each option's name and its one-line help."""
        return {f.name: f.metadata["help"] for f in dataclasses.fields(cls)}  # type: ignore[arg-type]

    @classmethod
    def flags(cls, prefix: str = "") -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
        """``(args, kwargs)`` of ``argparse``'s ``add_argument`` (and IPython's ``@argument``)
        for each option that has a flag, in the list's order; ``prefix`` starts its help.
        The value lands under the option's name (``--fresh``: ``caches``, False)."""
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            flag, tp = f.metadata["flag"], f.metadata["type"]
            if flag is None:
                continue
            kwargs: dict[str, Any] = {"dest": f.name, "help": prefix + f.metadata["help"].replace("%", "%%")}
            if tp is None:  # a switch: it turns on what is off by default, or off what is on
                kwargs["action"] = "store_false" if f.default is True else "store_true"
            else:
                kwargs.update(type=tp, default=f.default, metavar="N")
            yield (flag,), kwargs

    @classmethod
    def flagged(cls, parsed: Any) -> dict[str, Any]:
        """The options that have a flag, as ``parsed`` (``flags()``' arguments, parsed) holds them."""
        return {kw["dest"]: getattr(parsed, kw["dest"]) for _, kw in cls.flags()}


@dataclass(frozen=True)
class RecordOptions(_Options):
    """What ``compiler.recording`` keeps beyond the default (its docstring says what each costs)."""

    caches: bool = _option(
        True,
        "turn Inductor's and AOTAutograd's caches off: every stage runs and is recorded (a cold compile); "
        "by default the caches are kept, and what a hit skips (the kernels' nodes, the IR around fusion) is "
        "filled in afterwards by compiling the graph cold in a fresh process: `record --json R` starts it "
        "in the background and writes R again when it ends; `report R --fill` and compiler.fill(report) "
        "run it",
        "--fresh",
    )
    triton_ir: bool = _option(
        False,
        "keep every Triton kernel's IR, registers and spills (GPU; kernels compile one at a time)",
        "--triton-ir",
    )
    fusion_ir: bool = _option(
        False,
        "keep Inductor's IR before and after fusion (rendered after the compile: 5-15% of its time)",
        "--fusion-ir",
    )
    fusion_logs: bool = _option(
        False,
        "keep Inductor's fusion decisions (its fusion loggers at debug level: ~8% of a compile)",
        "--fusion-log",
    )
    provenance: bool = _option(True, "keep the CPU kernel-to-node map (Inductor's provenance tracking)")
    on_stage: Callable[[str, str], None] | None = _option(
        None, "called with (compile_id, stage) as each compile reaches a stage (progress displays)"
    )
    on_progress: Callable[[Progress], None] | None = _option(
        None,
        "called with a compiler.types.Progress (frame, stage, graph size, kernel n of N) as torch's events "
        "change it (progress displays)",
    )
    journal: str | os.PathLike[str] | None = _option(
        None, "append every event to this file as it arrives (a TORCH_TRACE log; load_trace reads it)"
    )


@dataclass(frozen=True)
class BenchOptions(_Options):
    """How ``compiler.benchmark`` measures (docs/benchmark.md)."""

    reps: int | None = _option(None, "timed calls per arm (default: about 1 s per arm)", "--reps", type=int)
    warmup: int | None = _option(None, "untimed calls per arm before the timed ones (default 3)")
    profile: bool = _option(True, "profile the compiled kernels (3 calls under torch.profiler)")
    mutates: bool = _option(
        False, "the function changes state in place: snapshot it and restore it after each call", "--mutates"
    )
    compiled: Callable | None = _option(
        None, "the compiled callable to time (default: the one the report remembers, or fn compiled)"
    )
    compile_options: dict | None = _option(
        None,
        "the torch.compile keywords `compiled` was made with (its backend and mode, which the verdict names; "
        "default: unknown)",
    )
    name: str | None = _option(None, "the benchmark's label (default: the function's name)")
    progress: Any = _option(True, "show progress (True: a line on stderr; a callable gets each line)")
    atol: float | None = _option(None, "absolute tolerance of the accuracy check (default: by dtype)")
    rtol: float | None = _option(None, "relative tolerance of the accuracy check (default: by dtype)")
