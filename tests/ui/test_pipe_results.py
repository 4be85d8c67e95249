"""The launch panel's results name each issue pipe of a Volta-or-later GPU (docs/pipes.md)."""
from types import SimpleNamespace

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.models.gajger import KernelInputs, predict
from gpumodeler.ui.launch_panel.results import PredictionView

TURING = GPUSpec("RTX 2080 Ti", compute_capability="7.5", sms=68, sm_clock_hz=1545e6,
                 cuda_cores_per_sm=64, int32_units_per_sm=64, int32_fp32_shared_lanes_per_sm=0,
                 fp16_results_per_cycle_per_sm=128, schedulers_per_sm=4,
                 dispatch_per_scheduler=1, memory_bandwidth_bytes_per_s=616e9)
GA10X = GPUSpec("RTX 3090", compute_capability="8.6", sms=82, sm_clock_hz=1695e6,
                cuda_cores_per_sm=128, int32_units_per_sm=64, int32_fp32_shared_lanes_per_sm=64,
                fp16_results_per_cycle_per_sm=128, schedulers_per_sm=4,
                dispatch_per_scheduler=1, memory_bandwidth_bytes_per_s=936e9)


def _result(gpu, mix):
    inputs = KernelInputs(latency_bound=100, issued_instructions=sum(mix.values()),
                          cuda_core_instructions=sum(mix.values()), pipe_instructions=mix)
    prediction = predict(gpu, inputs, grid_size=1000, block_size=256, occupancy=8)
    return SimpleNamespace(prediction=prediction, latency_bound_formula="100",
                           latency_bound_cycles=100, occupancy_warps_per_sm=8,
                           occupancy_detail=None, grid_size=1000, link=None)


def test_results_name_the_pipes(qtbot):
    view = PredictionView()
    qtbot.addWidget(view)
    view.show_result(_result(TURING, {"fp32": 8, "int32": 24, "fp16": 4}))
    text = view.labels["cycles"].text()
    assert "FP32 pipe 4" in text and "<b>INT32 pipe 12</b>" in text and "FP16 pipe 2" in text
    assert "binding: INT32 pipe" in text and "CUDA cores" not in text
    view.show_result(_result(GA10X, {"fp32": 24, "int32": 8}))
    text = view.labels["cycles"].text()
    assert "FP32+INT32 lanes 8" in text and "INT32 pipe 4" in text


def test_results_name_the_l2_row(qtbot):
    """L2 hits (reuse) are their own row of the worksheet, named in the results."""
    view = PredictionView()
    qtbot.addWidget(view)
    gpu = TURING.with_overrides(l2_bandwidth_bytes_per_s=1.5e12)
    inputs = KernelInputs(latency_bound=100, issued_instructions=8, gmem_bytes=128,
                          l2_bytes=1024)
    prediction = predict(gpu, inputs, grid_size=1000, block_size=256, occupancy=8)
    view.show_result(SimpleNamespace(prediction=prediction, latency_bound_formula="100",
                                     latency_bound_cycles=100, occupancy_warps_per_sm=8,
                                     occupancy_detail=None, grid_size=1000, link=None))
    l2 = 1024 / (1.5e12 / (68 * 1545e6))
    assert f"L2 {l2:.4g}" in view.labels["cycles"].text()
