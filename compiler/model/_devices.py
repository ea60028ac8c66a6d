"""Peak figures of known GPUs, from their vendors' datasheets (dense: no structured sparsity),
keyed by what ``torch.cuda.get_device_name()`` says. An unknown device has no peak: the
roofline says so instead of guessing."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DevicePeak:
    key: str  # matched inside the device name; the first match wins
    gb_per_s: float  # memory bandwidth, GB/s
    fp32_tflops: float | None = None  # FP32 on the CUDA cores (no tensor cores)
    tf32_tflops: float | None = None  # TF32 tensor cores
    bf16_tflops: float | None = None  # BF16 / FP16 tensor cores
    source: str = ""

    def tflops(self, precision: str) -> float | None:
        """Peak TFLOP/s for a precision: fp32 | tf32 | bf16 | fp16."""
        return {"fp32": self.fp32_tflops, "tf32": self.tf32_tflops, "bf16": self.bf16_tflops}.get(
            "bf16" if precision == "fp16" else precision
        )


_H100 = "NVIDIA H100 Tensor Core GPU datasheet"
_A100 = "NVIDIA A100 Tensor Core GPU datasheet"
PEAKS: tuple[DevicePeak, ...] = (
    DevicePeak("H200 NVL", 4800.0, 60.0, 417.5, 835.0, "NVIDIA H200 datasheet"),
    DevicePeak("H200", 4800.0, 67.0, 494.7, 989.4, "NVIDIA H200 datasheet (SXM)"),
    DevicePeak("H100 NVL", 3900.0, 60.0, 417.5, 835.0, _H100),
    DevicePeak("H100 PCIe", 2000.0, 51.0, 378.0, 756.0, _H100),
    DevicePeak("H100", 3350.0, 67.0, 494.7, 989.4, _H100 + " (SXM5, 'NVIDIA H100 80GB HBM3')"),
    DevicePeak("A100-SXM4-80GB", 2039.0, 19.5, 156.0, 312.0, _A100),
    DevicePeak("A100 80GB PCIe", 1935.0, 19.5, 156.0, 312.0, _A100),
    DevicePeak("A100", 1555.0, 19.5, 156.0, 312.0, _A100 + " (40 GB)"),
    DevicePeak("L40S", 864.0, 91.6, 183.0, 362.0, "NVIDIA L40S datasheet"),
    DevicePeak("L4", 300.0, 30.3, 60.0, 121.0, "NVIDIA L4 datasheet"),
    DevicePeak("A10G", 600.0),
    DevicePeak("RTX 4090", 1008.0),
    DevicePeak("V100", 900.0),
    DevicePeak("T4", 320.0),
)


def device_peak(device_name: str | None) -> DevicePeak | None:
    """The peaks of the device called ``device_name``; None: not in the table."""
    for p in PEAKS:
        if device_name and p.key in device_name:
            return p
    return None
