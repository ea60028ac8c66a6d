"""Report size against torch's own TORCH_TRACE of the same compiles, on CPU.

    .venv/bin/python benchmarks/report_size.py [SCENARIO ...]

Each scenario runs in a fresh process with ``TORCH_TRACE=<dir>`` set and inside
``compiler.recording()``, so the log and the report are of the same compiles (Inductor,
caches off as a recording sets them). Printed per scenario, in MB: the TORCH_TRACE directory
(plain, and each log gzipped at level 6), the report as the previous format wrote it (schema 1:
the full form, ``indent=1``) and as ``to_json`` writes it now (schema 2: plain, ``.json.gz``),
and the report now without Inductor's fusion IR and logs (``ir_pre_fusion``, ``ir_post_fusion``,
``fusion``), which a recording takes from Inductor's artifact loggers and the TORCH_TRACE log does
not hold: the same content as the log. Scenarios: the small Hugging
Face models of tests/hf_corpus.py (``bert_two_lengths``, ``gpt2_train``, ...) and
``bert_base`` (BERT-base's default config, no weights: one inference compile, sequence 128).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ("bert_base", "bert_two_lengths", "gpt2_train")

_WORKER = """
import json, os, sys
sys.path.insert(0, {root!r})
import torch, compiler
name, out = sys.argv[1], sys.argv[2]
if name == "bert_base":
    from transformers import BertConfig, BertModel
    def run():
        torch.manual_seed(0)
        m = BertModel(BertConfig()).eval()
        ids = torch.randint(0, 30522, (1, 128), generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            torch.compile(m)(input_ids=ids)
else:
    from tests import hf_corpus
    def run():
        getattr(hf_corpus, name)("inductor")
with compiler.recording() as rec:
    run()
report = rec.report
with open(os.path.join(out, "v1.json"), "w", encoding="utf-8") as f:
    json.dump({{**report.to_dict(), "schema_version": 1}}, f, indent=1)  # as schema 1 wrote it
report.to_json(os.path.join(out, "v2.json"))
report.to_json(os.path.join(out, "v2.json.gz"))
import dataclasses, gzip
def no_fusion_logs(c):  # what the TORCH_TRACE log holds too: the report less Inductor's fusion logs
    if c.stages.fuse is None:
        return c
    fuse = dataclasses.replace(c.stages.fuse, ir_pre_fusion=(), ir_post_fusion=(), fusion_log=())
    return dataclasses.replace(c, stages=dataclasses.replace(c.stages, fuse=fuse))
same = dataclasses.replace(report, compiles=tuple(map(no_fusion_logs, report.compiles))).to_json()
print(json.dumps({{"compiles": len(report.compiles), "kernels": len(report.kernels), "same": len(same),
                  "same_gz": len(gzip.compress(same.encode(), 6)), "torch": torch.__version__}}))
"""


def measure(name: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="pt2x-size-") as tmp:
        trace = Path(tmp) / "trace"
        env = {**os.environ, "TORCH_TRACE": str(trace)}
        proc = subprocess.run(
            [sys.executable, "-c", _WORKER.format(root=str(ROOT)), name, tmp],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
        if proc.returncode != 0:
            raise SystemExit(f"{name}: {proc.stderr[-3000:]}")
        facts = json.loads(proc.stdout.strip().splitlines()[-1])
        logs = [p for p in trace.iterdir() if p.is_file()]
        facts["trace"] = sum(p.stat().st_size for p in logs)
        facts["trace_gz"] = sum(len(gzip.compress(p.read_bytes(), 6)) for p in logs)
        for k in ("v1.json", "v2.json", "v2.json.gz"):
            facts[k] = (Path(tmp) / k).stat().st_size
        return facts


def main() -> None:
    names = sys.argv[1:] or DEFAULT
    mb = 2**20
    print(
        f"{'scenario':18} {'compiles':>8} {'kernels':>7} {'trace':>7} {'trace gz':>8} "
        f"{'schema 1':>8} {'now':>7} {'now gz':>7} {'no fusion logs':>14} {'its gz':>7}  (MB)"
    )
    for name in names:
        f = measure(name)
        print(
            f"{name:18} {f['compiles']:8} {f['kernels']:7} {f['trace'] / mb:7.2f} {f['trace_gz'] / mb:8.2f} "
            f"{f['v1.json'] / mb:8.2f} {f['v2.json'] / mb:7.2f} {f['v2.json.gz'] / mb:7.2f} "
            f"{f['same'] / mb:14.2f} {f['same_gz'] / mb:7.2f}",
            flush=True,
        )
    print(f"torch {f['torch']}")


if __name__ == "__main__":
    main()
