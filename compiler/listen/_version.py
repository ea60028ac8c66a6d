"""Which torch versions we support, checked when recording is first used."""

from __future__ import annotations

from ..parse._names import major_minor

# Tested on 2.11 (GPU machine) and 2.13 (CPU). 2.8 is the oldest whose graph-break
# text ("Graph Break Reason: ...") and structured-trace events we parse.
MIN_SUPPORTED = (2, 8)
MAX_TESTED = (2, 13)
SUPPORTED = "torch >= 2.8 (tested: 2.11, 2.13)"


class UnsupportedTorchVersion(RuntimeError):
    pass


def parse(version: str) -> tuple[int, int]:
    got = major_minor(version)
    if got is None:
        raise UnsupportedTorchVersion(f"cannot read torch version {version!r}; need {SUPPORTED}")
    return got


def check(version: str | None = None) -> tuple[int, int]:
    """The installed torch's (major, minor), or ``version``'s; UnsupportedTorchVersion below 2.8."""
    if version is None:
        import torch

        version = torch.__version__
    v = parse(version)
    if v < MIN_SUPPORTED:
        raise UnsupportedTorchVersion(f"PT2 Explorer needs {SUPPORTED}; this is torch {version}")
    return v


def torch_names(package: str, names: dict[str, str]):
    """The ``__getattr__`` (PEP 562) of a package whose public ``names`` import torch, each
    mapped to the compiler module that defines it ("module:attribute" where the name differs):
    ``__getattr__ = torch_names(__name__, {...})``. The first use of a name checks torch's
    version, imports its module and keeps the value in the package, so that ``import compiler``
    and reading a report import no torch."""
    import importlib
    import sys

    def __getattr__(name: str):
        module, _, attribute = names.get(name, "").partition(":")
        if not module:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if module != "listen._version":
            check()
        value = getattr(importlib.import_module(f"compiler.{module}"), attribute or name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
