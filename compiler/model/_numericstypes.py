"""The records of ``compiler.numerics``: where compiled outputs diverge from eager, and why.
Frozen dataclasses, saved with the report (``Report.numerics``; docs/numerics.md).

Each error is measured against a tolerance stated for its dtype (``TOLERANCES``): an element
agrees where ``|compiled - eager| <= atol + rtol * |eager|``, ``torch.testing.assert_close``'s
test, with its default tolerances for the 16-bit dtypes (about two units in the last place)."""

from __future__ import annotations

from dataclasses import dataclass

# dtype -> (rtol, atol). bf16, fp16: torch.testing.assert_close's defaults. fp32 and wider:
# 1e-5 both, looser than assert_close's 1.3e-6 rtol, which a reduction summed in another
# order already crosses; integers and bool: exact.
TOLERANCES: dict[str, tuple[float, float]] = {
    "torch.bfloat16": (1.6e-2, 1e-5),
    "torch.float16": (1e-3, 1e-5),
    "torch.float32": (1e-5, 1e-5),
    "torch.float64": (1e-7, 1e-7),
    "torch.complex64": (1e-5, 1e-5),
    "torch.complex128": (1e-7, 1e-7),
}

# the causes, in the order they are tried (compiler/bench/_numcause.py)
RANDOM = "random numbers drawn differently"
ROUNDING = "rounding inside a fusion"
TRACED = "the traced graph (aot_eager already differs)"
DECOMPOSITION = "a decomposition"
INDUCTOR = "an Inductor pass or lowering"
NOT_REPRODUCED = "not reproduced"


@dataclass(frozen=True)
class TensorError:
    """One tensor's error, compiled against eager."""

    name: str  # "output 0", "output['logits']", "blocks.0" (a module), "step 3 loss"
    dtype: str  # "torch.bfloat16"
    shape: tuple[int, ...]
    max_abs: float  # the largest |compiled - eager|
    max_rel: float  # max_abs over the largest |eager|
    rtol: float
    atol: float
    ok: bool  # every element within atol + rtol * |eager|
    note: str | None = None  # why it could not be compared ("shapes differ: (2, 3) vs (3, 2)")


@dataclass(frozen=True)
class ModuleError:
    """One nn.Module's output, compiled alone, on the inputs eager gave it, against eager's."""

    path: str  # "blocks.0.ln1"; "" is the module called
    kind: str  # its class: "LayerNorm"
    order: int  # when its forward ended in the eager run (0 first): execution order
    error: TensorError | None  # None: not compiled alone (note says why)
    note: str | None = None


@dataclass(frozen=True)
class NumericsTrial:
    """The call compiled again with one thing changed, against eager."""

    name: str  # "fallback_random", "emulate_precision_casts", "aot_eager", ...
    code: str  # what was changed, as code
    ok: bool  # within tolerance
    max_abs: float
    note: str | None = None  # it raised: the error in one line


@dataclass(frozen=True)
class NumericsCause:
    """Why compiled diverges: one of the causes above, what names it, the fix as code."""

    kind: str  # RANDOM, ROUNDING, TRACED, DECOMPOSITION, INDUCTOR, NOT_REPRODUCED
    words: str  # the evidence in one sentence
    fix: str | None = None  # code that makes compiled agree, where there is one
    backend: str | None = None  # the bisector's: "inductor"
    subsystem: str | None = None  # "lowerings", "post_grad_passes", "inductor_fallback_random"
    bisect_number: int | None = None  # the application of the subsystem that breaks the check
    debug_info: str | None = None  # what that application was (a node, a pass's name)


@dataclass(frozen=True)
class StepError:
    """A training step's loss and parameters, compiled against eager, after the step."""

    step: int  # 1 is the first
    loss: TensorError | None
    worst: TensorError | None  # the parameter (or optimizer state) with the largest error
    ok: bool


@dataclass(frozen=True)
class Numerics:
    """Where the compiled call diverges from eager, and why (``compiler.numerics``)."""

    name: str  # the function's or module's name
    state: str  # the context it ran under, as code ("torch.no_grad(), model.eval()"); "" none
    outputs: tuple[TensorError, ...] = ()
    modules: tuple[ModuleError, ...] = ()  # in execution order, those checked
    first_module: str | None = None  # the path of the first module whose output diverges
    trials: tuple[NumericsTrial, ...] = ()
    cause: NumericsCause | None = None  # None: the outputs agree within tolerance
    steps: tuple[StepError, ...] = ()  # compiler.numerics(..., steps=N)
    first_step: int | None = None  # the first step whose loss or parameters cross tolerance
    runs: int = 0  # compiled runs made (each a compile), the eager ones not counted
    max_runs: int = 0
    not_narrowed: tuple[str, ...] = ()  # what the runs left open, one line each
    compile_ids: tuple[str, ...] = ()  # the program's compiles of this function (its kernels)
    # the first generated kernel whose output diverges (GPU: compiler/bench/_numkernels.py)
    first_kernel: str | None = None
    kernel_error: TensorError | None = None

    @property
    def ok(self) -> bool:
        return all(e.ok for e in self.outputs) and all(s.ok for s in self.steps)
