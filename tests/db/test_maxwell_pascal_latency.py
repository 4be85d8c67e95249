"""The Maxwell and Pascal latency tables (resources/devices/latency-maxwell-pascal.json): each
value cites its source and place; what was taken from another architecture or instruction
class is a labelled assumption; what no source gives stays unknown with its reason; the
Maxwell defaults are Gajger's GM107 values wherever his table has one; PPT-GPU's Maxwell and
Pascal figures (Arafa et al.) are transcribed as its files give them and are the default only
where no measurement exists; GP100 (sm_60) and GP10x (sm_61/62) differ in FP64."""
import re
from dataclasses import fields
from pathlib import Path

import pytest

from gpumodeler.core.kernel.latency_tables import INSTRUCTION_CLASSES, MEMORY_LEVELS, TABLES
from gpumodeler.core.kernel.sass.latencies import table_for_architecture
from gpumodeler.db.build_devices import load_source_file
from gpumodeler.db.catalog import Catalog

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "resources" / "devices" / "latency-maxwell-pascal.json"
TABLE_NAMES = {"maxwell-published", "pascal-published", "pascal-gp10x-published"}
#: provenances of a figure measured on, or given by the vendor for, the architecture itself
PRIMARY = {"document", "vendor", "measurement", "published-measurement"}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    with Catalog(user_db=tmp_path_factory.mktemp("u") / "user.db",
                 shipped_db=REPO / "devices.db") as c:
        yield c


def _devices():
    source = load_source_file(SOURCE)
    assert {d.name for d in source.devices} == TABLE_NAMES
    return source


def _records():
    for device in _devices().devices:
        for field_name, records in device.values.items():
            for value, unit, src, where, provenance, note, is_default, _ in records:
                yield device.name, field_name, value, src, where, provenance, note, is_default


def test_every_value_cites_its_source_and_assumptions_say_so():
    seen = 0
    keys = set(_devices().sources)
    for table, field_name, value, src, where, provenance, note, _ in _records():
        if value is None:
            assert note, (table, field_name)  # an unknown says why
            continue
        seen += 1
        assert src and where, (table, field_name)
        assert src in keys, (table, field_name, src)  # every source key is described
        assumed = src.startswith("assumed-")
        assert assumed == bool(note and note.startswith("ASSUMPTION")), (table, field_name, note)
        if table == "maxwell-published":
            assert not assumed or field_name == "lat_conversion", field_name
    assert seen >= 60


def test_ppt_gpu_figures_are_transcribed_as_the_file_gives_them():
    """Each PPT-GPU record is graded secondary, names its file by architecture, and its value
    is the number the quoted dictionary entry carries (units_latency 'x': n, ptx_isa 'x':
    ['unit', n])."""
    seen = 0
    for table, field_name, value, src, where, provenance, note, _ in _records():
        if not src or not src.startswith("ppt-gpu-"):
            continue
        seen += 1
        assert provenance == "secondary", (table, field_name)
        arch = src.removeprefix("ppt-gpu-").capitalize()
        assert where.startswith(f"hardware/ISA/{arch}.py, "), (table, field_name, where)
        assert table.startswith(arch.lower()), (table, field_name)
        m = re.search(r"(units_latency|ptx_isa) '(\w+)': (?:\['\w+', )?(\d+)", where)
        assert m and float(m.group(3)) == value, (table, field_name, where, value)
    assert seen >= 35


def test_a_secondary_figure_is_the_default_only_where_no_measurement_exists():
    """Per field: a secondary record is the default only if no record is primary (measured
    on the architecture or the vendor's); where an assumption stays the default next to
    secondary figures, its note says why they were not taken."""
    source = _devices()
    for device in source.devices:
        for field_name, records in device.values.items():
            if len(records) < 2:
                continue
            default = next((r for r in records if r[6]), records[0])
            provenances = {r[4] for r in records}
            primary = [r for r in records if r[4] in PRIMARY and not r[2].startswith("assumed-")]
            if default[4] == "secondary":
                assert not primary, (device.name, field_name)
            if default[2].startswith("assumed-") and "secondary" in provenances:
                assert "PPT-GPU" in default[5], (device.name, field_name)


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
    device = catalog.get("maxwell-published")
    # the rows Gajger lacks that an imported listing needs
    assert device.default_record("lat_sfu").source == "volkov2016"
    assert device.default_record("lat_conversion").source == "assumed-volkov2016"
    assert device.default_record("mem_dram_random").source == "volkov2016"
    # FP64, constant and L1 from PPT-GPU's Maxwell file; shuffle still unknown
    for cls, level in (("fp64", None), (None, "constant"), (None, "l1")):
        field_name = f"lat_{cls}" if cls else f"mem_{level}"
        record = device.default_record(field_name)
        assert record.source == "ppt-gpu-maxwell" and record.provenance == "secondary", field_name
        got = compiled.instruction_cycles[cls] if cls else compiled.memory_cycles[level]
        assert got == record.value, field_name
    assert compiled.instruction_cycles.get("shuffle") is None


@pytest.mark.parametrize("name", ["pascal-published", "pascal-gp10x-published"])
def test_pascal_takes_nvidias_fma_latency_and_ppt_gpus_pascal_figures(catalog, name):
    table = catalog.latency_table(name)
    assert table.architecture == "Pascal"
    device = catalog.get(name)
    for cls in ("lat_fp32_add", "lat_fp32_mad", "lat_fp32_mul"):
        record = device.default_record(cls)
        assert (record.value, record.provenance, record.source) == \
            (6, "vendor", "nvidia-volta-tuning-guide"), cls
        assert "six cycles on Pascal" in record.where
        # PPT-GPU's FP32 figure agrees with NVIDIA's
        assert any(r.source == "ppt-gpu-pascal" and r.value == record.value
                   for r in device.values[cls]), cls
    for field_name in ("lat_int_add", "lat_logic", "lat_shift", "lat_mov", "lat_setp",
                       "lat_int_mul", "lat_int_mad", "lat_int_div", "lat_int_rem", "lat_fp32_div",
                       "lat_fp16", "mem_dram", "mem_l2", "mem_l1", "mem_shared", "mem_constant"):
        record = device.default_record(field_name)
        assert record.source == "ppt-gpu-pascal", (name, field_name)
    # still labelled assumptions: no Pascal figure, or none that is what the model needs
    for field_name in ("lat_sfu", "lat_conversion", "branch_taken_cycles",
                       "branch_not_taken_cycles"):
        record = device.default_record(field_name)
        assert record.source.startswith("assumed-") and record.note.startswith("ASSUMPTION"), \
            field_name
    assert table.instruction_cycles.get("shuffle") is None
    assert table.barrier_cycles is None


def test_gp100_and_gp10x_differ_only_in_fp64_and_fp16(catalog):
    """GP100 runs FP64 at half the FP32 rate (as GV100 does), GP10x at 1/32 (as GM20x and
    TU10x do): the GP10x table takes PPT-GPU's 45 cycles, the GP100 table the half-rate GV100's
    DFMA latency as a labelled assumption with the 45 as its alternative."""
    gp100, gp10x = catalog.get("pascal-published"), catalog.get("pascal-gp10x-published")
    def cited(device, f):
        return [(r.value, r.source, r.where, r.note, r.is_default) for r in device.values.get(f, ())]

    differ = {f for f in set(gp100.values) | set(gp10x.values)
              if cited(gp100, f) != cited(gp10x, f)}
    assert differ == {"lat_fp64", "lat_fp16"}
    assert gp10x.default_record("lat_fp64").source == "ppt-gpu-pascal"
    half_rate = gp100.default_record("lat_fp64")
    assert half_rate.source == "assumed-arafa2019-outputs" and "GV100" in half_rate.note
    assert "Volta/TITANV/DFFMA" in half_rate.where
    alternative = [r for r in gp100.values["lat_fp64"] if not r.is_default]
    assert [r.value for r in alternative] == [gp10x.value("lat_fp64")]
    assert catalog.latency_table("pascal-published").instruction_cycles["fp64"] \
        < catalog.latency_table("pascal-gp10x-published").instruction_cycles["fp64"]


def test_pascal_gpus_name_their_chips_table(catalog):
    tables = {name: catalog.latency_table(name) for name in TABLE_NAMES}
    for name in ("Tesla P100 SXM2", "GeForce GTX 1080", "GeForce GTX 1080 Ti"):
        device = catalog.get(name)
        assert device.value("architecture") == "Pascal"
        arch = "sm_" + str(device.value("compute_capability")).replace(".", "")
        # the table the device names is the one a listing of its architecture imports with
        assert device.value("latency_table") == table_for_architecture(arch, tables)[0], name
    assert catalog.get("Tesla P100 SXM2").value("latency_table") == "pascal-published"
    assert catalog.get("GeForce GTX 1080 Ti").value("latency_table") == "pascal-gp10x-published"
    assert catalog.get("GeForce GTX 1080").value("latency_table") == "pascal-gp10x-published"
