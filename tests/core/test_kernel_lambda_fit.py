"""λ per (GPU, kernel) with leave-one-out over sizes and the plausibility warning
(core/transfers/lambda_fit.py)."""
import numpy as np
import pytest

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.transfers.lambda_fit import fit_kernel_lambda_loo, lambda_warning


def test_exact_lambda_has_no_leave_one_out_error():
    est = np.array([1e-4, 2e-4, 4e-4, 8e-4])
    fit = fit_kernel_lambda_loo(est, est / 0.7, sizes=[1, 2, 4, 8])
    assert fit.lam == pytest.approx(0.7)
    assert fit.loo_mape == pytest.approx(0, abs=1e-9) and fit.warning is None


def test_leave_one_out_predicts_each_size_from_the_others():
    est = np.array([1.0, 1.0, 2.0, 4.0])
    meas = np.array([1.0, 1.2, 2.0, 4.0])            # size 1 measured twice
    fit = fit_kernel_lambda_loo(est, meas, sizes=[1, 1, 2, 4])
    # size 1 left out: λ from sizes 2 and 4 is exactly 1, so its copies are off by 0 and 1/6
    assert fit.loo_relative_errors[:2] == pytest.approx([0.0, (1.0 - 1.2) / 1.2])
    assert fit.loo_median_ape == pytest.approx(np.median(np.abs(fit.loo_relative_errors)) * 100)


def test_one_size_has_no_leave_one_out():
    fit = fit_kernel_lambda_loo([1e-3, 1e-3], [1.4e-3, 1.5e-3], sizes=[5, 5])
    assert fit.loo_mape is None and "one size" in fit.notes[0]


def test_warnings_outside_the_band_name_the_usual_causes():
    assert lambda_warning(0.3) is None and lambda_warning(1.5) is None
    low = lambda_warning(0.2)
    assert "launch overhead" in low and "under-filled" in low and "5× slower" in low
    assert "caches" in lambda_warning(1.9)
    sizes = np.array([1e3, 1e4, 1e5, 1e6])
    trend = lambda_warning(0.2, np.array([-0.5, -0.2, 0.0, 0.1]), sizes)
    assert "per-launch cost" in trend


def test_sizes_must_match():
    with pytest.raises(InvalidParameter, match="one size per measurement"):
        fit_kernel_lambda_loo([1, 2], [1, 2], sizes=[1])
