"""The Maxwell and Pascal latency tables (resources/devices/latency-maxwell-pascal.json): each
value cites its source and place; what was taken from another architecture or instruction
class is a labelled assumption; what no source gives stays unknown with its reason; the
Maxwell defaults are Gajger's GM107 values wherever his table has one."""
from dataclasses import fields
from pathlib import Path

import pytest

from gpumodeler.core.kernel.latency_tables import INSTRUCTION_CLASSES, MEMORY_LEVELS, TABLES
from gpumodeler.db.build_devices import load_source_file
from gpumodeler.db.catalog import Catalog

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "resources" / "devices" / "latency-maxwell-pascal.json"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    with Catalog(user_db=tmp_path_factory.mktemp("u") / "user.db",
                 shipped_db=REPO / "devices.db") as c:
        yield c


def _records():
    source = load_source_file(SOURCE)
    assert {d.name for d in source.devices} == {"maxwell-published", "pascal-published"}
    for device in source.devices:
        for field_name, records in device.values.items():
            for value, unit, src, where, provenance, note, is_default, _ in records:
                yield device.name, field_name, value, src, where, provenance, note, is_default


def test_every_value_cites_its_source_and_assumptions_say_so():
    seen = 0
    for table, field_name, value, src, where, provenance, note, _ in _records():
        if value is None:
            assert note, (table, field_name)  # an unknown says why
            continue
        seen += 1
        assert src and where, (table, field_name)
        assumed = src.startswith("assumed-")
        assert assumed == bool(note and note.startswith("ASSUMPTION")), (table, field_name, note)
        if table == "maxwell-published":
            assert not assumed or field_name == "lat_conversion", field_name
    assert seen >= 30


def test_maxwell_defaults_are_gajgers_wherever_he_gives_one(catalog):
    gajger = TABLES["maxwell-gajger"]
    compiled = catalog.latency_table("maxwell-published")
    assert compiled.architecture == "Maxwell"
    for cls in INSTRUCTION_CLASSES:
        if gajger.instruction_cycles.get(cls) is not None:
            assert compiled.instruction_cycles[cls] == gajger.instruction_cycles[cls], cls
    for level in MEMORY_LEVELS:
        if gajger.memory_cycles.get(level) is not None:
            assert compiled.memory_cycles[level] == gajger.memory_cycles[level], level
    for f in fields(gajger):
        if f.name.endswith("_cycles") and isinstance(getattr(gajger, f.name), (int, float)):
            assert getattr(compiled, f.name) == getattr(gajger, f.name), f.name
    # the rows Gajger lacks that an imported listing needs
    assert compiled.instruction_cycles["sfu"] == 13  # Volkov, GTX 980
    assert compiled.instruction_cycles["conversion"] == 13  # assumption
    assert compiled.memory_cycles["dram_random"] == 534  # Volkov, GTX 980


def test_pascal_takes_nvidias_fma_latency_and_names_its_assumptions(catalog):
    table = catalog.latency_table("pascal-published")
    assert table.architecture == "Pascal"
    device = catalog.get("pascal-published")
    for cls in ("lat_fp32_add", "lat_fp32_mad", "lat_fp32_mul"):
        record = device.default_record(cls)
        assert (record.value, record.provenance, record.source) == \
            (6, "vendor", "nvidia-volta-tuning-guide"), cls
        assert "six cycles on Pascal" in record.where
    for cls in ("lat_int_add", "lat_sfu", "lat_conversion", "mem_dram", "mem_l2", "mem_shared",
                "branch_taken_cycles", "branch_not_taken_cycles"):
        record = device.default_record(cls)
        assert record.source.startswith("assumed-") and record.note.startswith("ASSUMPTION"), cls
    for unknown in ("fp64", "shuffle"):
        assert table.instruction_cycles.get(unknown) is None, unknown
    assert table.barrier_cycles is None


def test_pascal_gpus_name_the_pascal_table(catalog):
    for name in ("Tesla P100 SXM2", "GeForce GTX 1080 Ti"):
        device = catalog.get(name)
        assert device.value("latency_table") == "pascal-published", name
        assert device.value("architecture") == "Pascal"
