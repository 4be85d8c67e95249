"""A launch's kernel terms (core.project.LaunchTerms): checked, kept as what differs from
the defaults, and used by evaluate_launch and the sweep when no terms are passed."""
import dataclasses
import math

import numpy as np
import pytest

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.launch_sweep import make_snapshot, run_sweep
from gpumodeler.core.models.result import KernelTerms
from gpumodeler.core.pipeline import evaluate_launch
from gpumodeler.core.project import TERM_FIELDS, LaunchTerms
from gpumodeler.service.lookups import catalog_lookups

OVERHEAD = 3e-6


def test_the_defaults_are_predicts_and_nothing_is_saved_for_them():
    assert LaunchTerms().kernel_terms() == KernelTerms()
    assert LaunchTerms().saved() == {} and LaunchTerms.from_saved({}) == LaunchTerms()
    terms = LaunchTerms(underfill=False, launch_overhead_s=OVERHEAD)
    assert terms.saved() == {"underfill": False, "launch_overhead_s": OVERHEAD}
    assert LaunchTerms.from_saved(terms.saved()) == terms
    assert set(TERM_FIELDS) == {f.name for f in dataclasses.fields(LaunchTerms)}


@pytest.mark.parametrize("saved, message", [
    ({"tail": 1}, "kernel term tail is a whole number"),
    ({"launch_overhead_s": -1e-6}, "launch_overhead_s is -1e-06"),
    ({"launch_overhead_s": math.inf}, "not finite"),
    ({"l2_bandwidth_bytes_per_s": 0.0}, "> 0"),
    ({"l2_bandwidth_bytes_per_s": "3 TB/s"}, "is text"),
    ({"working_set_bytes": 1}, "unknown kernel term(s) working_set_bytes; valid: underfill"),
])
def test_bad_terms_are_refused_with_the_field_and_what_is_valid(saved, message):
    with pytest.raises(InvalidParameter) as caught:
        LaunchTerms.from_saved(saved, "launch l1")
    assert message in str(caught.value) and str(caught.value).startswith("launch l1")


@pytest.fixture
def gpu_lookup(catalog):
    return catalog_lookups(catalog)["gpu_lookup"]


@pytest.fixture
def link_lookup(catalog):
    return catalog_lookups(catalog)["link_lookup"]


def _with_terms(project, **terms):
    for lid, launch in list(project.launches.items()):
        project.launches[lid] = dataclasses.replace(launch, terms=LaunchTerms(**terms))
    return project


def test_evaluate_launch_takes_the_launchs_terms_unless_terms_are_passed(example_project, gpu_lookup,
                                                                         link_lookup):
    plain = example_project()
    base = evaluate_launch(plain, "launch1", gpu_lookup, link_lookup).prediction.kernel.time_s
    project = _with_terms(example_project(), launch_overhead_s=OVERHEAD, tail=True)
    own = evaluate_launch(project, "launch1", gpu_lookup, link_lookup)
    with_flags = evaluate_launch(plain, "launch1", lambda n: gpu_lookup(n).with_overrides(
        launch_overhead_s=OVERHEAD), link_lookup, terms=KernelTerms(tail=True))
    assert own.prediction.kernel.time_s == with_flags.prediction.kernel.time_s
    assert own.prediction.kernel.time_s >= base + OVERHEAD * (1 - 1e-12)
    assert own.gpu.launch_overhead_s == OVERHEAD
    # terms passed replace the switches; the launch's values still stand for the GPU's
    off = evaluate_launch(project, "launch1", gpu_lookup, link_lookup,
                          terms=KernelTerms(launch_overhead=False))
    assert off.prediction.kernel.time_s == pytest.approx(base, rel=1e-12)


def test_the_sweep_takes_the_launchs_terms_on_every_gpu_it_compares(example_project, gpu_lookup,
                                                                    link_lookup):
    plain, project = example_project(), _with_terms(example_project(), launch_overhead_s=OVERHEAD)
    values = np.array([64.0, 128.0])
    before = run_sweep(make_snapshot(plain, "launch1", gpu_lookup, link_lookup, "a", values))
    after = run_sweep(make_snapshot(project, "launch1", gpu_lookup, link_lookup, "a", values))
    assert after.curves[0].kernel_time_s == pytest.approx(before.curves[0].kernel_time_s + OVERHEAD,
                                                          rel=1e-9)
    devices = ("GeForce GTX 970", "GeForce GTX 980")
    snap = make_snapshot(project, "launch1", gpu_lookup, link_lookup, "gpu", (), devices)
    assert [gpu.launch_overhead_s for _name, gpu in snap.gpus] == [OVERHEAD, OVERHEAD]
