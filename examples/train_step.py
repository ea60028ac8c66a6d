"""A Hugging Face GPT-2 training step, compiled whole (random weights from a small config, no
download), on the GPU where there is one:

    pt2-explorer record --bench --html out/train.html examples/train_step.py [--layers N] [--steps N]

`--bench` times the compiled step against eager on its last batch, with the parameters,
gradients and optimizer state restored around every call, and the page's Why tab says what
the compiled step's time went to.
"""

import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3)
    ns = ap.parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = GPT2Config(n_layer=ns.layers, n_embd=256, n_head=4, vocab_size=2048, n_positions=128)
    model = GPT2LMHeadModel(config).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    @torch.compile
    def train_step(ids):
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for step in range(ns.steps):
        ids = torch.randint(0, config.vocab_size, (8, 64), device=device)
        print(f"step {step}: loss {train_step(ids).item():.4f}")


if __name__ == "__main__":
    main()
