"""Registers and shared memory the compiler allocated, read from a listing and kept in the
kernel format (``registers_per_thread``, ``static_shared_bytes``)."""
from pathlib import Path

import pytest

from gpumodeler.core.errors import FormatError
from gpumodeler.core.kernel.graph import from_dict, to_dict
from gpumodeler.core.kernel.sass.importer import import_from_listing, kernel_shared_bytes
from gpumodeler.core.kernel.sass.listing import parse_listing

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def _res(name, regs, shared):
    return (f"\nResource usage:\n Common:\n  GLOBAL:0\n Function {name}:\n  REG:{regs} STACK:0 "
            f"SHARED:{shared} LOCAL:0 CONSTANT[0]:556 TEXTURE:0 SURFACE:0 SAMPLER:0\n")


def test_res_usage_before_or_after_the_code():
    code = (SASS / "matmul_tiled.sm_80.sass").read_text()
    name = "_Z12matmul_tiledPKfS0_Pfi"
    for text in (_res(name, 40, 2048) + code, code + _res(name, 40, 2048)):
        (func,) = parse_listing(text).functions
        assert (func.registers, func.shared_bytes) == (40, 2048)
        graph, _ = import_from_listing(parse_listing(text))
        assert (graph.registers_per_thread, graph.static_shared_bytes) == (40, 2048)
    # another function's line is not this one's
    (func,) = parse_listing(_res("_Z5otherv", 99, 1) + code).functions
    assert func.registers is None and func.shared_bytes is None


def test_nvdisasm_section_info_registers():
    (func,) = parse_listing((SASS / "reduce.sm_86.nvdisasm.sass").read_text()).functions
    assert func.registers == 10 and func.shared_bytes is None


@pytest.mark.parametrize("reported,arch,kernel", [
    (3072, "sm_90", 2048), (3072, "sm_120", 2048), (0, "sm_90", 0), (2048, "sm_80", 2048),
    (2048, "sm_52", 2048), (None, "sm_90", None)])
def test_reported_shared_memory_without_the_system_reservation(reported, arch, kernel):
    assert kernel_shared_bytes(reported, arch) == kernel


def test_kernel_format_round_trip_and_old_files():
    text = _res("_Z12matmul_tiledPKfS0_Pfi", 32, 3072) + (SASS / "matmul_tiled.sm_90.sass").read_text()
    graph, _ = import_from_listing(parse_listing(text))
    data = to_dict(graph)
    assert data["registers_per_thread"] == 32 and data["static_shared_bytes"] == 2048
    back = from_dict(data)
    assert back == graph and back.registers_per_thread == 32 and back.static_shared_bytes == 2048
    assert graph.copy().registers_per_thread == 32
    old = {k: v for k, v in data.items() if k not in ("registers_per_thread", "static_shared_bytes")}
    g_old = from_dict(old)
    assert g_old.registers_per_thread is None and g_old.static_shared_bytes is None
    assert "registers_per_thread" not in to_dict(g_old)


@pytest.mark.parametrize("key,value", [("registers_per_thread", 0), ("registers_per_thread", 256),
                                       ("registers_per_thread", 32.5), ("registers_per_thread", True),
                                       ("static_shared_bytes", -1), ("static_shared_bytes", "2k")])
def test_kernel_format_refuses_bad_resources(key, value):
    data = to_dict(import_from_listing(parse_listing((SASS / "vecadd.sm_80.sass").read_text()))[0])
    data[key] = value
    with pytest.raises(FormatError, match=key):
        from_dict(data)
