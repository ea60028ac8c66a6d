"""A small GPU example (a Linear+GELU block with a graph break, trained one step, then a new
batch size): what the GPU recording in tests/fixtures/reports was made from.

    pt2-explorer record --json gpu-report.json examples/gpu_block.py   # needs CUDA
"""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d: int = 256) -> None:
        super().__init__()
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.gelu(self.up(self.norm(x)))
        if h.mean() > 0:  # data-dependent branch: a graph break
            h = h * 0.5
        return x + self.down(h)


def main() -> None:
    torch.manual_seed(0)
    model = Block().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    compiled = torch.compile(model)
    for batch in (32, 32, 48):  # the 48 recompiles
        loss = compiled(torch.randn(batch, 256, device="cuda")).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
