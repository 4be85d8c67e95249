"""The hybrid (docs/learning.md): the default model times a learned correction, shrunk
towards 1: with no data it is the analytical model, and on data equal to the analytical
model times a per-GPU factor it recovers the factor."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gpumodeler.core.learn.evaluate import evaluate
from gpumodeler.core.learn.model import HYBRID_SHRINKAGE, fit
from learn_rows import gpus, rows


def analytical(row) -> float:
    return 1e-9 * row.threads * (1 + math.log2(row.threads) / 20)


FACTORS = {"GPU 0": 0.5, "GPU 1": 1.7, "GPU 2": 3.0}
MORE = {**FACTORS, "GPU 3": 1.2}


def per_gpu(row) -> float:
    return analytical(row) * MORE[row.gpu.name]


def test_with_no_data_the_hybrid_is_the_analytical_model():
    model = fit([], "hybrid")
    data = rows(gpus(3), analytical=analytical, time=per_gpu)
    assert model.predict(data) == pytest.approx([r.analytical["gajger"] for r in data], rel=1e-12)
    assert model.training["rows"] == 0


def test_the_hybrid_recovers_a_per_gpu_factor():
    data = rows(gpus(3), analytical=analytical, time=per_gpu)
    model = fit(data, "hybrid")
    ratio = model.predict(data) / np.array([r.analytical["gajger"] for r in data])
    for name, factor in FACTORS.items():
        mine = ratio[[r.gpu.name == name for r in data]]
        # 24 rows per GPU: its offset is shrunk by n / (n + k) = 24/25 in log2
        assert mine == pytest.approx(factor, rel=0.05), name
    # it learned the factor, not each row: the analytical model alone is far off
    assert not np.allclose(ratio, 1.0, rtol=0.3)


def test_one_row_moves_the_hybrid_only_part_of_the_way():
    """Shrinkage: one row whose time is twice the model's moves the GPU's correction to
    2^(1 · 1/(1 + k)) with k = 1, not all the way to 2 (the kernel and common terms are shrunk too)."""
    data = rows(gpus(1), kernels=("a",), sizes=[14], analytical=analytical,
                time=lambda r: 2 * analytical(r))
    model = fit(data, "hybrid")
    ratio = float(model.predict(data)[0] / data[0].analytical["gajger"])
    assert 1.0 < ratio < 2.0
    assert HYBRID_SHRINKAGE == 1.0


def test_rows_without_the_default_model_are_left_out():
    data = rows(gpus(2), analytical=analytical, time=per_gpu)
    bare = rows(gpus(2), seed=9, time=per_gpu)  # no analytical prediction
    model = fit(data + bare, "hybrid")
    assert model.training["rows"] == len(data)
    assert np.isnan(model.predict(bare)).all()


def test_evaluate_has_one_entry_per_group_and_method():
    data = rows(gpus(4), analytical=analytical, time=per_gpu)
    result = evaluate(data, ["hybrid", "lr"], "gpu", models=["gajger"])
    assert [s["method"] for s in result["summary"]] == ["hybrid", "lr", "gajger"]
    assert len(result["groups"]) == 4 * 3
    assert {g["held_out"] for g in result["groups"]} == {f"GPU {i}" for i in range(4)}
    assert all(g["n"] == len(data) // 4 for g in result["groups"])
    gajger = next(s for s in result["summary"] if s["method"] == "gajger")
    apes = [abs(analytical(r) - r.time_s) / r.time_s * 100 for r in data]
    assert gajger["mape_percent"] == pytest.approx(np.mean(apes))
    assert gajger["median_ape_percent"] == pytest.approx(np.median(apes))


def test_an_unseen_gpu_gets_what_its_architecture_showed_for_the_kernel():
    """A residual that depends on kernel and architecture (Kepler doubles kernel a, Maxwell
    halves it): leaving one GPU out, the hybrid predicts it from its architecture's other
    GPUs; the analytical model alone is off by the factor."""
    from dataclasses import replace
    specs = [replace(g, compute_capability="3.5" if i % 2 else "5.2") for i, g in enumerate(gpus(6))]
    factor = {("a", "3.5"): 2.0, ("a", "5.2"): 0.5, ("b", "3.5"): 0.7, ("b", "5.2"): 1.4}
    data = rows(specs, kernels=("a", "b"), analytical=analytical,
                time=lambda r: analytical(r) * factor[(r.kernel, r.gpu.compute_capability)])
    result = evaluate(data, ["hybrid"], "gpu", models=["gajger"])
    by = {s["method"]: s for s in result["summary"]}
    assert by["gajger"]["mape_percent"] > 30
    assert by["hybrid"]["mape_percent"] < 5
    assert fit(data, "hybrid").params["use_arch"] is True
