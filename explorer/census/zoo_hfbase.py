"""The built-in zoo ``hf-base``: each architecture of ``hf-small`` at a published base size
(random weights, no network), the ~1B-parameter class where an architecture is larger, with
the batch size and sequence length PyTorch's own dynamo benchmark harness uses.

Where each size comes from (``SIZES``): transformers' own default config where that is the
published base model (``{}``), else the published checkpoint's shape named beside it, else
(an architecture published only larger) a 1B-class shape of it, marked "1B-class". Batch
sizes and sequence lengths: pytorch/pytorch ``benchmarks/dynamo/huggingface_models_list.txt``
(its batch per model class) and ``huggingface.py``'s ``get_sequence_length`` (1024 for GPT-2,
BART and T5; 2048 for OPT; 512 for the BERT family, ALBERT, DeBERTa, ELECTRA and DistilGPT-2;
128 for MobileBERT and every other), ``HARNESS`` naming the entry each batch is taken from;
an architecture the harness lacks takes its 1B-class decoders' batch, 8. Vision models: 224
pixels, batch 8 (the harness's Hugging Face ViT entries are gone; timm's are in timm-base).
"""

from __future__ import annotations

import functools

from .zoo_hf import ARCHS

_IDS = dict(bos_token_id=1, eos_token_id=2, pad_token_id=0)
_LLAMA_1B = dict(  # Llama-3.2-1B's shape
    hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
    num_key_value_heads=8, vocab_size=128256, max_position_embeddings=2048,
)  # fmt: skip
_B1 = dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=16, intermediate_size=8192)

# name -> (config overrides, where the size comes from)
SIZES: dict[str, tuple[dict, str]] = {
    "gpt2": ({}, "gpt2 (124M): transformers' default"),
    "gptj": (dict(n_embd=2048, n_layer=16, n_head=16, rotary_dim=64), "1B-class (GPT-J is 6B)"),
    "gpt_neox": (dict(_B1, num_attention_heads=8, vocab_size=50304), "pythia-1b"),
    "llama": (_LLAMA_1B, "Llama-3.2-1B"),
    "mistral": (_LLAMA_1B, "1B-class, Llama-3.2-1B's shape (Mistral is 7B)"),
    "qwen2": (
        dict(
            hidden_size=896,
            intermediate_size=4864,
            num_hidden_layers=24,
            num_attention_heads=14,
            num_key_value_heads=2,
            vocab_size=151936,
        ),
        "Qwen2-0.5B",
    ),  # fmt: skip
    "qwen3": (
        dict(
            hidden_size=1024,
            intermediate_size=3072,
            num_hidden_layers=28,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            vocab_size=151936,
        ),
        "Qwen3-0.6B",
    ),  # fmt: skip
    "phi": ({}, "phi-1 (1.3B): transformers' default"),
    "gemma": (
        dict(
            hidden_size=2048,
            intermediate_size=16384,
            num_hidden_layers=18,
            num_attention_heads=8,
            num_key_value_heads=1,
            head_dim=256,
        ),
        "gemma-2b",
    ),  # fmt: skip
    "gemma2": (
        dict(
            hidden_size=2304,
            intermediate_size=9216,
            num_hidden_layers=26,
            num_attention_heads=8,
            num_key_value_heads=4,
            head_dim=256,
        ),
        "gemma-2-2b",
    ),  # fmt: skip
    "falcon": (
        dict(hidden_size=2048, num_hidden_layers=24, num_attention_heads=32, vocab_size=50304),
        "falcon-rw-1b's shape",
    ),  # fmt: skip
    "bloom": (dict(hidden_size=1024, n_layer=24, n_head=16, vocab_size=250880), "bloom-560m"),
    "opt": ({}, "opt-125m: transformers' default"),
    "codegen": (dict(n_embd=1024, n_layer=20, n_head=16, rotary_dim=32, vocab_size=51200), "codegen-350M"),
    "starcoder2": (dict(_B1, num_key_value_heads=4), "1B-class (StarCoder2's smallest is 3B)"),
    "olmo": (dict(_B1, vocab_size=50304), "OLMo-1B"),
    "stablelm": (
        dict(
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=24,
            num_attention_heads=32,
            vocab_size=100352,
        ),
        "stablelm-2-1_6b",
    ),  # fmt: skip
    "granite": (dict(_B1, num_key_value_heads=8, vocab_size=49155), "1B-class (granite-3.1-2b's widths)"),
    "biogpt": ({}, "biogpt (347M): transformers' default"),
    "mixtral": (
        dict(
            hidden_size=1024,
            intermediate_size=3584,
            num_hidden_layers=12,
            num_attention_heads=16,
            num_key_value_heads=8,
            num_local_experts=8,
            num_experts_per_tok=2,
        ),
        "1B-class (Mixtral is 8x7B)",
    ),  # fmt: skip
    "qwen2_moe": (
        dict(
            hidden_size=1024,
            intermediate_size=2816,
            num_hidden_layers=12,
            num_attention_heads=16,
            num_key_value_heads=16,
            num_experts=16,
            num_experts_per_tok=4,
            moe_intermediate_size=704,
            shared_expert_intermediate_size=2816,
            vocab_size=151936,
        ),
        "1B-class (Qwen1.5-MoE-A2.7B's widths, fewer layers and experts)",
    ),  # fmt: skip
    "olmoe": (
        dict(
            hidden_size=1024,
            intermediate_size=1024,
            num_hidden_layers=8,
            num_attention_heads=16,
            num_experts=64,
            num_experts_per_tok=8,
        ),
        "1B-class (OLMoE-1B-7B's widths, 8 layers)",
    ),  # fmt: skip
    "switch_transformers": (dict(decoder_start_token_id=0), "switch-base-8: transformers' default"),
    "bert": ({}, "bert-base: transformers' default"),
    "roberta": (dict(pad_token_id=1, vocab_size=50265), "roberta-base"),
    "distilbert": ({}, "distilbert-base: transformers' default"),
    "albert": (
        dict(hidden_size=768, num_attention_heads=12, intermediate_size=3072, embedding_size=128),
        "albert-base-v2",
    ),  # fmt: skip
    "electra": (
        dict(hidden_size=768, num_attention_heads=12, intermediate_size=3072, embedding_size=768),
        "electra-base",
    ),  # fmt: skip
    "deberta_v2": (
        dict(
            hidden_size=768,
            num_hidden_layers=12,
            num_attention_heads=12,
            intermediate_size=3072,
            vocab_size=128100,
            relative_attention=True,
            position_buckets=256,
            pos_att_type=["p2c", "c2p"],
            max_relative_positions=-1,
            norm_rel_ebd="layer_norm",
            share_att_key=True,
            position_biased_input=False,
        ),
        "deberta-v3-base",
    ),  # fmt: skip
    "xlm_roberta": (dict(pad_token_id=1, vocab_size=250002, max_position_embeddings=514), "xlm-roberta-base"),
    "mobilebert": ({}, "mobilebert-uncased: transformers' default"),
    "mpnet": ({}, "mpnet-base: transformers' default"),
    "t5": (dict(d_model=768, d_ff=3072, num_layers=12, num_heads=12, decoder_start_token_id=0), "t5-base"),
    "bart": (dict(_IDS), "bart-large: transformers' default"),
    "pegasus": (dict(_IDS), "pegasus-large: transformers' default"),
    "m2m_100": (dict(_IDS), "m2m100_418M: transformers' default"),
    "vit": ({}, "vit-base-patch16-224: transformers' default"),
    "deit": ({}, "deit-base-patch16-224: transformers' default"),
    "beit": ({}, "beit-base-patch16-224: transformers' default"),
    "dinov2": (dict(image_size=224), "dinov2-base's widths at 224 pixels"),
    "convnext": ({}, "convnext-tiny-224: transformers' default"),
    "resnet": ({}, "resnet-50: transformers' default"),
    "wav2vec2": ({}, "wav2vec2-base: transformers' default"),
    "hubert": ({}, "hubert-base: transformers' default"),
    "whisper": (
        dict(
            d_model=512,
            encoder_layers=6,
            decoder_layers=6,
            encoder_attention_heads=8,
            decoder_attention_heads=8,
            encoder_ffn_dim=2048,
            decoder_ffn_dim=2048,
            decoder_start_token_id=1,
        ),
        "whisper-base",
    ),  # fmt: skip
    "clip": ({}, "clip-vit-base-patch32: transformers' default"),
    "siglip": ({}, "siglip-base-patch16-224: transformers' default"),
}

# name -> (the harness's entry whose batch size it takes, batch, sequence length)
HARNESS: dict[str, tuple[str, int, int]] = {
    "gpt2": ("GPT2ForSequenceClassification", 8, 1024),
    "gptj": ("GPTJForCausalLM", 1, 128),
    "gpt_neox": ("GPTNeoForCausalLM", 32, 128),
    "llama": ("meta-llama/Llama-3.2-1B", 8, 128),
    "mistral": ("mistralai/Mistral-7B-Instruct-v0.3", 8, 128),
    "qwen3": ("Qwen/Qwen3-0.6B", 8, 128),
    "gemma2": ("google/gemma-2-2b", 8, 128),
    "opt": ("OPTForCausalLM", 4, 2048),
    "bert": ("BertForMaskedLM", 32, 512),
    "roberta": ("RobertaForCausalLM", 32, 512),
    "distilbert": ("DistilBertForMaskedLM", 256, 128),
    "albert": ("AlbertForMaskedLM", 8, 512),
    "electra": ("ElectraForCausalLM", 64, 512),
    "deberta_v2": ("DebertaV2ForMaskedLM", 8, 512),
    "xlm_roberta": ("CamemBert", 32, 512),
    "mobilebert": ("MobileBertForMaskedLM", 256, 128),
    "t5": ("T5ForConditionalGeneration", 8, 1024),
    "bart": ("BartForConditionalGeneration", 4, 1024),
    "pegasus": ("PegasusForConditionalGeneration", 64, 128),
    "m2m_100": ("M2M100ForConditionalGeneration", 64, 128),
    "whisper": ("openai/whisper-tiny", 8, 128),
}
DEFAULT = ("none: the 1B-class decoders' batch", 8, 128)
_PIXELS = 224
_SECONDS = 1  # of 16 kHz audio


def batch_source(name: str) -> str:
    """Where the model's batch size comes from, in words."""
    entry, batch, seq = HARNESS.get(name, DEFAULT)
    return f"batch {batch}, {seq} tokens: harness entry {entry}"


def _inputs(kind: str, cfg, seq: int, batch: int) -> dict:
    import torch

    g = torch.Generator().manual_seed(batch)
    if kind in ("lm", "text", "seq2seq", "text+image"):
        text_cfg = getattr(cfg, "text_config", None) or cfg
        vocab = text_cfg.vocab_size
        limit = getattr(text_cfg, "max_position_embeddings", None) or seq
        n = min(seq, limit - 2 if kind in ("text", "text+image") else limit)
        ids = torch.randint(3, vocab, (batch, n), generator=g)
        out = {"input_ids": ids}
        if kind == "lm":
            out["labels"] = ids
        if kind == "seq2seq":
            out["decoder_input_ids"] = torch.randint(3, vocab, (batch, n), generator=g)
        if kind == "text+image":
            size = cfg.vision_config.image_size
            out["pixel_values"] = torch.randn(batch, 3, size, size, generator=g)
        return out
    if kind == "image":
        return {"pixel_values": torch.randn(batch, 3, _PIXELS, _PIXELS, generator=g)}
    if kind == "wave":
        return {"input_values": torch.randn(batch, 16000 * _SECONDS, generator=g)}
    if kind == "mel":
        return {
            "input_features": torch.randn(batch, cfg.num_mel_bins, 2 * cfg.max_source_positions, generator=g),
            "decoder_input_ids": torch.randint(3, cfg.vocab_size, (batch, seq), generator=g),
        }
    raise ValueError(f"unknown inputs kind {kind!r}")


def build(name: str):
    """``(model, inputs)`` of the zoo's model ``name``: its base size, weights from a fixed seed."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    _family, model_type, _small, kind = ARCHS[name]
    overrides, _where = SIZES[name]
    ids = _IDS if kind == "lm" and "pad_token_id" not in overrides else {}
    cfg = AutoConfig.for_model(model_type, **{**ids, **overrides})
    torch.manual_seed(0)
    model = (AutoModelForCausalLM if kind == "lm" else AutoModel).from_config(cfg)
    return model, functools.partial(_inputs, kind, cfg, HARNESS.get(name, DEFAULT)[2])


CENSUS_MODELS = {name: functools.partial(build, name) for name in ARCHS}
CENSUS_FAMILIES = {name: family for name, (family, *_rest) in ARCHS.items()}
CENSUS_BATCH = {name: HARNESS.get(name, DEFAULT)[1] for name in ARCHS}
CENSUS_BATCH_SOURCE = {name: batch_source(name) for name in ARCHS}
