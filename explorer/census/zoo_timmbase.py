"""The built-in zoo ``timm-base``: 77 timm image models across families at their published
sizes and input resolutions (random weights, ``pretrained=False``: no network; 1000 classes).
Needs timm.

Batch sizes: pytorch/pytorch ``benchmarks/dynamo/timm_models_list.txt``, the dynamo benchmark
harness's own list, for the models it holds (``HARNESS``: 128, or 512 for GhostNet and
MobileNetV3-Large); every other model takes 128, that list's batch for most of its models.
"""

from __future__ import annotations

import functools

from ._images import image_batch

# the harness's timm models and batch sizes (timm_models_list.txt), named as this timm names them
HARNESS = {
    "adv_inception_v3": 128, "beit_base_patch16_224": 128, "convnextv2_nano": 128,
    "deit_base_distilled_patch16_224": 128, "deit_tiny_patch16_224": 128, "dm_nfnet_f0": 128,
    "ghostnet_100": 512, "inception_v3": 128, "mobilenetv2_100": 128, "mobilenetv3_large_100": 512,
    "mobilevit_s": 128, "nfnet_l0": 128, "repvgg_a2": 128, "swin_base_patch4_window7_224": 128,
    "tf_efficientnet_b0": 128, "visformer_small": 128, "vit_base_patch14_dinov2": 128,
    "vit_base_patch16_siglip_256": 128,
}  # fmt: skip
DEFAULT_BATCH = 128

# name -> family
ARCHS = {
    **{n: "vit" for n in ("beit_base_patch16_224", "deit_base_distilled_patch16_224", "deit_tiny_patch16_224",
                          "vit_base_patch14_dinov2", "vit_base_patch16_siglip_256", "vit_base_patch16_224",
                          "vit_small_patch16_224", "deit3_small_patch16_224", "cait_s24_224",
                          "xcit_small_12_p16_224", "pit_b_224", "crossvit_9_240", "eva02_tiny_patch14_224",
                          "volo_d1_224", "levit_256", "convit_small", "tnt_s_patch16_224")},
    **{n: "hierarchical transformer" for n in ("swin_base_patch4_window7_224", "swinv2_tiny_window8_256",
                                               "twins_pcpvt_small", "coat_lite_mini", "maxvit_tiny_tf_224",
                                               "coatnet_0_rw_224", "visformer_small", "efficientformer_l1")},
    **{n: "mlp" for n in ("mixer_b16_224", "gmixer_24_224", "resmlp_12_224", "poolformer_s12")},
    **{n: "convnext" for n in ("convnext_tiny", "convnext_small", "convnextv2_nano", "convnextv2_tiny",
                               "edgenext_small")},
    **{n: "resnet" for n in ("resnet18", "resnet50", "resnet101", "resnext50_32x4d", "wide_resnet50_2",
                             "seresnext50_32x4d", "resnest50d", "res2net50_26w_4s", "cspresnet50",
                             "botnet26t_256", "halonet26t", "lambda_resnet26t", "dla34", "hrnet_w18")},
    **{n: "mobile" for n in ("mobilenetv2_100", "mobilenetv3_large_100", "ghostnet_100", "mobilevit_s",
                             "efficientnet_b0", "tf_efficientnet_b0", "efficientnetv2_s", "mixnet_m",
                             "mnasnet_100", "lcnet_050", "fbnetv3_b", "tinynet_a", "rexnet_100",
                             "fastvit_t8", "repvit_m1", "mobileone_s1")},
    **{n: "classic cnn" for n in ("inception_v3", "adv_inception_v3", "densenet121", "vgg16", "xception65",
                                  "regnety_040", "dm_nfnet_f0", "nfnet_l0", "repvgg_a2", "gernet_l",
                                  "cspdarknet53", "dpn68", "hgnet_tiny")},
}  # fmt: skip


def batch_source(name: str) -> str:
    if name in HARNESS:
        return f"batch {HARNESS[name]}: timm_models_list.txt"
    return f"batch {DEFAULT_BATCH}: not in timm_models_list.txt, its batch for most models"


def build(name: str):
    import timm
    import torch

    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False)
    size = tuple(model.pretrained_cfg.get("input_size") or (3, 224, 224))
    return model, functools.partial(image_batch, size)


try:  # the zoo exists where timm does
    import timm  # noqa: F401
except ImportError as e:  # pragma: no cover - timm installed
    raise ImportError("the timm-base zoo needs timm (pip install timm)") from e

CENSUS_MODELS = {name: functools.partial(build, name) for name in ARCHS}
CENSUS_FAMILIES = dict(ARCHS)
CENSUS_BATCH = {name: HARNESS.get(name, DEFAULT_BATCH) for name in ARCHS}
CENSUS_BATCH_SOURCE = {name: batch_source(name) for name in ARCHS}
