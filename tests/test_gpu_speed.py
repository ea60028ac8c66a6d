"""CUDA graphs under mode="reduce-overhead" on a GPU: each skip reason, each count of recordings
and the mode, checked against torch's own log lines read in the test (a plain handler on
Inductor's cudagraphs loggers, the structured trace's compilation_metrics). Skipped without
CUDA; run on a GPU machine with `python -m pytest -m gpu tests/test_gpu_speed.py`."""

from __future__ import annotations

import logging
import re

import pytest
import torch

import compiler
import explorer
from tests._torch_trace import RawTrace
from tests.test_gpu import _line_of, _reset  # noqa: F401 (_reset: autouse fixture)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU with Triton"),
]

_LOGGERS = ("torch._inductor.cudagraph_trees", "torch._inductor.cudagraph_utils")


class TorchLines(logging.Handler):
    """torch's cudagraphs-logger messages, as torch wrote them (the test's own oracle)."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []
        self._saved = []

    def emit(self, record):
        self.lines.append(record.getMessage())

    def __enter__(self):
        for name in _LOGGERS:
            log = torch._logging.getArtifactLogger(name, "cudagraphs")
            self._saved.append((log, log.level))
            log.setLevel(logging.DEBUG)
            log.addHandler(self)
        return self

    def __exit__(self, *exc):
        for log, level in self._saved:
            log.removeHandler(self)
            log.setLevel(level)

    def recordings(self, cid: str | None = None) -> int:
        """torch's "Recording function=" lines (of compile ``cid`` where torch names it)."""
        return sum(
            1
            for ln in self.lines
            if "Recording function=" in ln and (cid is None or ln.startswith(f"[{cid}]"))
        )

    def names_compiles(self) -> bool:
        return all(re.match(r"\[\d+/\d+\] ", ln) for ln in self.lines if "Recording function=" in ln)

    def skips(self) -> list[str]:
        return [ln for ln in self.lines if re.match(r"skipping cudagraphs? ", ln)]


def _metrics_skip(raw: RawTrace) -> dict[str, str | None]:
    return {
        f"{m['frame_id']}/{m['frame_compile_id']}": m["compilation_metrics"].get("cudagraph_skip_reason")
        for m, _ in raw.records
        if "compilation_metrics" in m
    }


def _mutates(x):
    x.add_(1)  # MUTATION
    return x.sin() * 2


def _adds_cpu(x, y):
    return x + y.to(x.device)


def _mlp(x, w):
    return torch.relu(x @ w).sum(-1)


def test_a_mutated_input_skips_cuda_graphs_with_torchs_reason_and_the_line():
    x = torch.randn(64, 64, device="cuda")
    f = torch.compile(_mutates, mode="reduce-overhead")
    with TorchLines() as torch_lines, RawTrace() as raw, compiler.recording() as rec:
        for _ in range(3):
            f(x)
    (c,) = rec.report.compiles
    (torch_reason,) = torch_lines.skips()  # torch warned once
    assert c.config.mode == "reduce-overhead"
    assert (c.cudagraphs.state, c.cudagraphs.reason) == ("skipped", torch_reason.strip())
    assert c.cudagraphs.when == ("compile" if _metrics_skip(raw)[c.id] == torch_reason else "run")
    assert c.cudagraphs.where == f"{__file__}:{_line_of(_mutates, '# MUTATION')}"
    assert c.cudagraphs.recordings == torch_lines.recordings() == 0
    summary = explorer.text(rec.report, "summary")
    assert (
        "CUDA graphs: skipped — mutated inputs" in summary
        and f"test_gpu_speed.py:{_line_of(_mutates, '# MUTATION')}" in summary
    )


def test_a_cpu_tensor_skips_cuda_graphs():
    """Without graph partitioning (torch 2.11 partitions CPU work out of the CUDA graph by
    default, and then records the rest) a CPU tensor in the graph skips CUDA graphs."""
    x, y = torch.randn(64, device="cuda"), torch.randn(64)
    f = torch.compile(_adds_cpu, mode="reduce-overhead")
    with (
        torch._inductor.config.patch(graph_partition=False),
        TorchLines() as torch_lines,
        compiler.recording() as rec,
    ):
        f(x, y)
        f(x, y)
    (c,) = rec.report.compiles
    (torch_reason,) = torch_lines.skips()
    assert "cpu device" in torch_reason
    assert (c.cudagraphs.state, c.cudagraphs.reason) == ("skipped", torch_reason.strip())


def test_three_batch_sizes_each_recorded_and_counted_as_torch_logs_them():
    w = torch.randn(128, 128, device="cuda")
    f = torch.compile(_mlp, mode="reduce-overhead")
    with TorchLines() as torch_lines, compiler.recording() as rec:
        for n in (8, 16, 32):  # each size: a warm-up, then a recording, then a replay
            for _ in range(3):
                f(torch.randn(n, 128, device="cuda"), w)
    assert not torch_lines.skips()
    for c in rec.report.compiles:
        assert c.config.mode == "reduce-overhead"
        if torch_lines.names_compiles():
            assert c.cudagraphs.recordings == torch_lines.recordings(c.id)
    total = sum(c.cudagraphs.recordings for c in rec.report.compiles)
    assert total == torch_lines.recordings() >= 3
    assert {c.cudagraphs.state for c in rec.report.compiles} == {"used"}


def test_a_dynamic_function_records_a_tree_per_size_and_torchs_distinct_sizes_warning():
    w = torch.randn(128, 128, device="cuda")
    f = torch.compile(_mlp, mode="reduce-overhead", dynamic=True)
    with (
        torch._inductor.config.patch({"triton.cudagraph_dynamic_shape_warn_limit": 2}),
        TorchLines() as torch_lines,
        compiler.recording() as rec,
    ):
        for n in (8, 16, 32, 8, 8):
            f(torch.randn(n, 128, device="cuda"), w)
    (c,) = rec.report.compiles
    assert (c.config.mode, c.config.dynamic) == ("reduce-overhead", True)
    sizes = [ln for ln in torch_lines.lines if "Recording cudagraph tree for symint key" in ln]
    assert sum(1 for r in c.cudagraphs.runs if r.kind == "new size") == len(sizes) == 3
    assert c.cudagraphs.recordings == torch_lines.recordings()
    warned = [ln for ln in torch_lines.lines if "distinct sizes" in ln]
    assert warned and tuple(w.strip() for w in warned) == c.cudagraphs.warnings


class _Lin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(64, 64, device="cuda"))

    def forward(self, x):
        return torch.relu(x @ self.w)


def test_a_replaced_parameter_re_records_with_torchs_reason():
    """A parameter is a static input of the CUDA graph: replacing it (a new address) makes
    torch re-record the graph; each re-recording is counted with torch's reason."""
    m = _Lin()
    f = torch.compile(m, mode="reduce-overhead")
    x = torch.randn(64, 64, device="cuda")
    with torch.no_grad(), TorchLines() as torch_lines, compiler.recording() as rec:
        for _ in range(3):
            f(x)
        m.w = torch.nn.Parameter(torch.randn(64, 64, device="cuda"))
        for _ in range(3):
            f(x)
    rerecords = [ln for ln in torch_lines.lines if "Re-recording function=" in ln]
    assert rerecords, "torch re-recorded the graph"
    runs = [r for c in rec.report.compiles for r in c.cudagraphs.runs if r.kind == "re-record"]
    assert [r.reason for r in runs] == [ln.split("reason=", 1)[1].strip() for ln in rerecords]
    assert sum(c.cudagraphs.rerecordings for c in rec.report.compiles) == len(rerecords)
    assert "re-recording" in explorer.text(rec.report, "summary")
