"""Models for tests/test_census_speed.py. ``limits`` writes the memory limits its case's
process runs under (``limits.json`` in the census directory, the process's working directory)
before the recording starts; ``nojournal`` puts a directory where the recording's journal
goes, so the recording cannot start (its case must say why); ``gpuenv`` writes the GPU its
process was given and how many cases share it (``gpuenv.json``)."""

import json
import os
import resource

import torch
from torch import nn


def _inputs(batch):
    return (torch.ones(batch, 4),)


def limits():
    with open("limits.json", "w") as f:
        json.dump(
            {
                "data": resource.getrlimit(resource.RLIMIT_DATA)[0],
                "as": resource.getrlimit(resource.RLIMIT_AS)[0],
            },
            f,
        )
    return nn.Linear(4, 4), _inputs


def nojournal():
    os.makedirs(os.path.join("logs", "nojournal.eval.journal"), exist_ok=True)
    return nn.Linear(4, 4), _inputs


def gpuenv():
    from explorer.census._cases import GPU_SHARE_ENV

    with open("gpuenv.json", "w") as f:
        json.dump({k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", GPU_SHARE_ENV)}, f)
    return nn.Linear(4, 4), _inputs


CENSUS_MODELS = {"limits": limits, "nojournal": nojournal, "gpuenv": gpuenv}
