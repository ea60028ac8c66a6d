"""Every second placed on the GPU (issue 53, item 2): three real Hugging Face models compiled
by Inductor on CUDA (tests/hf_corpus.py's GPT-2 training step, BERT at two lengths under
no_grad, T5 training step, on the GPU), each compile's heads checked against torch's
compilation_metrics and chromium events read in the test (tests/test_compile_heads.py's
check_placed): unplaced at most 5%.

Run on a CUDA machine: ``python -m pytest -m gpu tests/test_compile_heads_gpu.py``."""

from __future__ import annotations

import _torch_trace as tt
import hf_corpus
import pytest
import torch

import compiler
from tests.test_compile_heads import check_placed

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU with Triton"),
]


@pytest.mark.parametrize("name", ["gpt2_train", "bert_two_lengths", "t5_train"])
def test_every_second_placed_on_the_gpu(name):
    torch._dynamo.reset()
    with tt.RawTrace() as raw, compiler.recording() as rec:
        hf_corpus.SCENARIOS[name]("inductor", device="cuda")
    torch.cuda.synchronize()
    check_placed(rec.report, raw.records)
