"""Invariants of the kernel-time model and calibration (property tests)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpumodeler.core.transfers.calibration import fit_kernel_lambda, fit_link
from gpumodeler.core.device import GPUSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.models.gajger import KernelInputs, predict
from gpumodeler.core.models.result import KernelTerms

GPU = GPUSpec("test", sms=16, sm_clock_hz=1.2e9, cuda_cores_per_sm=128, schedulers_per_sm=4,
              gmem_bytes_per_cycle_per_sm=10.0)
pos = st.floats(1e-3, 1e4, allow_nan=False)


@settings(max_examples=100, deadline=None)
@given(lat=st.floats(10, 1e5), issued=st.floats(1, 1e4), n1=st.floats(0.5, 64), n2=st.floats(0.5, 64))
def test_more_warps_never_lower_throughput(lat, issued, n1, n2):
    inputs = KernelInputs(latency_bound=lat, issued_instructions=issued)
    lo, hi = sorted((n1, n2))
    p_lo = predict(GPU, inputs, grid_size=100, block_size=256, occupancy=lo)
    p_hi = predict(GPU, inputs, grid_size=100, block_size=256, occupancy=hi)
    assert p_hi.kernel.warp_throughput >= p_lo.kernel.warp_throughput
    assert p_hi.kernel.time_s <= p_lo.kernel.time_s


# One wave on GPU: 16 SMs × (64 warps / 4 warps per block) = 256 blocks of 128 threads.
ONE_WAVE = 16 * (64 // 4)


@settings(max_examples=100, deadline=None)
@given(grid=st.integers(ONE_WAVE, 10**6), k=st.integers(2, 50), issued=st.floats(1, 1e3),
       terms=st.sampled_from([None, KernelTerms()]))
def test_time_is_linear_in_grid_when_throughput_bound(grid, k, issued, terms):
    """From one wave up, with the default kernel terms (and plain eq. 4.1), time ∝ grid."""
    inputs = KernelInputs(latency_bound=10.0, issued_instructions=issued)
    p1 = predict(GPU, inputs, grid_size=grid, block_size=128, occupancy=64, terms=terms)
    pk = predict(GPU, inputs, grid_size=grid * k, block_size=128, occupancy=64, terms=terms)
    assert p1.kernel.mode == "throughput"
    assert pk.kernel.time_s == pytest.approx(k * p1.kernel.time_s, rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(grid=st.integers(1, ONE_WAVE - 1), lat=st.floats(1, 1e5), issued=st.floats(1, 1e3))
def test_an_under_filled_grid_is_one_wave_on_the_busiest_sm(grid, lat, issued):
    """Below one wave the default terms give one wave of ceil(grid / SMs) blocks on the
    busiest SM, max(L, warps / TB) cycles (Volkov §3.5): never faster than eq. 4.1, the same
    for every grid that puts as many blocks on the busiest SM, never more than one full wave."""
    inputs = KernelInputs(latency_bound=lat, issued_instructions=issued)
    p = predict(GPU, inputs, grid_size=grid, block_size=128, occupancy=64, terms=KernelTerms())
    plain = predict(GPU, inputs, grid_size=grid, block_size=128, occupancy=64)
    per_sm = -(-grid // 16)
    tb = 4 / issued  # 4 schedulers issue one instruction each per cycle
    assert p.kernel.time_cycles == pytest.approx(max(lat, per_sm * 4 / tb), rel=1e-12)
    assert p.kernel.time_s >= plain.kernel.time_s * (1 - 1e-12)
    same_sm = predict(GPU, inputs, grid_size=(per_sm - 1) * 16 + 1, block_size=128, occupancy=64,
                      terms=KernelTerms())
    assert same_sm.kernel.time_s == p.kernel.time_s
    wave = predict(GPU, inputs, grid_size=ONE_WAVE, block_size=128, occupancy=64, terms=KernelTerms())
    assert p.kernel.time_s <= wave.kernel.time_s * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(lam=st.floats(0.05, 5), est=st.lists(st.floats(1e-6, 10), min_size=1, max_size=20))
def test_lambda_calibration_recovers_lambda(lam, est):
    measured = np.array(est) / lam
    fit = fit_kernel_lambda(est, measured)
    assert fit.lam == pytest.approx(lam, rel=1e-9)
    assert fit.mape_percent == pytest.approx(0, abs=1e-7)


def test_lambda_least_squares_with_noise_and_eq_4_4():
    fit = fit_kernel_lambda([1.0], [2.0])
    assert fit.lam == 0.5  # eq. 4.4: t_est / t_meas
    fit = fit_kernel_lambda([1.0, 2.0], [1.1, 1.9])
    assert 0.95 < fit.lam < 1.05 and fit.mape_percent > 0
    with pytest.raises(InvalidParameter, match="as many"):
        fit_kernel_lambda([1, 2], [1])


@settings(max_examples=60, deadline=None)
@given(ts=st.floats(1e-6, 1e-3), bw=st.floats(1e8, 1e11))
def test_link_fit_recovers_startup_and_bandwidth(ts, bw):
    sizes = np.array([4, 1024, 1 << 20, 1 << 26, 1 << 31], dtype=float)
    fit = fit_link(sizes, ts + sizes / bw, nominal_bandwidth_bytes_per_s=15.8e9)
    assert fit.startup_s == pytest.approx(ts, rel=1e-6)
    assert fit.effective_bandwidth_bytes_per_s == pytest.approx(bw, rel=1e-6)
    assert fit.lam == pytest.approx(bw / 15.8e9, rel=1e-6)


def test_gajger_table_5_1_startups_fit():
    """Small transfers of Table 5.1 (4–512 B) are startup-dominated: fitting them with two
    large ones recovers Gajger's 3.9687 µs within the scatter of the measurements."""
    sizes = [4, 8, 16, 32, 64, 128, 256, 512, 1.6e9, 0.8e9]
    htod_ms = [0.0042464, 0.0038608, 0.0039446, 0.0038378, 0.0039648, 0.0039302, 0.0039766,
               0.0039882, 3.96868e-3 + 1.6e9 / (15.8e9 * 0.689) * 1e3, 3.96868e-3 + 0.8e9 / (15.8e9 * 0.689) * 1e3]
    fit = fit_link(sizes, np.array(htod_ms) * 1e-3, nominal_bandwidth_bytes_per_s=15.8e9)
    assert fit.startup_s == pytest.approx(3.9687e-6, rel=0.03)
    assert fit.lam == pytest.approx(0.689, rel=1e-3)


def test_vectorised_sweep_matches_scalar_calls():
    occ = np.array([1, 8, 32, 64.0])
    lat = np.array([[500.0], [4000.0]])
    inputs = KernelInputs(latency_bound=lat, issued_instructions=538, cuda_core_instructions=535,
                          gmem_bytes=384)
    many = predict(GPU, inputs, grid_size=1000, block_size=256, occupancy=occ)
    for i in range(2):
        for j in range(4):
            one = predict(GPU, KernelInputs(latency_bound=lat[i, 0], issued_instructions=538,
                                            cuda_core_instructions=535, gmem_bytes=384),
                          grid_size=1000, block_size=256, occupancy=occ[j])
            assert many.kernel.time_s[i, j] == one.kernel.time_s
            assert many.kernel.mode[i, j] == one.kernel.mode
            assert many.kernel.limiting_resource[i, j] == one.kernel.limiting_resource


@pytest.mark.parametrize("kwargs, message", [
    (dict(occupancy=0), "occupancy"), (dict(occupancy=-1), "occupancy"),
    (dict(grid_size=0), "grid size"), (dict(grid_size=2.5), "grid size"),
    (dict(block_size=(1, 2, 3, 4)), "1 to 3 dimensions"), (dict(lam=0), "λ"),
])
def test_invalid_launch_inputs_are_clear_errors(kwargs, message):
    base = dict(grid_size=10, block_size=256, occupancy=32, lam=1.0)
    base.update(kwargs)
    with pytest.raises(InvalidParameter, match=message):
        predict(GPU, KernelInputs(latency_bound=100, issued_instructions=10), **base)


def test_unknown_device_parameter_is_named():
    gpu = GPUSpec("half-known", sms=4, sm_clock_hz=1e9, schedulers_per_sm=4)
    with pytest.raises(InvalidParameter, match="cuda_cores_per_sm is unknown"):
        predict(gpu, KernelInputs(latency_bound=100, issued_instructions=10, cuda_core_instructions=5),
                grid_size=1, block_size=32, occupancy=1)
