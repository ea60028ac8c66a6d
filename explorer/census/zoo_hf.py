"""The built-in zoo ``hf-small``: Hugging Face architectures built from small configs (two
layers, hidden size 32, vocabularies of 128), no weights, no network. It is a census models
module like a user's own (docs/census.md): ``CENSUS_MODELS`` maps a name to a factory that
returns ``(model, inputs)``, where ``inputs(batch)`` gives the call's keyword arguments;
``CENSUS_FAMILIES`` gives each model's family. transformers is imported when a factory runs.

Decoders are their causal-LM heads called with ``labels`` (a language-model step: the loss
is computed inside, as users train them); the others are their base models.
"""

from __future__ import annotations

import functools

# the common small config; a model's own keys override it (transformers maps these names to
# each config's own, e.g. GPT-2's n_embd)
SMALL = dict(
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=64,
    vocab_size=128,
    max_position_embeddings=64,
    num_key_value_heads=2,
)
_IDS = dict(bos_token_id=1, eos_token_id=2, pad_token_id=0)
_SEQ = 16  # tokens per sequence
_IMAGE = dict(image_size=32, patch_size=8, num_channels=3)
_CNN = dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], num_channels=3)

# name -> (family, transformers model_type, config overrides, inputs kind)
ARCHS: dict[str, tuple[str, str, dict, str]] = {
    # decoders (causal LM step)
    "gpt2": ("decoder", "gpt2", _IDS, "lm"),
    "gptj": ("decoder", "gptj", {**_IDS, "rotary_dim": 8}, "lm"),
    "gpt_neox": ("decoder", "gpt_neox", _IDS, "lm"),
    "llama": ("decoder", "llama", _IDS, "lm"),
    "mistral": ("decoder", "mistral", _IDS, "lm"),
    "qwen2": ("decoder", "qwen2", _IDS, "lm"),
    "qwen3": ("decoder", "qwen3", {**_IDS, "head_dim": 16}, "lm"),
    "phi": ("decoder", "phi", _IDS, "lm"),
    "gemma": ("decoder", "gemma", {**_IDS, "head_dim": 16}, "lm"),
    "gemma2": ("decoder", "gemma2", {**_IDS, "head_dim": 16}, "lm"),
    "falcon": ("decoder", "falcon", _IDS, "lm"),
    "bloom": ("decoder", "bloom", _IDS, "lm"),
    "opt": ("decoder", "opt", {**_IDS, "ffn_dim": 64, "word_embed_proj_dim": 32}, "lm"),
    "codegen": ("decoder", "codegen", {**_IDS, "num_attention_heads": 4, "rotary_dim": 4}, "lm"),
    "starcoder2": ("decoder", "starcoder2", _IDS, "lm"),
    "olmo": ("decoder", "olmo", _IDS, "lm"),
    "stablelm": ("decoder", "stablelm", _IDS, "lm"),
    "granite": ("decoder", "granite", _IDS, "lm"),
    "biogpt": ("decoder", "biogpt", _IDS, "lm"),
    # mixtures of experts
    "mixtral": ("moe", "mixtral", {**_IDS, "num_local_experts": 4, "num_experts_per_tok": 2}, "lm"),
    "qwen2_moe": (
        "moe",
        "qwen2_moe",
        {
            **_IDS,
            "num_experts": 4,
            "num_experts_per_tok": 2,
            "moe_intermediate_size": 32,
            "shared_expert_intermediate_size": 32,
        },
        "lm",
    ),  # fmt: skip
    "olmoe": ("moe", "olmoe", {**_IDS, "num_experts": 4, "num_experts_per_tok": 2}, "lm"),
    "switch_transformers": (
        "moe",
        "switch_transformers",
        {
            "d_model": 32,
            "d_ff": 64,
            "d_kv": 16,
            "num_heads": 2,
            "num_layers": 2,
            "num_sparse_encoder_layers": 1,
            "num_sparse_decoder_layers": 1,
            "num_experts": 4,
            "decoder_start_token_id": 0,
            "pad_token_id": 0,
        },
        "seq2seq",
    ),  # fmt: skip
    # encoders
    "bert": ("encoder", "bert", {}, "text"),
    "roberta": ("encoder", "roberta", {"pad_token_id": 1}, "text"),
    "distilbert": (
        "encoder",
        "distilbert",
        {"dim": 32, "hidden_dim": 64, "n_layers": 2, "n_heads": 2},
        "text",
    ),
    "albert": ("encoder", "albert", {"embedding_size": 16}, "text"),
    "electra": ("encoder", "electra", {"embedding_size": 16}, "text"),
    "deberta_v2": ("encoder", "deberta-v2", {}, "text"),
    "xlm_roberta": ("encoder", "xlm-roberta", {"pad_token_id": 1}, "text"),
    "mobilebert": (
        "encoder",
        "mobilebert",
        {
            "embedding_size": 16,
            "intra_bottleneck_size": 16,
            "true_hidden_size": 16,
            "num_feedforward_networks": 1,
        },
        "text",
    ),
    "mpnet": ("encoder", "mpnet", {"pad_token_id": 1}, "text"),
    # encoder-decoders
    "t5": (
        "encoder-decoder",
        "t5",
        {"d_model": 32, "d_ff": 64, "d_kv": 16, "num_heads": 2, "num_layers": 2, "decoder_start_token_id": 0},
        "seq2seq",
    ),
    "bart": (
        "encoder-decoder",
        "bart",
        {
            **_IDS,
            **dict(
                d_model=32,
                encoder_layers=2,
                decoder_layers=2,
                encoder_attention_heads=2,
                decoder_attention_heads=2,
                encoder_ffn_dim=64,
                decoder_ffn_dim=64,
            ),
        },
        "seq2seq",
    ),  # fmt: skip
    "pegasus": (
        "encoder-decoder",
        "pegasus",
        {
            **_IDS,
            **dict(
                d_model=32,
                encoder_layers=2,
                decoder_layers=2,
                encoder_attention_heads=2,
                decoder_attention_heads=2,
                encoder_ffn_dim=64,
                decoder_ffn_dim=64,
            ),
        },
        "seq2seq",
    ),  # fmt: skip
    "m2m_100": (
        "encoder-decoder",
        "m2m_100",
        {
            **_IDS,
            **dict(
                d_model=32,
                encoder_layers=2,
                decoder_layers=2,
                encoder_attention_heads=2,
                decoder_attention_heads=2,
                encoder_ffn_dim=64,
                decoder_ffn_dim=64,
            ),
        },
        "seq2seq",
    ),  # fmt: skip
    # vision
    "vit": ("vision", "vit", _IMAGE, "image"),
    "deit": ("vision", "deit", _IMAGE, "image"),
    "beit": ("vision", "beit", _IMAGE, "image"),
    "dinov2": ("vision", "dinov2", _IMAGE, "image"),
    "convnext": ("vision", "convnext", _CNN, "image"),
    "resnet": ("vision", "resnet", {**_CNN, "embedding_size": 8}, "image"),
    # audio
    "wav2vec2": (
        "audio",
        "wav2vec2",
        {
            "conv_dim": [16, 16],
            "conv_stride": [5, 2],
            "conv_kernel": [10, 3],
            "num_conv_pos_embeddings": 16,
            "num_conv_pos_embedding_groups": 2,
        },
        "wave",
    ),  # fmt: skip
    "hubert": (
        "audio",
        "hubert",
        {
            "conv_dim": [16, 16],
            "conv_stride": [5, 2],
            "conv_kernel": [10, 3],
            "num_conv_pos_embeddings": 16,
            "num_conv_pos_embedding_groups": 2,
        },
        "wave",
    ),  # fmt: skip
    "whisper": (
        "audio",
        "whisper",
        {
            **_IDS,
            "decoder_start_token_id": 1,
            "d_model": 32,
            "encoder_layers": 2,
            "decoder_layers": 2,
            "encoder_attention_heads": 2,
            "decoder_attention_heads": 2,
            "encoder_ffn_dim": 64,
            "decoder_ffn_dim": 64,
            "num_mel_bins": 16,
            "max_source_positions": 16,
            "max_target_positions": 32,
        },
        "mel",
    ),  # fmt: skip
    # multimodal (text and image towers)
    "clip": (
        "multimodal",
        "clip",
        {
            "projection_dim": 16,
            "text_config": {**SMALL, "bos_token_id": 1, "eos_token_id": 2},
            "vision_config": {**SMALL, **_IMAGE},
        },
        "text+image",
    ),  # fmt: skip
    "siglip": (
        "multimodal",
        "siglip",
        {
            "text_config": {**SMALL, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0},
            "vision_config": {**SMALL, **_IMAGE},
        },
        "text+image",
    ),  # fmt: skip
}


def _generator(batch: int, salt: int = 0):
    import torch

    return torch.Generator().manual_seed(1000 * batch + salt)


def _inputs(kind: str, cfg, batch: int) -> dict:
    """The call's keyword arguments for ``batch`` examples (deterministic per batch size)."""
    import torch

    g = _generator(batch)
    if kind in ("lm", "text", "seq2seq", "text+image"):
        vocab = getattr(cfg, "vocab_size", None) or cfg.text_config.vocab_size
        ids = torch.randint(3, vocab, (batch, _SEQ), generator=g)
        out = {"input_ids": ids}
        if kind == "lm":
            out["labels"] = ids
        if kind == "seq2seq":
            out["decoder_input_ids"] = torch.randint(3, vocab, (batch, _SEQ // 2), generator=g)
        if kind == "text+image":
            out["pixel_values"] = torch.randn(batch, 3, 32, 32, generator=g)
        return out
    if kind == "image":
        return {"pixel_values": torch.randn(batch, 3, 32, 32, generator=g)}
    if kind == "wave":
        return {"input_values": torch.randn(batch, 400, generator=g)}
    if kind == "mel":
        frames = 2 * cfg.max_source_positions
        return {
            "input_features": torch.randn(batch, cfg.num_mel_bins, frames, generator=g),
            "decoder_input_ids": torch.randint(3, cfg.vocab_size, (batch, 8), generator=g),
        }
    raise ValueError(f"unknown inputs kind {kind!r}")


def build(name: str):
    """``(model, inputs)`` of the zoo's model ``name``: weights from a fixed seed."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    _family, model_type, overrides, kind = ARCHS[name]
    base = {} if "hidden_sizes" in overrides else SMALL  # convolutional nets: their own sizes
    cfg = AutoConfig.for_model(model_type, **{**base, **overrides})
    torch.manual_seed(0)
    model = (AutoModelForCausalLM if kind == "lm" else AutoModel).from_config(cfg)
    return model, functools.partial(_inputs, kind, cfg)


CENSUS_MODELS = {name: functools.partial(build, name) for name in ARCHS}
CENSUS_FAMILIES = {name: family for name, (family, *_rest) in ARCHS.items()}
