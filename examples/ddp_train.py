"""A small data-parallel training step under torch.compile, for torchrun (CPU with gloo, or
GPUs with NCCL). Used by tests/test_distributed.py and notebook 09_distributed:

    torchrun --nproc-per-node 2 examples/ddp_train.py [--steps N] [--diverge-rank R] [--fsdp]
    torchrun --nproc-per-node 2 -m explorer record --json out/ddp.json examples/ddp_train.py

DDP: ``torch.compile(DDP(model, bucket_cap_mb=1))``. Dynamo then compiles the model's
``forward`` with DDP's optimizer (DDPOptimizer, ``torch._dynamo.config.optimize_ddp``), which
splits the graph at DDP's bucket borders so that the gradients of one bucket can be
all-reduced while the backward of the next is still running. It splits only when the
parameters fill more than one bucket: layers of 1 MB (512x512 f32) and 1 MB buckets here.
The model is a class of this file: ``torch.compile`` of DDP around a ``torch.nn.Sequential``
compiles no graph of the model (Dynamo skips torch.nn's own forward as a top-level frame).

``--diverge-rank R`` makes rank R call the model with a different batch size on its second
step, so that it alone recompiles: a divergence for the ranks view to find. ``--fail-rank R``
makes rank R raise on its last step (torchrun then stops the other ranks). ``--fsdp`` uses
FSDP2 (``fully_shard`` per layer) instead of DDP.
"""

import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(torch.nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.fc1 = torch.nn.Linear(width, width)
        self.fc2 = torch.nn.Linear(width, width)
        self.head = torch.nn.Linear(width, 8)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.head(x)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--diverge-rank", type=int, default=None)
    p.add_argument("--width", type=int, default=512)  # 512x512 f32 = 1 MB per layer
    p.add_argument("--fsdp", action="store_true", help="FSDP2 (fully_shard) instead of DDP")
    p.add_argument("--fail-rank", type=int, default=None, help="this rank raises on its last step")
    args = p.parse_args()
    on_gpu = torch.cuda.is_available()
    dist.init_process_group("nccl" if on_gpu else "gloo")
    rank = dist.get_rank()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if on_gpu else torch.device("cpu")
    if on_gpu:
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    model = Net(args.width).to(device)
    if args.fsdp:
        from torch.distributed.fsdp import fully_shard

        for layer in (model.fc1, model.fc2, model.head):
            fully_shard(layer)
        fully_shard(model)
        wrapped = model
    else:
        wrapped = DDP(model, bucket_cap_mb=1)
    step = torch.compile(wrapped)
    opt = torch.optim.SGD(wrapped.parameters(), lr=0.01)
    for i in range(args.steps):
        batch = 8
        if rank == args.diverge_rank and i == 1:
            batch = 6  # this rank alone sees another batch size: it recompiles
        gen = torch.Generator(device).manual_seed(100 * rank + i)
        x = torch.randn(batch, args.width, device=device, generator=gen)
        if rank == args.fail_rank and i == args.steps - 1:
            raise RuntimeError(f"rank {rank} failed on purpose at step {i}")
        loss = step(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    if rank == 0:
        kind = "FSDP2" if args.fsdp else "DDP"
        print(f"done: {kind}, {args.steps} steps, world size {dist.get_world_size()}")
    # tear down in order: DDP's reducer holds the process group, and a gloo process group
    # destroyed with the reducer while its worker thread still frees the last all-reduce can
    # deadlock on the GIL (seen with torch 2.13 on CPU); a barrier lets the worker finish first
    dist.barrier()
    del step, wrapped, opt
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
