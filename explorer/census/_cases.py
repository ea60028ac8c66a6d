"""What a census runs: its cases (a model of a models module, in one mode) and its settings.

A models module (docs/census.md) is a Python file or an importable module with
``CENSUS_MODELS``: a dict from a model's name to a factory that takes no argument and returns
``(model, inputs)``; ``inputs`` is a callable ``inputs(batch)`` returning the call's arguments
(a dict of keyword arguments, or a tuple of positional ones), or those arguments themselves.
``CENSUS_FAMILIES`` (optional) names each model's family. The built-in zoos are such modules.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import asdict, dataclass, field

ZOOS = {
    "hf-small": "explorer.census.zoo_hf",
    "hf-base": "explorer.census.zoo_hfbase",
    "timm-small": "explorer.census.zoo_timm",
    "timm-base": "explorer.census.zoo_timmbase",
    "torchvision": "explorer.census.zoo_torchvision",
}
# eval / train step, static (dynamic=False, called twice alike) or dynamic (dynamic=True,
# batch 2 then 3): a recompile in either is one the model makes itself
MODES = ("eval", "train", "eval-dynamic", "train-dynamic")
# fp32, or amp: bf16 autocast (explorer/census/_speed.py); a row's key names amp, fp32 is the default
PRECISIONS = ("fp32", "amp")
GPU_SHARE_ENV = "PT2X_CENSUS_GPU_SHARE"  # cases sharing a child's GPU: each may take 1/N of its memory


# the settings that only bound a case (its time, its process's address space): a row that
# finished under one limit is the same row under any other, so a census resumes (``--retry``
# its failed rows with a longer ``--timeout``) and merges across them, keeping the loosest
LIMITS = ("timeout_s", "memory_gb")


def loosest(limits: list) -> float | None:
    """The loosest of a limit's values (None: no limit), what every row finished within."""
    return None if None in limits else max(limits)


@dataclass(frozen=True)
class Settings:
    """What every case of a census shares (the census file's ``settings``)."""

    modes: tuple[str, ...] = ("eval",)
    precisions: tuple[str, ...] = ("fp32",)
    backend: str = "inductor"
    compile_mode: str | None = None  # torch.compile(mode=...): default, reduce-overhead, ...
    device: str = "cpu"
    timeout_s: float = 600.0
    memory_gb: float | None = 16.0  # the address-space limit of each case's process; None: none
    bench: bool = False  # time eager against compiled (compiler.benchmark) after the compile
    keep_trace: bool = False  # also write torch's own TORCH_TRACE log of each case
    # each case in an empty cache dir with the compile caches off (every stage recorded); else
    # the cases keep the user's caches, as their own runs do (a second census is warm)
    fresh: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Settings:
        """Back from ``to_dict`` (JSON's lists as tuples)."""
        return cls(**{**d, "modes": tuple(d["modes"]), "precisions": tuple(d.get("precisions", ("fp32",)))})


@dataclass(frozen=True)
class Case:
    source: str  # "hf-small", a module name, or a file's path: as given (the row's "source")
    model: str
    mode: str
    family: str | None = None
    module: str | None = None  # what the case's process imports (a file's absolute path), if not source
    precision: str = "fp32"
    batch: int | None = None  # the models module's batch size for it (CENSUS_BATCH); None: 2

    @property
    def importable(self) -> str:
        """The models module, as the case's process (in the census directory) finds it."""
        return self.module or self.source

    @property
    def key(self) -> str:
        """The row's name, unique in a census: ``model:mode``, ``model:mode:amp`` under AMP."""
        return f"{self.model}:{self.mode}" + (f":{self.precision}" if self.precision != "fp32" else "")

    @property
    def slug(self) -> str:
        """The case's file names: its key with path-safe characters only."""
        return slug_of(self.key)


def slug_of(key: str) -> str:
    """A row's file names from its key (``resnet18:eval:amp``: ``resnet18.eval.amp``)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key.replace(":", "."))


@dataclass
class Source:
    """A models module, loaded: its factories and families."""

    name: str
    models: dict
    families: dict = field(default_factory=dict)
    batches: dict = field(default_factory=dict)  # CENSUS_BATCH: a model's batch size


def module_name(source: str) -> str:
    """The module a source names: a zoo's, or the source itself."""
    return ZOOS.get(source, source)


def load_source(source: str) -> Source:
    """Import the models module ``source`` (a zoo's name, a ``.py`` file, or a module name);
    ValueError with one line saying what is wrong."""
    try:
        if source.endswith(".py"):
            if not os.path.isfile(source):
                raise ValueError(f"{source}: no such file")
            spec = importlib.util.spec_from_file_location(f"_census_models_{abs(hash(source))}", source)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = mod
            spec.loader.exec_module(mod)
        else:
            mod = importlib.import_module(module_name(source))
    except ValueError:
        raise
    except Exception as e:  # the user's module failed to import: its own error, one line
        raise ValueError(f"{source}: cannot import it: {type(e).__name__}: {_first_line(e)}") from None
    models = getattr(mod, "CENSUS_MODELS", None)
    if not isinstance(models, dict) or not models or not all(callable(f) for f in models.values()):
        raise ValueError(
            f"{source}: CENSUS_MODELS must be a non-empty dict of name -> factory (docs/census.md)"
        )
    return Source(
        source,
        models,
        dict(getattr(mod, "CENSUS_FAMILIES", None) or {}),
        dict(getattr(mod, "CENSUS_BATCH", None) or {}),
    )


def cases(
    sources: list[str],
    modes: tuple[str, ...],
    only: list[str] | None = None,
    precisions: tuple[str, ...] = ("fp32",),
) -> list[Case]:
    """Every model of ``sources`` in every mode and precision (model-major, in the modules'
    order); ``only``: these model names alone (ValueError naming one that no source has)."""
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise ValueError(f"unknown mode {bad[0]!r}: choose from {', '.join(MODES)}")
    bad = [p for p in precisions if p not in PRECISIONS]
    if bad:
        raise ValueError(f"unknown precision {bad[0]!r}: choose from {', '.join(PRECISIONS)}")
    out: list[Case] = []
    seen: dict[str, str] = {}
    for s in sources:
        src = load_source(s)
        where = os.path.abspath(s) if s.endswith(".py") else None  # the children run elsewhere
        for name in src.models:
            if only is not None and name not in only:
                continue
            if name in seen and seen[name] != s:  # its rows and files would be one case's
                raise ValueError(
                    f"{name!r} is a model of both {seen[name]} and {s}: run each as its own census "
                    "(--out) and join them with `census merge`, which names them apart"
                )
            seen[name] = s
            batch = src.batches.get(name)
            out += [
                Case(s, name, m, src.families.get(name), where, p, batch) for m in modes for p in precisions
            ]
    missing = [n for n in only or () if n not in seen]
    if missing:
        raise ValueError(f"no model named {missing[0]!r} in {', '.join(sources)}")
    return out


def parse_shard(text: str) -> tuple[int, int]:
    """``i/n`` (0 <= i < n) -> (i, n); ValueError otherwise."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard {text!r}: expected i/n, e.g. 0/4") from None
    if not 0 <= i < n:
        raise ValueError(f"--shard {text!r}: i must be in 0..n-1")
    return i, n


def shard(all_cases: list[Case], i: int, n: int) -> list[Case]:
    """The cases of shard ``i`` of ``n``: every n-th, from the i-th (shards split the list
    whole, each case in one shard; a model's modes may fall in different shards)."""
    return all_cases[i::n]


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""
