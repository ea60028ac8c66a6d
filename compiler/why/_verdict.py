"""Why isn't compiled faster? One verdict per benchmark (``compiler.analysis.verdict``), from measured facts.

The compiled call's median time is split into parts that add up to it (each a cause with its
share of the call):

- **eager code**: kernels launched outside every compiled graph (a frame Dynamo gave up on,
  the recompile limit, code between graphs), with the Python around them;
- **attention** the compiled graph runs as SDPA's math decomposition where eager ran a fused
  kernel (compiler/why/_attention.py): those kernels, no longer counted below;
- **library kernels** compile does not touch (cuBLAS / cuDNN GEMMs, attention kernels, ATen
  matmuls on CPU), by their name or op wherever they ran (a compiled backward's cuBLAS calls
  run by autograd's engine outside every compiled region too), as eager's are judged: their
  profiled time; the evidence says their precision (fp32 without TF32) and how close to the
  device's peak they ran, the slowest first;
- **generated kernels** (Triton / C++) and the other ATen kernels of the call (an optimizer
  step's): held against eager's kernels that are neither library kernels nor, where the
  attention cause holds, its fused attention ops' helpers, when the benchmark profiled eager;
- **the host's time** the device waits for (the median minus the kernels' time), split by the
  profiled timeline into guard evaluation, Python outside the graphs, and the graphs' own host
  work (wrappers and launches: what CUDA graphs remove).

The causes are checked in a fixed order, and the headline names the first that holds and takes
5% of the call: an eager fallback (no compiled code ran for a frame; named first whatever its
share where every kernel of the call ran outside the graphs), a backend that runs the
graphs with eager kernels (``aot_eager``, ``eager``: every frame ran compiled, and nothing was
fused; torch's records of the compiles say no Inductor stage ran; named first whatever its
share), graph breaks, recompiles, a
CUDA-graph skip, host↔device copies inside the call, then the largest part. Each cause says
its fix as code where one is known (``Cause.fix``). The tool's own profiler ranges are never
counted (``Benchmark.kernel_rows``). The mode is the one the user compiled with, as torch's
records of the compiles say it, where the benchmark did not compile the function itself. A
fact the benchmark did not record is named as missing, never filled in. Where the figures
carry no cause (the benchmark compiled anew, or its cautions hold: compiler/why/_carry.py),
the headline says so and names none. Torch-free.
"""

from __future__ import annotations

from ..assemble._speed import cudagraph_share
from ..model._benchtypes import Benchmark
from ..model._figures import clean
from ..model._report import Report
from ..model._verdicttypes import Cause, Verdict
from ._attention import attention
from ._backend import other_backend
from ._carry import unread, with_gains
from ._cgmode import cudagraphs, mode_of, skips
from ._fixes import (
    REDUCE_OVERHEAD,
    break_advice,
    break_fix,
    break_line,
    fallen_frames,
    recompile_fix,
    shape_recompiles,
)
from ._gputime import kernel_costs
from ._guardkinds import guard_evidence
from ._kernelcauses import backend_cause, compile_cause, cpp_unprofiled, generated, library, unprofiled
from ._naming import main_cause, order_note
from ._text import first_line, where


def verdict(report: Report, bench: Benchmark) -> Verdict:
    """The verdict on ``bench`` (one of ``report.benchmarks``, or a mode row's)."""
    e = bench.eager.median_ms if bench.eager else None
    c = bench.compiled.median_ms if bench.compiled else None
    mode = mode_of(report, bench)
    if c is None or not (bench.kernel_rows or bench.launch_rows):
        why = bench.error or ("no compiled timing" if c is None else "no kernel profile (profile=False)")
        return Verdict(bench.name, f"no verdict: {why}", bench.speedup, e, c, None, mode=mode)
    return _Judge(report, bench, c, mode).verdict(e)


# causes that are the report's own facts, not read from the timings: named where they lead even
# when the timings are unsteady (compiler/why/_carry.py)
REPORT_FACTS = ("fallback", "backend")


class _Judge:
    """The parts of one compiled call, then each cause in ``ORDER`` and the rest."""

    def __init__(self, report: Report, bench: Benchmark, c: float, mode: str) -> None:
        self.report, self.bench, self.c, self.mode = report, bench, c, mode
        self.missing: list[str] = []
        costs = kernel_costs(report, bench)
        self.outside = [k for k in costs if k.compile_id is None and bench.launch_rows]
        inside = [k for k in costs if not (k.compile_id is None and bench.launch_rows)]
        self.lib = [k for k in inside if k.library]
        self.gen = [k for k in inside if not k.library]
        self.out_ms = sum(k.ms for k in self.outside)
        kernels = self.out_ms + sum(k.ms for k in inside)
        self.total = max(c, kernels)  # the parts' sum: the median (kernels never exceed it)
        self.kernels_ms = kernels
        self.idle = clean(max(c - kernels, 0.0))  # no float noise: a part of 5.551e-17 ms is none
        t = bench.timeline
        self.graphs = t.graphs if t is not None else None
        # what ran compiled a call: Inductor's graphs; a backend that makes no Inductor graph
        # (aot_eager, eager) shows in the compiled frames entered (older files: graphs alone)
        regions = t.regions if t is not None else None
        self.pieces, self.piece_words = (
            (regions, "compiled frames entered") if self.graphs == 0 and regions else (self.graphs, "graphs")
        )
        self.other = other_backend(report, bench)
        # the host's profiled parts, scaled to the unprofiled idle time (the profiler's own
        # cost inflates the host's time; the split is the profiled call's)
        prof = (t.guard_ms, t.outside_ms, t.graph_host_ms) if t is not None else (0.0, 0.0, 0.0)
        scale = self.idle / sum(prof) if sum(prof) > 0 else 0.0
        self.guard_ms, self.python_ms, self.wrap_ms = (clean(x * scale) for x in prof)
        # CPU: C++ kernels the profile did not see run inside the graphs' host time
        self.cpp_hidden = cpp_unprofiled(report, bench)
        if kernels > 1.1 * c:
            self.missing.append(
                f"the profiled calls' kernels took {kernels:.4g} ms a call, more than the timed median's "
                f"{c:.4g} ms (a busy machine, or CPU threads stalling: OMP_NUM_THREADS=1 steadies a "
                "shared CPU): the shares below are of the kernels' time, and the host's is not measured"
            )
        if t is None or sum(prof) == 0:
            self.missing.append(
                "no timeline: the host's time is not split into guards, graph breaks and launches"
            )
        self.fallen = fallen_frames(report)
        fallen_ids = {
            c.id for c in report.compiles for f in report.frames if c.frame == f.id and f.compiles == 0
        }
        # the breaks of frames that ran compiled code: a fallen frame's break is its fallback's
        self.live_breaks = [
            b for b in report.graph_breaks if not fallen_ids.intersection(b.compile_ids or (b.compile_id,))
        ]
        self.has_breaks = bool(self.live_breaks) and (self.pieces or 0) > 1
        # no compiled frame ran a call (none entered, no kernel launched inside one)
        ran_none = self.pieces == 0 and not inside
        self.has_fallback = bool(self.fallen) or (ran_none and bool(self.outside))
        # every kernel of the call ran outside the compiled graphs: the frames that ran
        # eagerly are the whole call, and the fallback leads whatever its share
        self.all_eager = bool(self.outside) and not inside
        if not self.has_fallback:
            # no frame ran eagerly: kernels outside the graphs' regions are autograd's backward
            # of a compiled graph (run by the engine, outside any "Torch-Compiled Region") and
            # ops between graphs: the kernels' parts, as library or generated
            self.lib += [k for k in self.outside if k.library]
            self.gen += [k for k in self.outside if not k.library]
            self.outside, self.out_ms = [], 0.0
        share = cudagraph_share(report, bench)
        # compiled for CUDA graphs, and torch's records say they did not run: a skip with its
        # reason, or most of the profiled GPU time outside them (no records: nothing is said)
        self.has_cg_skip = (
            bench.device == "cuda"
            and mode in ("reduce-overhead", "max-autotune")
            and (bool(skips(report)) or (share is not None and share <= 0.5))
        )

    def share(self, ms: float) -> float:
        return ms / self.total if self.total > 0 else 0.0

    def verdict(self, e: float | None) -> Verdict:
        b = self.bench
        # attention run as SDPA's math decomposition where eager ran a fused kernel: its
        # kernels are that cause's part, no longer the library's or the generated kernels'
        att = attention(self.report, b, self.lib + self.gen, self.share)
        if att is not None:
            self.lib = [k for k in self.lib if id(k) not in att[1]]
            self.gen = [k for k in self.gen if id(k) not in att[1]]
        causes = [
            att[0] if att else None,
            self.fallback(),
            self.backend(),
            self.breaks(),
            self.recompiles(),
            self.cudagraph_skip(),
            self.sync(),
            self.guards(),
            self.launch(),
            library(self.lib, self.share, b),
            None
            if self.other
            else generated(self.gen, self.share, b, self.missing, self.cpp_hidden, att is not None),
            unprofiled(self.wrap_ms, self.share, b) if self.cpp_hidden else None,
        ]
        causes = with_gains([x for x in causes if x is not None], self.pieces)
        causes.append(compile_cause(b, self.report))
        # the figures carry no cause: the benchmark compiled anew, or its cautions hold
        read = unread(b, self.kernels_ms, self.c)
        lead = main_cause(causes, b, all_eager=self.all_eager)
        if read and not b.compiles_while_timing and lead is not None and lead.key in REPORT_FACTS:
            # unsteady timings, but the cause that leads is the report's own fact (no compiled
            # code ran for a frame; a backend that runs the graph with eager kernels): named,
            # with the timings' caution beside it
            main, head = lead, f"{b.speedup_words}: {_headline(lead, self, causes)} ({read[0]})"
        else:
            main = None if read else lead
            head = read[1] if read else b.speedup_words + ": " + _headline(main, self, causes)
            head += "" if read else order_note(main, causes)
        key, why = (main.key if main else None), (read[0] if read and main is None else None)
        return Verdict(
            b.name, head, b.speedup, e, self.c, key, tuple(causes), tuple(self.missing), self.mode, why
        )

    # -- the causes, in the order they are checked --------------------------------------------

    def fallback(self) -> Cause | None:
        """A frame that ran eagerly: its compile failed or was skipped, or the recompile limit
        was hit (a call whose guards fail on every entry runs eagerly)."""
        if not self.has_fallback:
            return None
        ms = self.out_ms + (0.0 if self.has_breaks else self.python_ms)
        ev = [g.why for g in self.fallen]  # frames alike: one line
        calls = self.bench.profiled_calls
        if self.pieces == 0:
            ev.insert(
                0, f"no compiled code ran: {calls} of {calls} profiled calls ran eagerly (no compiled graph)"
            )
            timing = self.bench.compiles_while_timing
            if timing and not self.fallen:  # the recording saw no limit: the timed calls went past it
                ev.append(
                    f"{len(timing)} compiles during the timed calls ({first_line(timing)}): a frame that "
                    "compiles again on every call runs eagerly once it holds torch's recompile limit of entries"
                )
        elif self.outside:
            ev.insert(
                0,
                f"{sum(k.launches for k in self.outside):.0f} of {self.bench.timeline.launches:.0f} kernels a call "
                f"ran outside the compiled graphs ({self.out_ms:.4g} ms); the {self.pieces:.0f} "
                f"{self.piece_words} a call are of other frames",
            )
        # the frames whose every call runs eagerly, the most of them first: the title's
        # reason and the fix are theirs (none where their reason has none)
        lead = self.fallen[0] if self.fallen else None
        title = f"eager fallback: no compiled code ran for {self.bench.name}"
        if lead is not None:
            more = sum(g.count for g in self.fallen[1:])
            title = f"eager fallback: {lead.label} in {', '.join(lead.names)}" + (
                f" (and {more} more frame{'s' if more > 1 else ''})" if more else ""
            )
        fix = lead.fix if lead else None
        advice = None if fix or lead is None else lead.advice
        return Cause("fallback", title, ms, self.share(ms), tuple(ev), fix, advice)

    def backend(self) -> Cause | None:
        """Every frame ran its compiled code, and the code runs the graph with eager kernels:
        the graphs' kernels (the library ones apart) are the backend's part of the call."""
        return backend_cause(self.other, self.gen, self.share) if self.other else None

    def breaks(self) -> Cause | None:
        breaks = self.live_breaks
        if not self.has_breaks:
            return None
        ms = self.python_ms
        ev = [f"{self.pieces:.0f} {self.piece_words} a call: Python runs between them ({ms:.4g} ms a call)"]
        ev += [break_line(b) for b in sorted(breaks, key=lambda b: -b.count)[:5]]
        # torch's own break (the optimizer's) has no change of the user's: its hint is never said
        theirs = [b for b in breaks if not b.torch_own]
        fix = next((f for b in theirs if (f := break_fix(b.type, b.gb_id, b.reason))), None)
        advice = (
            None if fix else next((a for b in theirs if (a := break_advice(b.type, b.gb_id, b.hints))), None)
        )
        n = len(breaks)
        title = f"graph breaks: {n} site{'s' * (n != 1)}"
        return Cause("breaks", title, ms, self.share(ms), tuple(ev), fix, advice)

    def recompiles(self) -> Cause | None:
        r, b = self.report.recompiles, self.bench
        limit = [f for f in self.report.frames if f.recompile_limit_hit]
        if not r and not b.compiles_while_timing and not limit:
            return None
        ev = []
        if b.compiles_while_timing:
            ev.append(
                f"{len(b.compiles_while_timing)} compiles during the timed calls: {first_line(b.compiles_while_timing)}"
            )
        if r:
            ev.append(
                f"{len(r)} recompiles in the recording; the first: [{r[0].compile_id}] {first_line(r[0].reasons)}"
            )
        for f in limit:
            ev.append(
                f"{f.name} ({where(f.filename, f.line)}): the recompile limit was hit after {f.compiles} entries"
            )
        sizes = shape_recompiles(self.report)
        title = "recompiles: a shape changes from call to call" if sizes else "recompiles"
        return Cause("recompiles", title, None, None, tuple(ev), recompile_fix(self.report))

    def cudagraph_skip(self) -> Cause | None:
        """Compiled for CUDA graphs (``reduce-overhead``), but they did not run: torch skipped
        them (its reason), or most of the GPU time ran outside them."""
        if not self.has_cg_skip:
            return None
        skipped = skips(self.report)
        _on, why = cudagraphs(self.bench, self.report)
        ms = self.wrap_ms
        ev = (f"mode={self.mode} (as compiled)", *(skipped[:3] if skipped else (why,)))
        title = "CUDA graphs skipped: " + (skipped[0].split(": ", 1)[1] if skipped else why)
        advice = (
            "return the new value instead of changing an input in place (CUDA graphs skip a graph that mutates its inputs)"
            if any("mutated inputs" in x for x in skipped)
            else None
        )
        return Cause("cudagraphs", title, ms, self.share(ms), ev, advice=advice)

    def sync(self) -> Cause | None:
        if self.bench.device != "cuda":  # on the CPU a tensor's value is already on the host
            return None
        copies = [
            x
            for x in self.bench.launch_rows
            if x.name.startswith("Memcpy DtoH") or x.op in ("aten::_local_scalar_dense", "aten::item")
        ]
        if not copies:
            return None
        calls = max(self.bench.profiled_calls, 1)
        # the profile keeps a row per launch site (each op's call in the graph): the same copy
        # from the same op in the same graph is one line with its count, the most first
        counts: dict[str, float] = {}
        for x in copies:
            what = f"{x.name} from {x.op or '?'}" + (
                f" in [{x.compile_id}]" if x.compile_id else " outside the compiled graphs"
            )
            counts[what] = counts.get(what, 0.0) + x.calls
        ev = [f"{n / calls:.0f} a call: {what}" for what, n in sorted(counts.items(), key=lambda kv: -kv[1])]
        ev.append("the host waits for the device at each copy: launches stop until it arrives")
        advice = "keep the value on the device: no .item(), .cpu() or .tolist() inside the compiled call"
        return Cause("sync", "host↔device copies inside the call", None, None, tuple(ev), advice=advice)

    def guards(self) -> Cause | None:
        if self.guard_ms <= 0:
            return None
        ms = self.guard_ms
        t = self.bench.timeline
        ev = (
            f"guard evaluation {ms:.4g} ms a call: its part of the timed call's host time, split as "
            f"the profiled call's; {t.guard_ms:.4g} ms in the profiled call, which the profiler's "
            "own cost inflates",
        )
        kinds = guard_evidence(self.report, self.bench.compile_ids)
        return Cause("guards", "guard evaluation", ms, self.share(ms), ev + ((kinds,) if kinds else ()))

    def launch(self) -> Cause | None:
        """The rest of the host's time: the graphs' wrappers and launches, and Python outside
        the graphs that no break or fallback explains."""
        b, t = self.bench, self.bench.timeline
        explained = self.python_ms if (self.has_fallback or self.has_breaks) else 0.0
        explained += self.wrap_ms if self.has_cg_skip or self.cpp_hidden else 0.0
        ms = clean(max(self.idle - self.guard_ms - explained, 0.0))
        if ms <= 0:
            return None
        on, why = cudagraphs(b, self.report)
        gaps = ""
        if t is not None:
            gaps = f"{t.launches:.0f} launches a call"
            gaps += (
                f", {t.gaps:.0f} idle gaps between kernels, median {t.median_gap_us:.1f} µs" if t.gaps else ""
            )
        why = why if b.device == "cuda" else ""  # CUDA graphs say nothing of a CPU run
        ev = tuple(x for x in (f"{ms:.4g} ms a call of host work with no kernel running", gaps, why) if x)
        cuda = b.device == "cuda"
        title = "host-bound: the GPU waits for the host" if cuda else "host overhead around the kernels"
        asked = self.mode in ("reduce-overhead", "max-autotune")
        inductor = self.other is None  # CUDA graphs are an Inductor mode's
        fix = (
            REDUCE_OVERHEAD if cuda and inductor and not on and not asked and self.share(ms) >= 0.1 else None
        )
        return Cause("launch", title, ms, self.share(ms), ev, fix)


def _headline(main: Cause | None, j: _Judge, causes: list[Cause]) -> str:
    if main is None:
        return "nothing left that compile could win"
    share = f"{main.share:.0%} of the compiled call" if main.share is not None else ""
    if main.key == "library":
        tail = "; the matmul is fp32 without TF32" if main.fix else ""
        return f"compile has little left to win here: {share} is library kernels it does not change{tail}"
    if main.key == "attention":
        return f"attention: {main.evidence[0]}: {share}"
    if main.key == "launch" and j.bench.device != "cuda":
        return f"host overhead: {share} is outside the kernels (guards, wrappers, launches)"
    if main.key == "launch":
        on, why = cudagraphs(j.bench, j.report)
        tip = "" if on else "; CUDA graphs are off (mode='reduce-overhead' turns them on)"
        return f"host-bound: {share} is the GPU waiting for the host{tip}"
    if main.key == "generated-ok" and j.bench.eager_launches:
        return f"{share} is generated kernels, already faster than the eager kernels they replace"
    if main.key == "generated-ok":
        return f"{share} is generated kernels (eager's kernels were not profiled to compare them)"
    return f"{main.title}" + (f": {share}" if share else "")
