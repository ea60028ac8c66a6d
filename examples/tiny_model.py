"""A small model that graph-breaks and recompiles: the example `make demo` records.

pt2-explorer record --json out/report.json examples/tiny_model.py
"""

import torch
from torch import nn


class TinyNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        if h.mean() > 0.1:  # a data-dependent branch: Dynamo breaks the graph here
            h = h * 2
        return self.fc2(h)


def main() -> None:
    torch.manual_seed(0)
    model = TinyNet()
    compiled = torch.compile(model)
    for batch in (8, 8, 12):  # the third call has a new batch size: a recompile
        loss = compiled(torch.randn(batch, 16)).sum()
        loss.backward()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
