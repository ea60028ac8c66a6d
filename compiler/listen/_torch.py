"""Every torch internal the recorder reads, in one place (tests/test_torch_internals.py checks
each against the installed torch). Names here are not public API: when a torch release moves
one, this module is the only one to change; beside it, compiler/listen/_torchfusion.py holds the
code that works inside Inductor's scheduler (the pass that snapshots the IR around fusion),
built on the names here.

Imports of torch are lazy. torch's files read without importing it are apart, below the
recording: its location (compiler/model/_paths.py) and its graph-break registry
(compiler/parse/_registry.py).
"""

from __future__ import annotations

import logging
from typing import Any

# the structured-trace logger (torch._logging._internal.trace_log): TORCH_TRACE's stream
TRACE_LOGGER = "torch.__trace"

# Inductor's artifact loggers we attach to: (module qualname, artifact name): the fusion
# decisions ("fusion") only; the IR before and after fusion comes from the scheduler hooks below
FUSION_LOGGERS = (("torch._inductor.scheduler", "fusion"),)
# Inductor's CUDA-graph loggers (artifact "cudagraphs"): each recording, re-recording and
# warm-up of a graph tree with the compile id in brackets, and the skips found while running;
# not in the structured trace. Listened to in every recording (silent where nothing runs
# under CUDA graphs); its warnings still reach the user's handlers as without us.
CUDAGRAPH_LOGGERS = (
    ("torch._inductor.cudagraph_trees", "cudagraphs"),
    ("torch._inductor.cudagraph_utils", "cudagraphs"),
)
# the "annotation" artifact loggers' debug messages about seq_nr, the number torch gives each
# node of a joint graph so that a backward node and the forward node it differentiates share it
# (node.meta["seq_nr"], not in the printed graph): torch/fx/proxy.py says which nodes were traced
# in the backward ("<node>: seq_nr from current_meta grad_fn_seq_nr"), and
# torch/_functorch/_aot_autograd/utils.py (copy_fwd_metadata_to_bw_nodes) each forward node per
# seq_nr ("forward:: key: <seq_nr>, value: <node>") and then every node's ("node: <node>",
# "seq_nr: <seq_nr>"), the joint graph's output last. Silent where torch logs none of them.
SEQ_NR_LOGGERS = (("torch.fx.proxy", "annotation"), ("torch._functorch._aot_autograd.utils", "annotation"))
SEQ_NR_BACKWARD = ": seq_nr from current_meta grad_fn_seq_nr"
SEQ_NR_LINES = ("forward:: key: ", "node: ", "seq_nr: ")
# Inductor's scheduler pass hook before fusion (torch/_inductor/config.py, taking and returning
# the scheduler's node list): the recording snapshots the nodes and the scheduler there and
# renders them after the compile with Inductor's own formatter, into the text the
# ``ir_pre_fusion`` / ``ir_post_fusion`` loggers carry (which Inductor would render during the
# compile: sympy printing of every dependency and an FX module per loop body, 10-20% of a GPU
# compile). Torch's FX-graph cache key leaves this hook's value out (the one after fusion is in).
FUSION_PASS = "_pre_fusion_custom_pass"
FUSION_ARTIFACTS = ("ir_pre_fusion", "ir_post_fusion")
# the Scheduler attribute its constructor sets right after logging the IR after fusion: there
# only where the scheduler got that far
SCHEDULER_DONE = "buffer_names_to_free"
FUSION_HEADERS = {"ir_pre_fusion": "BEFORE FUSION\n", "ir_post_fusion": "AFTER FUSION\n"}

# Dynamo's graph as handed to the backend: logged lazily on this artifact logger
# (torch/_dynamo/output_graph.py: ``graph_code_log.debug("%s", lazy_format_graph_code(name, gm))``)
GRAPH_CODE_LOGGER = ("torch._dynamo.output_graph", "graph_code")

# async_compile logs each kernel's source on this artifact logger as it starts compiling it,
# while the wrapper module loads (torch/_inductor/async_compile.py: ``kernel_code_log.info(
# "CPP+Bindings Kernel:\n%s", source_code)``, "Triton Kernel:", …): one record per kernel
KERNEL_CODE_LOGGER = ("torch._inductor.async_compile", "kernel_code")

# config names the recording patches (through torch's own config.patch)
INDUCTOR_FX_GRAPH_CACHE = "fx_graph_cache"
INDUCTOR_PROVENANCE = "trace.provenance_tracking_level"
# Inductor's provenance levels (torch/_inductor/config.py, 2.9+): 0 off, 1 "normal", 2 "basic".
# Both map each kernel to the post-grad nodes it fused (inductor_provenance_tracking_node_mappings,
# ``*CodeToPost``); "normal" also carries every node's history through each FX pass
# (torch.fx.traceback.preserve_node_meta: a deep-copied NodeSource per node per pass), which
# costs ~5% of a GPU BERT compile and only refines the pre-grad side of the mapping.
PROVENANCE_BASIC = 2
FUNCTORCH_AUTOGRAD_CACHE = "enable_autograd_cache"
# Inductor's switch that turns every compile cache off (TORCHINDUCTOR_FORCE_DISABLE_CACHES=1)
INDUCTOR_FORCE_DISABLE_CACHES = "force_disable_caches"
# 1: Inductor compiles its kernels in this process (Triton's listener hears them; _tritonir.py)
INDUCTOR_COMPILE_THREADS = "compile_threads"


def trace_logger() -> logging.Logger:
    return logging.getLogger(TRACE_LOGGER)


def artifact_logger(module: str, artifact: str) -> logging.Logger | None:
    """Inductor's artifact logger, or None where this torch does not register it."""
    import torch

    try:
        return torch._logging.getArtifactLogger(module, artifact)
    except ValueError:
        return None


def current_compile_id() -> tuple[int, int] | None:
    """(frame_id, frame_compile_id) of the compile running in this thread, if any."""
    import torch

    cid = torch._guards.CompileContext.current_compile_id()
    if cid is None or cid.frame_id is None:
        return None
    return cid.frame_id, cid.frame_compile_id


def compile_context_key() -> object | None:
    """The compile running in this thread as torch's own CompileId (hashable, None outside a
    compile): a cheap key where a handler only needs "the same compile or not" for each of
    thousands of log lines (compiler/listen/_seqnr.py)."""
    import torch

    return torch._guards.CompileContext.current_compile_id()


def current_compiled_autograd_id() -> int | None:
    """Compiled Autograd's graph id when the compile running in this thread is Dynamo
    compiling that graph (CompileId.compiled_autograd_id), else None."""
    import torch

    cid = torch._guards.CompileContext.current_compile_id()
    return getattr(cid, "compiled_autograd_id", None) if cid is not None else None


def interned_strings() -> dict[int, str]:
    """torch interns file names once per process (``str`` events); a recording that starts
    after earlier compiles never sees those events, so read the table torch keeps."""
    try:
        from torch._logging import structured

        return {v: k for k, v in structured.INTERN_TABLE.items()}
    except (ImportError, AttributeError):
        return {}


def inductor_config():
    import torch._inductor.config

    return torch._inductor.config


def caches_on(inductor: Any) -> bool:
    """Is Inductor's FX-graph cache on as the config stands (the user may have turned it off,
    or every cache with ``force_disable_caches``)?"""
    return bool(getattr(inductor, INDUCTOR_FX_GRAPH_CACHE)) and not getattr(
        inductor, INDUCTOR_FORCE_DISABLE_CACHES, False
    )


def functorch_config():
    import torch._functorch.config

    return torch._functorch.config


# ---- guard evaluation for "would this recompile?" (compiler/bench/_recheck.py) ----


def compiled_original(fn: Any) -> Any | None:
    """The function torch.compile wrapped (``_torchdynamo_orig_callable``; for a compiled
    nn.Module, the wrapper of its forward that Dynamo compiles), or None if ``fn`` is not
    torch.compile's."""
    mod = getattr(fn, "_orig_mod", None)
    if mod is None:
        return getattr(fn, "_torchdynamo_orig_callable", None)
    target = getattr(fn, "_forward", None) or getattr(fn, "forward", None)
    orig = getattr(target, "_torchdynamo_orig_callable", None)
    if getattr(orig, "__self__", None) is mod and getattr(orig, "__name__", "") != "forward":
        # torch runs the module's __call__ (its hooks) outside Dynamo and compiles the frame
        # of its forward (OptimizedModule._initialize)
        return mod.forward
    return orig


def cache_entries(code: Any) -> list[Any]:
    """The compiled entries torch keeps for a code object, newest first (the order Dynamo
    tries them); torch's own fail_on_recompile stance reads the same list."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    return list(_debug_get_cache_entry_list(code))


def entry_compile_id(entry: Any) -> str:
    return str(entry.compile_id)


def check_entry(entry: Any, f_locals: dict[str, Any]) -> str | None:
    """None when the entry's guards pass for these frame locals, else torch's reason (as its
    recompile_reasons print it, "0/0: tensor 'x' size mismatch at index 0. expected 3, actual
    4"). Evaluating guards runs no user code and changes no cache."""
    gm = entry.guard_manager
    info = gm.check_verbose(f_locals)
    if info.result:
        return None
    import inspect

    from torch._dynamo import guards

    helper = getattr(guards, "get_guard_fail_reason_helper", None)
    if helper is not None:
        try:
            if "backend" in inspect.signature(helper).parameters:
                return helper(gm, f_locals, entry.compile_id, getattr(entry, "backend", None))
            return helper(gm, f_locals, entry.compile_id)
        except Exception:  # a reason torch cannot phrase: the failed guard's code below
            pass
    parts = [str(p) for p in info.verbose_code_parts]
    return f"{entry.compile_id}: {'; '.join(parts) or 'guard failed'}"


def recompile_limit() -> int:
    """How many entries a frame may hold (config.recompile_limit; cache_size_limit before)."""
    import torch

    cfg = torch._dynamo.config
    return int(getattr(cfg, "recompile_limit", None) or getattr(cfg, "cache_size_limit", 8))


def fail_on_recompile():
    """torch's stance that raises instead of recompiling (a context manager)."""
    import torch

    return torch.compiler.set_stance("fail_on_recompile")


# ---- max-autotune: Inductor's choice feedback (torch/_inductor/select_algorithm.py) ----------
# Where Inductor benchmarks choices for an op (GEMM templates vs ATen/oneDNN/MKL externs), it
# calls each function given to `add_feedback_saver` with (timings {ChoiceCaller: ms}, op name,
# input IR nodes, choices, profiler thunk, precompile times). torch offers no removal of one
# saver (only `clear_feedback_savers`, which would drop other users' too): we take ours out of
# the selector cache's list.


def add_autotune_feedback(fn: Any) -> bool:
    try:
        from torch._inductor import select_algorithm
    except ImportError:
        return False
    if not hasattr(select_algorithm, "add_feedback_saver"):
        return False
    select_algorithm.add_feedback_saver(fn)
    return True


def remove_autotune_feedback(fn: Any) -> None:
    from torch._inductor import select_algorithm

    savers = getattr(select_algorithm.get_algorithm_selector_cache(), "feedback_saver_fns", None)
    if isinstance(savers, list) and fn in savers:
        savers.remove(fn)


def autotune_choices(
    timings: dict, name: str, input_nodes: list, precompile_times: dict | None = None
) -> dict[str, Any]:
    """One benchmarked op as JSON-able facts: its name, its inputs' sizes as torch prints them
    in its AUTOTUNE table ("32x64"), each choice's time in ms (None: failed, inf) and its
    ``description`` (a Triton template's config: "BLOCK_K=32, BLOCK_M=64, …, num_warps=4"; an
    extern's function), and the seconds its choices took to precompile (the saver's last
    argument, where torch gives it)."""

    def size(n: Any) -> str:
        try:
            return "x".join(str(s) for s in n.get_size())
        except Exception:
            return "?"

    choices = []
    for choice, ms in timings.items():
        t = float(ms)
        desc = getattr(choice, "description", "")
        choices.append(
            [str(getattr(choice, "name", choice)), t if t != float("inf") else None, str(desc or "")]
        )
    out: dict[str, Any] = {"op": str(name), "inputs": [size(n) for n in input_nodes], "choices": choices}
    try:
        if precompile_times:
            out["precompile_s"] = float(sum(float(v) for v in precompile_times.values()))
    except (TypeError, ValueError):
        pass
    return out


def data_dependent_condition(exc: BaseException) -> str | None:
    """The expression of a data-dependent guard torch could not decide (the exception's
    ``cond``, torch/fx/experimental/symbolic_shapes.py GuardOnDataDependentSymNode), looked for
    along the exception's causes; None for any other exception."""
    try:
        from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
    except ImportError:
        return None
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, GuardOnDataDependentSymNode):
            return str(exc.cond)
        exc = exc.__cause__ or exc.__context__
    return None


def add_bytecode_hook(hook: Any) -> Any:
    """Dynamo's bytecode hook (``torch._dynamo.convert_frame.register_bytecode_hook``, 2.2+):
    ``hook(code, new_code)`` is called inside each compile, resume frames included, with the
    frame's code object and the one Dynamo made to run in its place; it returns None (the code
    stays Dynamo's). Returns the handle whose ``remove()`` takes it off, or None where this
    torch has no such hook."""
    from torch._dynamo import convert_frame

    register = getattr(convert_frame, "register_bytecode_hook", None)
    return register(hook) if register is not None else None


def logged_graph_module(record: logging.LogRecord) -> Any | None:
    """The GraphModule a graph-code record would print: torch logs a ``LazyString`` whose
    function closes over ``gm`` (torch/fx/_utils.py: ``lazy_format_graph_code``); nothing is
    formatted here."""
    import torch.fx

    args = record.args if isinstance(record.args, tuple) else ()
    for arg in args:
        for cell in getattr(getattr(arg, "func", None), "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(value, torch.fx.GraphModule):
                return value
    return None


def module_stacks(gm: Any) -> dict[str, list[str]]:
    """Each call node's ``nn_module_stack`` (torch's node metadata: the modules whose forward
    was running when Dynamo traced the node, outermost first) as the sources torch wrote them:
    ``["L['self'].transformer", "L['self'].transformer.h.0", …]``; [] for none (the root's
    own code)."""
    out: dict[str, list[str]] = {}
    for n in gm.graph.nodes:
        if n.op.startswith("call"):
            stack = n.meta.get("nn_module_stack") or {}
            out[n.name] = [v[0] if isinstance(v, tuple) else str(v) for v in stack.values()]
    return out


def graph_nodes(gm: Any) -> int:
    """The FX nodes of a graph module (placeholders and output included)."""
    return len(gm.graph.nodes)
