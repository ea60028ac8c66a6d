"""Real Hugging Face models built from small configs (no weights, no network), each run the
way users run them under torch.compile. The corpus of tests/test_hf_corpus.py; also a script
that records one scenario, e.g. as a TORCH_TRACE fixture (tests/fixtures/traces/README.md):

    TORCH_TRACE=/tmp/tr python tests/hf_corpus.py gpt2_train

Each scenario builds its model with a fixed seed, compiles it, runs it and returns what it
computed, so a test can compare with eager. ``backend`` is passed to torch.compile: the
corpus uses "inductor" where the later stages matter and "aot_eager" elsewhere (capture,
breaks, recompiles and AOT graphs are the same; C++ compile time on 2 cores is not).
"""

from __future__ import annotations

import sys

import torch

# transformers' small configs: 2 layers, hidden 32-64, vocabularies of 100-128
_TINY = dict(num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


def _compile(fn, backend):
    """torch.compile(fn, backend=backend); ``backend=None`` runs eagerly (the oracle)."""
    return fn if backend is None else torch.compile(fn, backend=backend)


def _seeded(make):
    torch.manual_seed(0)
    model = make()
    model.eval()
    return model


def gpt2_train(backend="aot_eager", device="cpu"):
    """Decoder LM training step: loss from labels, backward. Breaks on logger.warning_once."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        n_layer=2, n_head=2, n_embd=32, vocab_size=128, n_positions=64,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )  # fmt: skip
    model = _seeded(lambda: GPT2LMHeadModel(cfg)).to(device)
    model.train()
    step = _compile(model, backend)
    ids = torch.randint(0, 128, (2, 16), generator=torch.Generator().manual_seed(1)).to(device)
    out = step(input_ids=ids, labels=ids)
    out.loss.backward()
    return out.loss.detach()


def bert_two_lengths(backend="aot_eager", device="cpu"):
    """Encoder at sequence lengths 16 then 24: the second call recompiles with a dynamic length."""
    from transformers import BertConfig, BertModel

    cfg = BertConfig(hidden_size=32, vocab_size=128, max_position_embeddings=64, **_TINY)
    model = _seeded(lambda: BertModel(cfg)).to(device)
    compiled = _compile(model, backend)
    outs = []
    with torch.no_grad():
        for n in (16, 24):
            ids = torch.randint(0, 128, (2, n), generator=torch.Generator().manual_seed(n)).to(device)
            outs.append(compiled(input_ids=ids).last_hidden_state)
    return outs


def llama_generate(backend="aot_eager"):
    """generate() with a compiled forward and a dynamic KV cache: two recompiles, the second
    makes the cache length dynamic."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        hidden_size=32, vocab_size=128, max_position_embeddings=64, num_key_value_heads=1, **_TINY
    )
    model = _seeded(lambda: LlamaForCausalLM(cfg))
    model.forward = _compile(model.forward, backend)
    ids = torch.randint(0, 128, (1, 5), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        return model.generate(ids, max_new_tokens=5, do_sample=False, pad_token_id=0)


def t5_train(backend="aot_eager", device="cpu"):
    """Encoder-decoder training step. Breaks on an observed exception."""
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(
        d_model=32,
        d_ff=64,
        d_kv=16,
        num_heads=2,
        num_layers=2,
        num_decoder_layers=2,
        vocab_size=128,
        dropout_rate=0.0,
        decoder_start_token_id=0,
        pad_token_id=0,
    )
    model = _seeded(lambda: T5ForConditionalGeneration(cfg)).to(device)
    model.train()
    step = _compile(model, backend)
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(0, 128, (2, 12), generator=g).to(device)
    labels = torch.randint(0, 128, (2, 8), generator=g).to(device)
    out = step(input_ids=ids, labels=labels)
    out.loss.backward()
    return out.loss.detach()


def vit_two_batches(backend="aot_eager"):
    """Vision transformer at batch sizes 2 then 3: the batch becomes dynamic."""
    from transformers import ViTConfig, ViTForImageClassification

    cfg = ViTConfig(hidden_size=32, image_size=32, patch_size=8, num_labels=3, **_TINY)
    model = _seeded(lambda: ViTForImageClassification(cfg))
    compiled = _compile(model, backend)
    outs = []
    with torch.no_grad():
        for b in (2, 3):
            px = torch.randn(b, 3, 32, 32, generator=torch.Generator().manual_seed(b))
            outs.append(compiled(pixel_values=px).logits)
    return outs


def bert_padding_mask(backend="aot_eager"):
    """Encoder called without, then with, a padding mask: the mask path changes (a new guard
    on attention_mask) and the model recompiles."""
    from transformers import BertConfig, BertModel

    cfg = BertConfig(hidden_size=32, vocab_size=128, max_position_embeddings=64, **_TINY)
    model = _seeded(lambda: BertModel(cfg))
    compiled = _compile(model, backend)
    ids = torch.randint(0, 128, (2, 16), generator=torch.Generator().manual_seed(4))
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 10:] = 0
    with torch.no_grad():
        return [
            compiled(input_ids=ids).last_hidden_state,
            compiled(input_ids=ids, attention_mask=mask).last_hidden_state,
        ]


def mixtral_moe(backend="aot_eager"):
    """Mixture of experts: routing picks experts by data (nonzero / where)."""
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(
        hidden_size=32, vocab_size=128, max_position_embeddings=64, num_key_value_heads=1,
        num_local_experts=4, num_experts_per_tok=2, **_TINY,
    )  # fmt: skip
    cfg._experts_implementation = "eager"  # the loop over experts hit, picked by nonzero()
    model = _seeded(lambda: MixtralForCausalLM(cfg))
    compiled = _compile(model, backend)
    ids = torch.randint(0, 128, (2, 8), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        return compiled(input_ids=ids).logits


def distilbert_classify_train(backend="aot_eager"):
    """Sequence classification training step at two batch sizes (labels given)."""
    from transformers import DistilBertConfig, DistilBertForSequenceClassification

    cfg = DistilBertConfig(
        dim=32,
        hidden_dim=64,
        n_layers=2,
        n_heads=2,
        vocab_size=128,
        num_labels=3,
        dropout=0.0,
        attention_dropout=0.0,
        seq_classif_dropout=0.0,
    )
    model = _seeded(lambda: DistilBertForSequenceClassification(cfg))
    model.train()
    step = _compile(model, backend)
    losses = []
    for b in (2, 4):
        g = torch.Generator().manual_seed(b)
        ids = torch.randint(0, 128, (b, 12), generator=g)
        labels = torch.randint(0, 3, (b,), generator=g)
        out = step(input_ids=ids, labels=labels)
        out.loss.backward()
        losses.append(out.loss.detach())
    return losses


SCENARIOS = {
    f.__name__: f
    for f in (
        gpt2_train,
        bert_two_lengths,
        llama_generate,
        t5_train,
        vit_two_batches,
        bert_padding_mask,
        mixtral_moe,
        distilbert_classify_train,
    )
}


if __name__ == "__main__":
    name = sys.argv[1]
    backend = sys.argv[2] if len(sys.argv) > 2 else "aot_eager"
    SCENARIOS[name](backend)
