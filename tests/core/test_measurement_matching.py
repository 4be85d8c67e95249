"""Names a measurement file records against a launch's GPU and kernel, normalised."""
import pytest

from gpumodeler.core.measurements.matching import gpu_key, kernel_key, match_launch


@pytest.mark.parametrize("name, key", [
    ("GeForce GTX 970 (0)", "geforce gtx 970"),
    ("NVIDIA  GeForce RTX 2080 Ti", "geforce rtx 2080 ti"),
    ("Tesla K40c", "tesla k40c"),
    ("", ""),
])
def test_gpu_key(name, key):
    assert gpu_key(name) == key


@pytest.mark.parametrize("name, key", [
    ("saxpy2(float*, float*, float)", "saxpy2"),
    ("void saxpy2(int, float, float const *, float*, int)", "saxpy2"),
    ("void ns::transpose<float, 32>(float*, float const*)", "transpose"),
    ("VecAdd", "vecadd"),
])
def test_kernel_key(name, key):
    assert kernel_key(name) == key


def test_a_k40_vecadd_is_not_the_gtx970_saxpy2():
    m = match_launch("Tesla K40c", "vectorAdd(float*)", "GeForce GTX 970", "saxpy2",
                     ("GTX 970",))
    assert not m.gpu_matches and not m.kernel_matches and not m.matches
    text = m.describe()
    assert "'Tesla K40c'" in text and "'GeForce GTX 970'" in text
    assert "'vectorAdd(float*)'" in text and "'saxpy2'" in text


def test_an_alias_matches_and_a_missing_name_does_not():
    assert match_launch("Tesla K40c (1)", "k", "Tesla K40", "k", ("K40", "Tesla K40c")).matches
    assert not match_launch("Tesla K40c", "k", "Tesla K40", "k").gpu_matches
    m = match_launch("", "k", "Tesla K40", "k")
    assert not m.gpu_matches and "not given" in m.describe()
    assert not match_launch("Tesla K40", "", "Tesla K40", "").kernel_matches
