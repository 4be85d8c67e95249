"""Kernel parameters by name (core.kernel.sass.parameters): a .cu's parameter names placed
at their constant-bank offsets, so the variable a grid-stride loop's length gets is ``n``."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass.importer import import_from_listing, read_listing
from gpumodeler.core.kernel.sass.parameters import (named_parameter, parameter_names,
                                                    signature_types, source_parameters,
                                                    type_layout)

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "resources" / "kernels" / "src" / "grid_stride.cu"
SASS = ROOT / "resources" / "kernels" / "sass"


@pytest.mark.parametrize("text, layout", [
    ("float *", (8, 8)), ("const double *__restrict__", (8, 8)), ("double const*", (8, 8)),
    ("int", (4, 4)), ("unsigned", (4, 4)), ("unsigned int", (4, 4)), ("float", (4, 4)),
    ("size_t", (8, 8)), ("unsigned long", (8, 8)), ("long long", (8, 8)), ("double", (8, 8)),
    ("const int", (4, 4)), ("char", (1, 1)), ("__half", (2, 2)), ("short", (2, 2)),
    ("float4", (16, 16)), ("float2", (8, 8)), ("float3", (12, 4)), ("double2", (16, 16)),
    ("uint4", (16, 16)), ("int64_t", (8, 8)), ("std::size_t", (8, 8)),
])
def test_a_parameter_type_has_its_size_and_alignment(text, layout):
    assert type_layout(text) == layout


@pytest.mark.parametrize("text", ["MyStruct", "T", "Params<float>"])
def test_another_type_is_not_placed(text):
    assert type_layout(text) is None


SOURCE = """
// a comment with __global__ void fake(int x) in it
template <typename T>
__global__ void __launch_bounds__(256) scale(T *y, const T *x, T a, int n) { }
/* __global__ void axpy(float *q) { } */
__global__ void axpy(float *y, const float * __restrict__ x, float a,
                     float4 v, size_t n)
{
    y[0] = a;
}
__global__ void twice(int, float *);
__global__ void twice(int n, float *y) { }
__global__ void dup(int a) { }
__global__ void dup(float b) { }
__global__ void arrays(float y[], int n[4], int m) { }
__global__ void unnamed(float *, int);
template __global__ void scale<float>(float *, const float *, float, int);
"""


def test_the_source_gives_each_parameter_its_type_and_name():
    assert source_parameters(SOURCE, "axpy") == [
        ("float *", "y"), ("const float * __restrict__", "x"), ("float", "a"),
        ("float4", "v"), ("size_t", "n")]
    assert source_parameters(SOURCE, "scale") == [("T *", "y"), ("const T *", "x"),
                                                  ("T", "a"), ("int", "n")]
    assert source_parameters(SOURCE, "arrays") == [("float*", "y"), ("int*", "n"),
                                                   ("int", "m")]
    # a declaration beside the definition: the definition's names
    assert source_parameters(SOURCE, "twice") == [("int", "n"), ("float *", "y")]
    assert source_parameters(SOURCE, "dup") is None  # two definitions: which one is unknown
    assert source_parameters(SOURCE, "fake") is None  # only in a comment
    # a declaration alone, its parameters unnamed: no names
    assert source_parameters(SOURCE, "unnamed") == [("float *", ""), ("int", "")]
    assert parameter_names(SOURCE, "unnamed", None, 0x160) == {}


def test_the_parameters_are_laid_out_as_a_struct_from_the_first_offset():
    # y 0, x 8, a 16, v aligned to 32, n 48
    assert parameter_names(SOURCE, "axpy", None, 0x160) == {
        0x160: "y", 0x168: "x", 0x170: "a", 0x180: "v", 0x190: "n"}
    # the demangled signature's types where the listing has it: scale<float>'s T is float
    demangled = "void scale<float>(float*, float const*, float, int)"
    assert signature_types(demangled) == ["float*", "float const*", "float", "int"]
    assert parameter_names(SOURCE, "scale", demangled, 0x210) == {
        0x210: "y", 0x218: "x", 0x220: "a", 0x224: "n"}
    # without it the template parameter T ends the layout
    assert parameter_names(SOURCE, "scale", None, 0x210) == {0x210: "y", 0x218: "x"}
    # a signature of another length than the source's: not this function
    assert parameter_names(SOURCE, "axpy", "axpy(float*, int)", 0x160) == {}
    assert parameter_names(SOURCE, "axpy", None, None) == {}


def test_a_name_that_is_taken_or_reserved_keeps_the_offset():
    names = {0x170: "n", 0x178: "N", 0x180: "loop1", 0x188: "grid_x", 0x190: "max"}
    assert named_parameter(0x170, names, {"loop1": 1}) == "n"
    assert named_parameter(0x170, names, {"n": 1}) == "param_0x170"
    for offset in (0x178, 0x180, 0x188, 0x190, 0x198):
        assert named_parameter(offset, names, {}) == f"param_{offset:#x}"


@pytest.mark.parametrize("arch, function, offset", [
    ("sm_52", "stride_int", 0x150), ("sm_86", "stride_size", 0x180),
    ("sm_90", "stride_int", 0x220), ("sm_120", "stride_size", 0x3a0)])
def test_an_imported_cu_names_the_grid_stride_length_after_its_parameter(arch, function,
                                                                         offset):
    """The listing of grid_stride.cu with its source (what kernel import of the .cu reads):
    the variable is the source's n; from the listing alone it is the offset's name."""
    listing = read_listing(SASS / f"grid_stride.{arch}.sass")
    graph, report = import_from_listing(listing, function)
    assert f"param_{offset:#x}" in graph.variables
    listing.source = SRC.read_text()
    graph, report = import_from_listing(listing, function)
    assert graph.block_trips == {"loop1": "max(1, ceil(n / 32) * 32 / (block_x * grid_x))"}
    assert graph.variables["n"] == 0 and not any(v.startswith("param_") for v in graph.variables)
    assert f"n the kernel parameter at c[0x0][{offset:#x}]" in report.summary()
