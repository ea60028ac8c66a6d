"""Real Hugging Face models (tests/hf_corpus.py, built from small configs): the recorder's
breaks, recompiles, failing guards and dynamic dimensions agree with torch's own structured
trace, read directly in the test (tests/_torch_trace.py), and the compiled results with eager.
"""

from __future__ import annotations

import os
import re

import _torch_trace as tt
import hf_corpus
import pytest
import torch

import compiler
from compiler.analysis import without_local_scope

pytestmark = [pytest.mark.slow, pytest.mark.corpus]
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "traces")


def _record(name: str, backend="aot_eager"):
    eager = hf_corpus.SCENARIOS[name](None)
    torch._dynamo.reset()
    with tt.RawTrace() as raw, compiler.recording() as rec:
        got = hf_corpus.SCENARIOS[name](backend)
    torch.testing.assert_close(got, eager)
    return rec.report, tt.facts(raw.records)


def check_against_torch(report, truth: tt.Facts) -> None:
    """Every break site, type, compile id, recompile, failing guard and symbol as torch says."""
    # breaks: one entry per site, every compile torch logged it in, torch's registered type
    ours = {(b.filename, b.line): b for b in report.graph_breaks}
    assert set(ours) == set(truth.break_sites), (sorted(ours), sorted(truth.break_sites))
    for site, b in ours.items():
        assert set(b.compile_ids) == truth.break_sites[site], site
        assert b.compile_id == b.compile_ids[0]
        assert {b.gb_id} == truth.break_gb[site], site
        assert b.type in truth.break_types[site], (site, b.type)
        assert b.count >= 1
    # recompiles: one per compile torch logged reasons for, with torch's reasons
    assert {r.compile_id: list(r.reasons) for r in report.recompiles} == truth.recompiles
    for r in report.recompiles:
        assert len(r.failures) == len(r.reasons)
        for f, reason in zip(r.failures, r.reasons):
            entry, _, text = reason.partition(": ")
            assert f.entry == entry
            tree = truth.guards[entry]
            # the guard is a line of the failed entry's tree, and it is the one the reason names
            assert f.guard is not None, reason
            assert any(ln.rstrip().endswith(f.guard) for ln in tree.splitlines()), f.guard
            head = text.splitlines()[0]
            tm = re.match(r"tensor '(.+?)' [\w ]+? mismatch\b", head)
            if tm:
                assert f.guard.startswith(f"TENSOR_MATCH: check_tensor({tt.local_source(tm.group(1))}, ")
            else:  # torch quotes the guard's own `# code  # file:line in fn` comment in the reason
                comment = head.split("  # ", 1)[1]
                assert f.guard.endswith(comment), (f.guard, comment)
            assert f.user_stack, reason  # where the guard came from
        assert r.failed_entry == r.failures[0].entry and r.failing_guard == r.failures[0].guard
    # dynamic dimensions: every symbol torch created, per compile
    for c in report.compiles:
        cap = c.stages.capture
        got = {(s.symbol, s.source) for s in cap.symbols} if cap else set()
        assert got == truth.symbols.get(c.id, set()), c.id
    for r in report.recompiles:
        assert {s for s in r.dynamic} == {s for s, _src in truth.symbols.get(r.compile_id, ())}


def test_gpt2_train_break_in_library():
    stacks = tt.ModuleStacks()  # aot_eager, noting torch's own module stacks of each graph
    report, truth = _record("gpt2_train", stacks)
    check_against_torch(report, truth)
    (b,) = report.graph_breaks
    assert os.path.basename(b.filename) == "modeling_utils.py"
    assert (b.type, b.gb_id) == ("logging.Logger method not supported for non-export cases", "GB0291")
    assert b.compile_ids == ("0/0", "1/0", "2/0")
    # the break's own hints, not the wrapper's (2.14 words them longer than 2.13)
    assert "`torch._dynamo.config.ignore_logging_functions`" in b.hints[0]
    # the user's own line that led there, and the library frames between it and the break
    assert (b.user_frame.filename, b.user_frame.name) == (hf_corpus.__file__, "gpt2_train")
    names = [(os.path.basename(f.filename), f.name) for f in b.shown_stack]
    assert names[-3:] == [
        ("generic.py", "wrapper"),
        ("modeling_gpt2.py", "forward"),
        ("modeling_utils.py", "loss_function"),
    ]
    assert [f.kind for f in b.shown_stack][-3:] == ["library"] * 3
    # the training graph's nodes carry module paths (parameters read, or the user line's module)
    joint = report.compile("1/0").stages.autograd.joint
    calls = [n for n in joint.nodes if n.op == "call_function"]
    with_module = [n for n in calls if n.module]
    assert len(with_module) / len(calls) > 0.9, (len(with_module), len(calls))
    assert {n.module.split(".")[0] for n in with_module} >= {"transformer"}
    # GPT-2 ties lm_head's weight to transformer.wte's: ``logits`` reads wte's weight but is
    # lm_head's output. Every node of Dynamo's graphs is in the module torch's own metadata
    # says (the innermost of its ``nn_module_stack``), the AOT graphs' nodes of the logits line
    # too; the tied weight itself stays with the module that owns it
    graphs = [c.stages.capture.graph for c in report.compiles if c.stages.capture and c.stages.capture.graph]
    graphs = [g for g in graphs if any(n.op.startswith("call") for n in g.nodes)]
    assert len(graphs) == len(stacks.graphs)
    for g, want in zip(graphs, stacks.graphs):
        got = {n.name: n.module for n in g.nodes if n.op.startswith("call")}
        assert got == {n: re.sub(r"^L\['self'\]\.?", "", m) or None if m else None for n, m in want.items()}
    (g,) = [g for g in graphs if any(n.name == "logits" and n.target.endswith("linear") for n in g.nodes)]
    (c,) = [c for c in report.compiles if c.stages.capture and c.stages.capture.graph is g]
    logits = next(n for n in c.stages.capture.graph.nodes if n.name == "logits")
    assert logits.module == "lm_head" and "transformer_modules_wte" in logits.args[-1]
    (wte,) = [n for n in c.stages.capture.graph.nodes if n.name == logits.args[-1]]
    assert wte.module == "transformer.wte"
    joint = c.stages.autograd.joint
    line = [n for n in joint.nodes if n.source == logits.source and n.op == "call_function"]
    assert line and {n.module for n in line} == {"lm_head"}


def test_bert_two_lengths_dynamic_length():
    report, truth = _record("bert_two_lengths")
    check_against_torch(report, truth)
    (r,) = report.recompiles
    assert r.reasons == (
        "0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 16, actual 24",
    )
    assert r.failing_guard.startswith("TENSOR_MATCH: check_tensor(L['kwargs']['input_ids'], Tensor, ")
    (sym,) = report.compile("0/1").stages.capture.symbols
    assert (without_local_scope(sym.source), sym.val, sym.vr) == (
        "kwargs['input_ids'].size()[1]",
        "24",
        "[2, int_oo]",
    )
    assert r.dynamic == (sym.symbol,)


def test_llama_generate_kv_cache_goes_dynamic():
    report, truth = _record("llama_generate")
    check_against_torch(report, truth)
    r1, r2 = report.recompiles
    assert (r1.compile_id, r2.compile_id) == ("0/1", "0/2")
    # the second recompile tried both entries, newest first
    assert [f.entry for f in r2.failures] == ["0/1", "0/0"]
    assert r2.failures[0].guard.startswith(
        "TENSOR_MATCH: check_tensor(L['kwargs']['past_key_values'].layers[0].keys, Tensor, "
    )
    dims = [without_local_scope(s.source) for s in report.compile("0/2").stages.capture.symbols]
    assert "kwargs['past_key_values'].layers[0].keys.size()[2]" in dims
    assert r1.dynamic == ()


def test_t5_train_encoder_decoder():
    report, truth = _record("t5_train")
    check_against_torch(report, truth)
    (c,) = report.compiles
    joint = c.stages.autograd.joint
    calls = [n for n in joint.nodes if n.op == "call_function"]
    assert sum(1 for n in calls if n.module) / len(calls) > 0.9
    assert {n.module.split(".")[0] for n in calls if n.module} >= {"encoder", "decoder"}


def test_vit_two_batches():
    report, truth = _record("vit_two_batches")
    check_against_torch(report, truth)
    (r,) = report.recompiles
    assert [without_local_scope(s.source) for s in report.compile(r.compile_id).stages.capture.symbols] == [
        "kwargs['pixel_values'].size()[0]"
    ]


def test_bert_padding_mask_guard_from_library_code():
    report, truth = _record("bert_padding_mask")
    check_against_torch(report, truth)
    (r,) = report.recompiles
    assert r.failing_guard.startswith("DICT_LENGTH: len(L['kwargs']) == 1")
    # torch's user stack of the guard: transformers' wrapper that stored the kwargs
    top = r.failures[0].user_stack[-1]
    assert (os.path.basename(top.filename), top.name) == ("generic.py", "wrapper")


def test_mixtral_moe_data_dependent():
    report, truth = _record("mixtral_moe")
    check_against_torch(report, truth)
    types = {b.type for b in report.graph_breaks}
    assert "Dynamic shape operator" in types
    assert all(not b.type.startswith(("Encountered", "Failed to handle")) for b in report.graph_breaks)


def test_distilbert_train_two_batches():
    report, truth = _record("distilbert_classify_train")
    check_against_torch(report, truth)
    (r,) = report.recompiles
    dims = {without_local_scope(s.source) for s in report.compile(r.compile_id).stages.capture.symbols}
    assert dims == {"kwargs['input_ids'].size()[0]", "kwargs['labels'].size()[0]"}


def _answers(report) -> tuple:
    """What a user reads, with paths cut to file names (logs come from another checkout)."""
    base = os.path.basename
    return (
        sorted((base(b.filename), b.line, b.type, b.gb_id, b.compile_ids) for b in report.graph_breaks),
        [
            # a reason's "User stack trace:" names the checkout's paths: its first line only
            (
                r.compile_id,
                [x.splitlines()[0] for x in r.reasons],
                [(f.entry, f.guard) for f in r.failures],
                r.dynamic,
            )
            for r in report.recompiles
        ],
        [(c.id, [(s.symbol, s.source, s.vr) for s in c.stages.capture.symbols]) for c in report.compiles],
    )


_SCENARIO = {"llama-generate": "llama_generate", "gpt2-train": "gpt2_train", "mixtral-moe": "mixtral_moe"}


@pytest.mark.parametrize("log", sorted(f for f in os.listdir(FIXTURES) if "-hf-" in f))
def test_hf_trace_fixtures(log):
    """TORCH_TRACE logs of corpus models (torch 2.13 and 2.14.1, commands in the fixtures'
    README): load_trace agrees with the log; where the log's torch is the installed one,
    it gives the same answers as recording the same scenario in-process."""
    path = os.path.join(FIXTURES, log)
    report = compiler.load_trace(path)
    check_against_torch(report, tt.facts(tt.read_log(path)))
    assert report.graph_breaks or report.recompiles
    if report.torch_version.split("+")[0] != torch.__version__.split("+")[0]:
        return
    name = _SCENARIO[re.search(r"-hf-(.+)\.log\.gz$", log).group(1)]
    live, _truth = _record(name)
    assert _answers(report) == _answers(live)
