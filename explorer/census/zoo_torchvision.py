"""The built-in zoo ``torchvision``: torchvision's classic image classifiers (random weights,
``weights=None``: no network), 224 pixels (Inception v3: 299), batch 32. Needs torchvision.

Batch size: 32, the torchbench ResNet-50's (pytorch/benchmark
``torchbenchmark/models/resnet50``: ``DEFAULT_TRAIN_BSIZE`` and ``DEFAULT_EVAL_BSIZE``), which
the dynamo benchmark harness (``benchmarks/dynamo/torchbench.py``) runs it with; taken for
every model here."""

from __future__ import annotations

import functools

from ._images import image_batch

ARCHS = {
    "alexnet": "classic cnn",
    "vgg16": "classic cnn",
    "resnet18": "resnet",
    "resnet50": "resnet",
    "resnext50_32x4d": "resnet",
    "wide_resnet50_2": "resnet",
    "densenet121": "classic cnn",
    "squeezenet1_1": "mobile",
    "shufflenet_v2_x1_0": "mobile",
    "mobilenet_v2": "mobile",
    "mobilenet_v3_large": "mobile",
    "mnasnet1_0": "mobile",
    "googlenet": "classic cnn",
    "inception_v3": "classic cnn",
    "efficientnet_b0": "mobile",
    "regnet_y_1_6gf": "classic cnn",
    "convnext_tiny": "convnext",
    "vit_b_16": "vit",
    "swin_t": "hierarchical transformer",
    "maxvit_t": "hierarchical transformer",
}
BATCH = 32
_SIZE = {"inception_v3": 299}


def build(name: str):
    import torch
    import torchvision

    torch.manual_seed(0)
    extra = {"aux_logits": False, "init_weights": False} if name in ("inception_v3", "googlenet") else {}
    model = torchvision.models.get_model(name, weights=None, **extra)
    size = _SIZE.get(name, 224)
    return model, functools.partial(image_batch, (3, size, size))


try:  # the zoo exists where torchvision does
    import torchvision  # noqa: F401
except ImportError as e:  # pragma: no cover - torchvision installed
    raise ImportError("the torchvision zoo needs torchvision (pip install torchvision)") from e

CENSUS_MODELS = {name: functools.partial(build, name) for name in ARCHS}
CENSUS_FAMILIES = dict(ARCHS)
CENSUS_BATCH = dict.fromkeys(ARCHS, BATCH)
CENSUS_BATCH_SOURCE = dict.fromkeys(ARCHS, f"batch {BATCH}: torchbench's resnet50")
