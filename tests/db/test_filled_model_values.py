"""Values the models need, filled for the documents' GPUs (docs/models.md):
FP64 units per SM and shared-memory accesses per cycle, each with its source and where in
it, and the occupancy limits of devices.db agreeing with the occupancy tables."""
import pytest

from gpumodeler.core.occupancy.compute_capability import architecture

pytestmark = pytest.mark.usefixtures("gpumodeler_env")  # the built devices.db

GUIDE = "nvidia-cuda-guide"


def _default(name: str, field: str):
    from gpumodeler.db.catalog import Catalog
    with Catalog() as catalog:
        records = catalog.get(name).values.get(field, ())
    known = [r for r in records if r.known]
    assert known, f"{name}: {field} is unknown"
    return next((r for r in known if r.is_default), known[0]) if len(known) > 1 else known[0]


@pytest.mark.parametrize("name, units, column", [
    # CUDA Programming Guide, "Throughput of Native Arithmetic Instructions", 64-bit
    # floating-point add/multiply/multiply-add, results per clock per SM.
    ("GeForce GTX 480", 4, "2.0"),       # 16, lower (4) for GeForce GPUs
    ("GeForce GT 630", 4, "2.1"),
    ("GeForce GTX 660", 8, "3.0"),
    ("GeForce GTX TITAN", 64, "3.5"),    # 8 for GeForce GPUs except Titan GPUs
    ("Quadro K5200", 64, "3.5"),
    ("GeForce GTX 970", 4, "5.x"),
    ("GeForce GTX TITAN X (Maxwell)", 4, "5.x"),
])
def test_fp64_units_from_the_programming_guide(name, units, column):
    r = _default(name, "fp64_units_per_sm")
    assert r.value == units
    assert r.source == GUIDE and r.provenance == "vendor"
    assert f"compute capability {column} column" in r.where


def test_8800_gtx_has_no_fp64_units():
    r = _default("GeForce 8800 GTX", "fp64_units_per_sm")
    assert r.value == 0 and r.source == GUIDE
    assert "1.3" in r.where and "double" in r.note


def test_gtx_titan_note_says_the_driver_setting_matters():
    r = _default("GeForce GTX TITAN", "fp64_units_per_sm")
    assert r.is_default and "double-precision" in r.note


@pytest.mark.parametrize("name", ["Tesla P100 SXM2", "GeForce GTX 1080", "GeForce GTX 1080 Ti"])
def test_pascal_shared_memory_rate_is_a_vendor_figure_not_a_measurement(name):
    r = _default(name, "smem_accesses_per_cycle_per_sm")
    assert r.value == 1 and r.unit == "1/cycle"
    assert r.source == GUIDE and r.provenance == "vendor"
    assert "32 banks" in r.where and "not measured" in r.note


@pytest.mark.parametrize("name", ["GeForce 8800 GTX", "GeForce GTX 280", "GeForce GTX 480",
                                  "GeForce GT 630", "GeForce GTX 660", "GeForce GTX 680",
                                  "GeForce GTX TITAN", "GeForce GTX 970", "Tesla P100 SXM2",
                                  "GeForce GTX 1080"])
def test_database_limits_agree_with_the_occupancy_table(name):
    from gpumodeler.db.catalog import Catalog
    with Catalog() as catalog:
        values = catalog.get(name).values
    cc = next(r.value for r in values["compute_capability"] if r.known)
    arch = architecture(cc)
    checks = {"registers_per_sm": arch.registers_per_sm,
              "max_registers_per_thread": arch.max_registers_per_thread,
              "max_registers_per_block": arch.max_registers_per_block}
    compared = 0
    for field, expected in checks.items():
        for r in values.get(field, ()):
            if r.known:
                assert r.value == expected, (name, field)
                compared += 1
    shared = [r.value for r in values.get("max_shared_mem_per_block_bytes", ()) if r.known]
    for value in shared:
        # 1.x: the guide's 16 KB; the calculator keeps 16 B of it per block (Volkov §5.7).
        assert value == arch.shared_mem_per_block_bytes + (16 if cc.startswith("1.") else 0)
        compared += 1
    assert compared


@pytest.mark.parametrize("name", ["Tesla P100 SXM2", "GeForce GTX 1080", "GeForce GTX 1080 Ti"])
def test_pascal_issue_rate_is_recorded_not_defaulted(name):
    r = _default(name, "issue_per_scheduler_per_cycle")
    assert r.value == 1 and r.source == GUIDE and "6.x" in r.where and r.note


def test_gtx_1080_board_values_are_secondary_readings_that_agree():
    """The GTX 1080's board values come from readings others published (graded secondary,
    each quoting its line): its SM count is its CUDA cores over the 128 per SM of compute
    capability 6.1, and its pin bandwidth the quoted data rate times the bus width."""
    import re

    from gpumodeler.db.catalog import Catalog
    with Catalog() as catalog:
        device = catalog.get("GeForce GTX 1080")
    board = ("base_clock_hz", "boost_clock_hz", "sm_clock_hz", "board_power_w", "sms",
             "memory_bandwidth_theoretical_bytes_per_s", "memory_bus_width_bits",
             "memory_size_bytes", "memory_type", "compute_capability")
    for field in board:
        r = device.default_record(field)
        assert r.provenance == "secondary" and r.source in device.sources and r.where, field
    cores = int(re.search(r"CUDA Cores: (\d+)", device.default_record("sms").where).group(1))
    per_sm = device.value("fp32_cores_per_sm")
    assert device.value("sms") * per_sm == cores
    rate = float(re.search(r"([\d.]+) Gbps per pin",
                           device.default_record("memory_bandwidth_theoretical_bytes_per_s").note
                           ).group(1))
    assert device.value("memory_bandwidth_theoretical_bytes_per_s") == \
        pytest.approx(rate * 1e9 * device.value("memory_bus_width_bits") / 8)
    assert device.value("sm_clock_hz") == device.value("boost_clock_hz")
    assert device.value("compute_capability") == "6.1"
