"""`pt2-explorer advise` on notebook 16's model, on the GPU: the program below (the model of
notebook 16 at width 256, on CUDA; `.item()` read on the host between stages, as in
isayevlab/aimnetcentral#109) run as it is and under each fix its verdict calls for, each in a
fresh process. Writes, into OUT (default notebooks/data):

- ``h100-advise-item.txt.gz``: the table and each row as ``advise`` prints it (piped: whole lines);
- ``h100-advise-item-<fix>.json.gz``: each run's report (``baseline`` the program as it is).

Run from the repository root on the GPU machine:

    python notebooks/data/make_advise_data.py OUT
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROGRAM = """\
import torch
from torch import nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return torch.nn.functional.gelu(self.lin(x)) + x


class Scaled(nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.a, self.b, self.c = Block(d), Block(d), Block(d)

    def forward(self, x):
        x = self.a(x)
        s = x.norm().item()
        x = self.b(x / (1.0 + s))
        t = x.mean().item()
        return self.c(x - t)


model = torch.compile(Scaled().cuda().eval())
with torch.no_grad():
    for _ in range(3):
        out = model(torch.randn(64, 256, device="cuda"))
print("out", tuple(out.shape))
"""


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "notebooks/data").resolve()
    out.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parent.parent.parent
    work = Path(tempfile.mkdtemp(prefix="advise-item-"))
    (work / "scaled.py").write_text(PROGRAM)
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "explorer", "advise", "--reps", "50", "--out", "runs", "scaled.py"]
    done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=480)
    sys.stderr.write(done.stderr)
    print(done.stdout)
    if done.returncode != 0:
        return done.returncode
    with (
        open(work / "runs" / "advice.txt", "rb") as f,
        gzip.open(out / "h100-advise-item.txt.gz", "wb", 9) as g,
    ):
        shutil.copyfileobj(f, g)
    for run in sorted((work / "runs").iterdir()):
        report = run / "report.json"
        if report.is_file():
            with (
                open(report, "rb") as f,
                gzip.open(out / f"h100-advise-item-{run.name}.json.gz", "wb", 9) as g,
            ):
                shutil.copyfileobj(f, g)
    return 0


if __name__ == "__main__":
    sys.exit(main())
