"""The load/store units (the worksheet's lsu row, Volta and later: W / LD/ST units per SM
cycles per global, local or shared warp instruction; docs/models.md, "The load/store units"),
the one mapping from warp counts to the worksheet, and the public set's matrix products
(resources/validation/kernels/nvbench/matmul.cu, its sm_86 listing)."""
from dataclasses import fields, replace
import inspect
from pathlib import Path

import pytest

from gpumodeler.core.device import GPUSpec
from gpumodeler.core.kernel.graph import from_dict
from gpumodeler.core.kernel.graph_items import launch_guard_values
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.warp_counts import COUNT_NAMES, count
from gpumodeler.core.models.gajger import WORKSHEET_COUNTS, KernelInputs, worksheet_counts
from gpumodeler.core.models.throughput import RESOURCES, lsu_cycles, throughput_bound

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "resources" / "validation" / "kernels" / "nvbench" / "matmul.sm_86.sass"

GA10X = GPUSpec("GA10x-like", sms=68, sm_clock_hz=1.71e9, warp_size=32, schedulers_per_sm=4,
                cuda_cores_per_sm=128, compute_capability="8.6", ldst_units_per_sm=16,
                smem_accesses_per_cycle_per_sm=1)


def graph_of(*instructions):
    """A graph of the given instructions (dicts) in a chain, then an exit."""
    ins = [dict({"id": f"n{k}"}, **i) for k, i in enumerate(instructions)]
    ins.append({"id": "x", "opcode": "EXIT"})
    edges = [{"from": a["id"], "to": b["id"], "kind": "dependency", "latency": 4}
             for a, b in zip(ins, ins[1:])]
    return from_dict({"format": "gpumodeler-kernel", "version": 1, "instructions": ins,
                      "edges": edges})


LDG = {"opcode": "LDG.E", "unit": "ldst", "space": "global", "is_load": True, "width_bytes": 4}
STG = {"opcode": "STG.E", "unit": "ldst", "space": "global", "width_bytes": 4}
LDS = {"opcode": "LDS", "unit": "ldst", "space": "shared", "is_load": True, "width_bytes": 4}
STL = {"opcode": "STL", "unit": "ldst", "space": "local", "width_bytes": 4}
LDC = {"opcode": "LDC", "unit": "ldst", "space": "constant", "is_load": True, "width_bytes": 4}


def test_global_local_and_shared_instructions_count_constant_loads_do_not():
    c = count(graph_of(LDG, STG, LDS, STL, LDC)).evaluate({})
    assert c["lsu_instructions"] == 4
    assert c["memory_instructions"] == 5


def test_a_strided_or_wide_access_is_still_one_instruction():
    c = count(graph_of(dict(LDG, stride=32.0), dict(LDS, width_bytes=16))).evaluate({})
    assert c["lsu_instructions"] == 2
    assert c["l1_wavefronts"] == 32           # the lines are the l1 row's business


def test_a_predicate_guard_scales_it_like_the_data_it_moves():
    g = graph_of(LDG, LDS)
    data = {"format": "gpumodeler-kernel", "version": 1,
            "variables": {"guard1": 1},
            "instructions": [dict({"id": "a"}, **LDG), dict({"id": "b"}, **LDS),
                             {"id": "x", "opcode": "EXIT"}],
            "edges": [{"from": "a", "to": "b", "kind": "dependency", "latency": 4},
                      {"from": "b", "to": "x", "kind": "dependency", "latency": 4}],
            "guards": [{"id": "g1", "kind": "predicate", "fraction": "guard1", "members": ["a"]}]}
    g = from_dict(data)
    assert count(g).evaluate({"guard1": 0.25})["lsu_instructions"] == 1.25
    assert count(g).evaluate({"guard1": 0.25})["issued_instructions"] == 3   # still issued


def test_the_row_is_warp_size_times_instructions_over_the_units():
    assert lsu_cycles(GA10X, 32, 36.0) == 72.0
    volta = GA10X.with_overrides(compute_capability="7.0", ldst_units_per_sm=32)
    assert lsu_cycles(volta, 32, 36.0) == 36.0
    tb = throughput_bound(GA10X, issued_instructions=40.0, smem_bank_cycles=34.0,
                          lsu_instructions=36.0)
    assert tb.cycles_per_warp["lsu"] == 72.0 and tb.binding == "lsu"


@pytest.mark.parametrize("gpu", [
    GA10X.with_overrides(compute_capability="5.2"),     # before Volta: issue and shared rows
    replace(GA10X, ldst_units_per_sm=None),             # unknown: not bounded, as before
])
def test_the_row_reads_zero_before_volta_and_where_the_units_are_unknown(gpu):
    tb = throughput_bound(gpu, issued_instructions=4.0, lsu_instructions=36.0)
    assert tb.cycles_per_warp["lsu"] == 0.0 and tb.binding == "issue"


def test_a_zero_or_negative_unit_count_is_refused_by_name():
    from gpumodeler.core.errors import InvalidParameter
    with pytest.raises(InvalidParameter, match="ldst_units_per_sm"):
        throughput_bound(replace(GA10X, ldst_units_per_sm=0), lsu_instructions=1.0)


def test_one_mapping_from_counts_to_the_worksheet():
    """Every worksheet argument is a KernelInputs field and back, and the counts named the
    same are warp counts: a new row's count is added in one place."""
    kwargs = set(inspect.signature(throughput_bound).parameters) - {"gpu"}
    inputs = {f.name for f in fields(KernelInputs)} - {"latency_bound"}
    assert kwargs == inputs
    assert set(WORKSHEET_COUNTS) <= set(COUNT_NAMES)
    assert set(WORKSHEET_COUNTS) | {"pipe_instructions", "tensor_macs"} == kwargs
    c = count(graph_of(LDG, LDS)).evaluate({})
    assert set(worksheet_counts(c)) == kwargs
    assert "lsu" in RESOURCES


@pytest.fixture(scope="module")
def tiled():
    return import_kernel(MATMUL, function="matmul_tiled")


def test_the_tiled_product_counts_its_load_store_instructions_as_they_run(tiled):
    """Two global loads and two shared stores copy the tiles each phase, each step reads
    both tiles, one store writes the result: at every tile width."""
    for width in range(1, 33):  # the block sets the inner loop and its remainder's guards
        values = dict(tiled.variables, loop1=1)
        values.update(launch_guard_values(tiled, {"loop1": 1}, (width, width, 1), 32))
        c = count(tiled).evaluate(values)
        assert c["lsu_instructions"] == 2 + 2 + 2 * width + 1, width


def test_the_tiled_product_on_ga10x_is_bound_by_the_load_store_units(tiled, catalog):
    """36 load/store instructions a phase at 2 cycles each: 72 cycles, against the 63-67 a
    phase nvbench's runs take on three GA10x boards at their boost clocks (docs/validation.md)."""
    gpu = catalog.get("GeForce RTX 3080").to_gpu_spec()
    assert gpu.ldst_units_per_sm == 16
    values = dict(tiled.variables, loop1=64)
    values.update(launch_guard_values(tiled, {"loop1": 64}, (16, 16, 1), 32))
    c = count(tiled).evaluate(values)
    tb = throughput_bound(gpu, **worksheet_counts(c))
    assert tb.binding == "lsu"
    assert tb.cycles_per_warp["lsu"] == 32 / 16 * (36 * 64 + 1)
