"""The tensor clock: NVIDIA's H100 tensor peaks imply 1830 MHz (SXM5) and about 1620 MHz
(PCIe), below the SM clock the other rates run at, so a tensor-bound kernel is predicted at
the vendor's peak, not 8 % above it (whitepaper Table 3: 989.4 TFLOPS FP16 with FP32
accumulate, 66.9 TFLOPS FP64 tensor on the H100 SXM5)."""
from pathlib import Path

import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.throughput import tensor_cycles
from gpumodeler.db.catalog import Catalog

SHIPPED = Path(__file__).resolve().parents[2] / "devices.db"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    with Catalog(user_db=tmp_path_factory.mktemp("u") / "user.db", shipped_db=SHIPPED) as c:
        yield c


def peak_flops(gpu: GPUSpec, cls: str) -> float:
    """Whole-GPU FLOP/s of a kernel made only of tensor work of class ``cls``."""
    macs = 1.0e6
    return 2 * macs * gpu.sms * gpu.sm_clock_hz / tensor_cycles(gpu, {cls: macs})


@pytest.mark.parametrize("name, cls, tflops", [
    ("H100 SXM5 80 GB", "fp16_fp32acc", 989.4), ("H100 SXM5 80 GB", "bf16", 989.4),
    ("H100 SXM5 80 GB", "tf32", 494.7), ("H100 SXM5 80 GB", "fp8", 1978.9),
    ("H100 SXM5 80 GB", "fp64", 66.9),          # FP64 tensor peak: the 1980 MHz SM clock
    ("H100 PCIe 80 GB", "fp16_fp32acc", 756.0),
    # H200 data sheet, H200 SXM: FP16 and BF16 Tensor Core 1,979, FP8 3,958 TFLOPS with
    # sparsity (half that dense), FP64 Tensor Core 67 TFLOPS
    ("H200 SXM 141 GB", "fp16_fp32acc", 1979 / 2), ("H200 SXM 141 GB", "bf16", 1979 / 2),
    ("H200 SXM 141 GB", "fp8", 3958 / 2), ("H200 SXM 141 GB", "fp64", 66.9),
])
def test_tensor_bound_rate_is_the_vendors_peak(catalog, name, cls, tflops):
    gpu = catalog.get(name).to_gpu_spec()
    assert peak_flops(gpu, cls) == pytest.approx(tflops * 1e12, rel=2e-3)


def test_without_a_tensor_clock_the_sm_clock_is_used():
    gpu = GPUSpec("x", sms=10, sm_clock_hz=1.5e9, tensor_fp16_macs_per_cycle_per_sm=1024)
    assert tensor_cycles(gpu, {"fp16": 2048}) == 2.0
    slow = GPUSpec("x", sms=10, sm_clock_hz=1.5e9, tensor_fp16_macs_per_cycle_per_sm=1024,
                   tensor_clock_hz=1.0e9)
    assert tensor_cycles(slow, {"fp16": 2048}) == pytest.approx(3.0)   # 2 tensor clocks = 3 SM clocks
