"""The published latency tables for Volta to Blackwell (resources/devices/latency-published.json)
against the published figures (sources and grades: docs/sources.md), graded so:
P -> published-measurement, P-sim -> simulator-calibration, S -> secondary, U -> unattributed,
vendor text -> vendor. A simulator or unattributed figure is never the value the model uses;
a cell no source fills stays unknown, and the model then names the edge that needed it."""
import re
from pathlib import Path

import pytest

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.graph import Edge, Instruction, KernelGraph
from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.db.build_devices import load_source_file
from gpumodeler.db.catalog import Catalog

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "devices.db"
PUBLISHED = REPO / "resources" / "devices" / "latency-published.json"

P, SIM, S, U, V = "published-measurement", "simulator-calibration", "secondary", \
    "unattributed", "vendor"

# table -> field -> (default value, provenance, source key); None = unknown default.
# Transcribed from each source (docs/sources.md, latency sources; excerpt lines in `where`).
EXPECTED = {
    "volta-published": {
        "lat_fp32_add": (4, P, "arafa2019-outputs"), "lat_fp32_mul": (4, P, "arafa2019-outputs"),
        "lat_fp32_mad": (4, P, "arafa2019-outputs"), "lat_fp32_div": (504, P, "arafa2019-outputs"),
        "lat_int_add": (4, P, "arafa2019-outputs"), "lat_int_mul": (4, P, "arafa2019-outputs"),
        "lat_int_div": (71, P, "arafa2019-outputs"), "lat_int_rem": (72, P, "arafa2019-outputs"),
        "lat_logic": (4, P, "arafa2019-outputs"), "lat_setp": (4, P, "arafa2019-outputs"),
        "lat_mov": (4, P, "arafa2019-outputs"), "lat_conversion": (4, P, "arafa2019-outputs"),
        # SFU: rsqrt.approx.f32 (single precision), not the FP64 MUFU.RSQ64H's 8
        "lat_sfu": (18, P, "arafa2019-outputs"), "lat_fp64": (8, P, "arafa2019-outputs"),
        "lat_fp16": (6, P, "arafa2019-outputs"),
        "lat_int_mad": None, "lat_tensor": None, "lat_shuffle": None, "lat_shift": None,
        "mem_shared": (27.010254, P, "accelsim-ubench-titanv"),
        "mem_l1": (33.7331, P, "accelsim-ubench-titanv"),
        "mem_l2": (211.0720, P, "accelsim-ubench-titanv"),
        "mem_dram": (313.4630, P, "accelsim-ubench-titanv"),
        "mem_constant": None, "ilp_cycles": None, "barrier_cycles": None,
        "cuda_core_default_cycles": None,
    },
    # the TITAN V's figures but the board's own L2 and DRAM pointer chase
    "volta-v100-pcie-published": None,
    "turing-published": {
        "lat_fp32_add": (4, P, "arafa2019-outputs"), "lat_fp32_mul": (4, P, "arafa2019-outputs"),
        "lat_fp32_mad": (4, P, "arafa2019-outputs"), "lat_fp32_div": (335, P, "arafa2019-outputs"),
        "lat_int_add": (4, P, "arafa2019-outputs"), "lat_int_mul": (4, P, "arafa2019-outputs"),
        "lat_int_div": (79, P, "arafa2019-outputs"), "lat_int_rem": (79, P, "arafa2019-outputs"),
        "lat_sfu": (25, P, "arafa2019-outputs"), "lat_fp64": (45, P, "arafa2019-outputs"),
        "lat_fp16": (6, P, "arafa2019-outputs"), "lat_conversion": (4, P, "arafa2019-outputs"),
        "lat_int_mad": None, "lat_tensor": None,
        "mem_shared": (23, P, "sjfeng-microbenchmark"), "mem_l1": (32, P, "sjfeng-microbenchmark"),
        "mem_l2": (236, P, "sjfeng-microbenchmark"),
        "mem_constant": (4, P, "sjfeng-microbenchmark"),
        "mem_dram": (434, S, "abdelkhalik2022-notes"),
    },
    "ampere-published": {
        "lat_fp32_add": (4, S, "abdelkhalik2022-notes"), "lat_fp32_mad": (4, S, "abdelkhalik2022-notes"),
        "lat_int_add": (4, S, "abdelkhalik2022-notes"), "lat_int_mul": (3, S, "abdelkhalik2022-notes"),
        "lat_int_mad": (3, S, "abdelkhalik2022-notes"), "lat_fp16": (3, S, "abdelkhalik2022-notes"),
        "lat_fp64": (5, S, "abdelkhalik2022-notes"), "lat_tensor": (8, S, "abdelkhalik2022-notes"),
        "lat_fp32_mul": None, "lat_sfu": None, "lat_fp32_div": None,
        "mem_shared": (23, S, "abdelkhalik2022-notes"),
        "mem_l1": (32.7, P, "hpmll-random-latency"), "mem_l2": (202.8, P, "hpmll-random-latency"),
        "mem_dram": (566.3, P, "hpmll-random-latency"),
        "ilp_cycles": (2, S, "abdelkhalik2022-notes"),
    },
    "ada-published": {
        "mem_l1": (36.0, P, "hpmll-random-latency"), "mem_l2": (284.8, P, "hpmll-random-latency"),
        "mem_dram": (571.6, P, "hpmll-random-latency"),
        "lat_fp32_mad": None, "lat_int_add": None, "lat_fp64": None, "mem_shared": None,
    },
    "hopper-published": {
        "lat_fp32_add": (4, S, "blackwell-survey-quotes"), "lat_fp32_mad": (4, S, "blackwell-survey-quotes"),
        "lat_int_add": (4, S, "blackwell-survey-quotes"), "lat_tensor": None,
        # wgmma m64nNk16 by N (Luo et al. Table 9): the 128 is N = 256's, not every MMA's
        **{f"lat_tensor_n{n}": (c, S, "blackwell-survey-quotes")
           for n, c in ((8, 18), (16, 20), (32, 24), (64, 32), (128, 64), (256, 128))},
        "lat_fp64": None, "lat_sfu": None, "lat_int_mad": None, "ilp_cycles": None,
        "mem_shared": (29.0, S, "blackwell-survey-quotes"),
        "mem_l1": (32.0, P, "hpmll-random-latency"), "mem_l2": (264.5, P, "hpmll-random-latency"),
        "mem_dram": (656.8, P, "hpmll-random-latency"),
    },
    # B200 (GB100): its own L1; the FP32/INT32 figure was measured on GB203 and H100 and is
    # a labelled assumption here
    "blackwell-published": {
        "lat_fp32_mad": (4, S, "assumed-gb203-on-b200"), "lat_int_add": (4, S, "assumed-gb203-on-b200"),
        "mem_l1": (39, S, "blackwell-survey-quotes"),
        "lat_tensor": None, "mem_shared": None, "mem_l2": None, "mem_dram": None,
    },
    # RTX 50xx (GB20x): the GB203 figures only, not the B200's
    "blackwell-gb20x-published": {
        "lat_fp32_mad": (4, S, "blackwell-survey-quotes"), "lat_int_add": (4, S, "blackwell-survey-quotes"),
        "mem_l1": None, "lat_tensor": None, "mem_shared": None, "mem_l2": None, "mem_dram": None,
    },
    # GA10x: the A100's figures as labelled assumptions, but not its tensor (GA102's rate is a
    # quarter of the A100's) or FP64 (2 units per SM) latencies
    "ampere-ga10x-published": {
        "lat_fp32_mad": (4, S, "assumed-ga100-on-ga10x"), "lat_int_add": (4, S, "assumed-ga100-on-ga10x"),
        "mem_dram": (566.3, P, "assumed-ga100-on-ga10x"), "lat_tensor": None, "lat_fp64": None,
        "lat_sfu": None,
    },
}
# Figures recorded as alternatives (table, field, value, provenance): the simulator and
# unattributed numbers the notes give, kept but never used by the model.
ALTERNATIVES = [
    ("volta-published", "lat_fp32_mad", 4, V), ("volta-published", "lat_fp32_mad", 4.119690, P),
    ("volta-published", "lat_fp32_mad", 5, SIM), ("volta-published", "lat_shuffle", 32, SIM),
    ("volta-published", "lat_fp64", 8.064270, P), ("volta-published", "lat_tensor", 64, SIM),
    ("turing-published", "lat_fp32_mad", 4, V), ("turing-published", "lat_fp64", 64, SIM),
    ("turing-published", "mem_l2", 188, S), ("turing-published", "lat_tensor", 64, SIM),
    ("ampere-published", "lat_fp64", 6, SIM), ("ampere-published", "lat_fp64", 64, SIM),
    ("ampere-published", "lat_sfu", 6, S), ("ampere-published", "mem_l1", 33, S),
    ("ampere-published", "mem_l2", 200, S), ("ampere-published", "mem_dram", 290, S),
    ("hopper-published", "lat_fp64", 8, SIM), ("hopper-published", "ilp_cycles", 2, SIM),
    ("volta-published", "ilp_cycles", 2, SIM), ("ampere-published", "ilp_cycles", 1, SIM), ("hopper-published", "lat_sfu", 23, SIM),
    ("hopper-published", "mem_l2", 258.0, S), ("hopper-published", "mem_dram", 656, S),
    ("blackwell-published", "mem_dram", 832.6, U), ("blackwell-published", "mem_l2", 305.1, U),
    ("blackwell-published", "mem_shared", 29.0, U), ("blackwell-published", "mem_l1", 39.6, U),
    ("blackwell-published", "lat_fp32_mad", 4.44, U), ("blackwell-published", "lat_tensor", 11.0, S),
    ("hopper-published", "lat_tensor", 128, S),
]
EXPECTED["volta-v100-pcie-published"] = dict(
    EXPECTED["volta-published"], mem_l2=(215.1, P, "gpu-benches-latency"),
    mem_dram=(428.2, P, "gpu-benches-latency"))
# The GPU each table's default measurements were taken on, as its alias says.
MEASURED_ON = {"volta-published": ["TITAN V"], "volta-v100-pcie-published": ["TITAN V", "V100 PCIe"],
               "turing-published": ["TITAN RTX", "RTX 2070"],
               "ampere-published": ["A100"], "ada-published": ["RTX 4090"],
               "hopper-published": ["H800 PCIe"], "blackwell-published": ["B200"],
               "blackwell-gb20x-published": ["RTX 5080"], "ampere-ga10x-published": ["A100", "RTX 3070"]}
MEASURED_GPUS = {"NVIDIA TITAN V": "volta-published",
                 "Tesla V100 PCIe 16 GB": "volta-v100-pcie-published", "NVIDIA TITAN RTX": "turing-published",
                 "GeForce RTX 2060": "turing-published", "GeForce RTX 2070": "turing-published",
                 "GeForce RTX 3070": "ampere-ga10x-published", "H800 PCIe 80 GB": "hopper-published"}
CHIP_TABLES = {"8.6": "ampere-ga10x-published", "12.0": "blackwell-gb20x-published"}
#: a board whose own memory latencies were measured has a table of its own
BOARD_TABLES = {"Tesla V100 PCIe 16 GB": "volta-v100-pcie-published"}
MODERN = {"Volta": "volta-published", "Turing": "turing-published", "Ampere": "ampere-published",
          "Ada Lovelace": "ada-published", "Hopper": "hopper-published",
          "Blackwell": "blackwell-published"}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    with Catalog(user_db=tmp_path_factory.mktemp("u") / "user.db", shipped_db=SHIPPED) as c:
        yield c


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_defaults_are_the_source_figures_with_their_grade(catalog, key):
    device = catalog.get(key)
    assert device.kind == "latency_table"
    for field_name, expected in EXPECTED[key].items():
        record = device.default_record(field_name)
        if expected is None:
            assert record is None or record.value is None, (key, field_name)
            continue
        value, provenance, source = expected
        assert record.value == pytest.approx(value, abs=0), (key, field_name)
        assert (record.provenance, record.source) == (provenance, source), (key, field_name)
        assert record.where and device.sources[source]


@pytest.mark.parametrize("key,field_name,value,provenance", ALTERNATIVES)
def test_alternative_figures_are_kept_with_their_grade(catalog, key, field_name, value,
                                                       provenance):
    records = catalog.get(key).values[field_name]
    assert any(r.value == value and r.provenance == provenance and not r.is_default
               for r in records), (key, field_name, [(r.value, r.provenance) for r in records])


def test_no_simulator_or_unattributed_figure_is_a_default_and_every_figure_is_graded():
    source = load_source_file(PUBLISHED)
    assert {d.name for d in source.devices} == set(EXPECTED)
    for device in source.devices:
        for field_name, records in device.values.items():
            for value, unit, src, where, provenance, note, is_default, _ in records:
                if value is None:
                    continue
                assert provenance in (P, SIM, S, U, V), (device.name, field_name, provenance)
                assert provenance != "measurement"      # nothing here is our own measurement
                if provenance in (SIM, U):
                    assert not is_default, (device.name, field_name)
                    assert note and "never the default" in note
                # each figure says which GPU it was measured on (vendor text is
                # architecture-wide)
                assert provenance == V or re.search(r"TITAN|RTX|A100|V100|H800|H100|B200|GB203|GPU is not named", where), \
                    (device.name, field_name, where)


@pytest.mark.parametrize("key", sorted(MEASURED_ON))
def test_each_table_says_which_gpu_it_was_measured_on(catalog, key):
    table = catalog.latency_table(key)
    for gpu in MEASURED_ON[key]:
        assert gpu in table.name, (key, table.name)
    assert table.architecture and table.source


def test_the_measured_gpus_are_in_the_database_and_carry_their_table(catalog):
    for name, key in MEASURED_GPUS.items():
        device = catalog.get(name)
        assert device.kind == "gpu"
        assert device.value("latency_table") == key
        # the family, and for a chip with a table of its own the chip too ("Ampere GA10x")
        assert catalog.latency_table(key).architecture.startswith(device.value("architecture"))


def _modern_gpus(catalog):
    """GPUs of compute capability 7.0 and later, or of a Volta-or-later architecture."""
    out = []
    for summary in catalog.list("gpu"):
        device = catalog.get(summary.name)
        cc = device.value("compute_capability")
        if device.value("architecture") in MODERN or (cc and int(cc.split(".")[0]) >= 7):
            out.append(device)
    return out


def test_every_modern_gpu_links_to_its_architecture_table(catalog):
    gpus = _modern_gpus(catalog)
    assert len(gpus) == 30 and {g.name for g in gpus} >= set(MEASURED_GPUS)
    for device in gpus:
        key = device.value("latency_table")
        # a chip whose measured latencies differ from its family's first chip has its own
        chip = CHIP_TABLES.get(device.value("compute_capability"))
        board = BOARD_TABLES.get(device.name)
        assert key == (board or chip or MODERN[device.value("architecture")]), device.name
        record = device.default_record("latency_table")
        assert record.source and record.where and record.note


def ffma_chain_after_ldg():
    """LDG R2 <- [R2]; three dependent FFMAs on R2 (a small kernel's critical path)."""
    g = KernelGraph(name="ldg-ffma")
    g.add_instruction(Instruction.make("ld", "LDG.E"))
    for i in range(3):
        g.add_instruction(Instruction.make(f"f{i}", "FFMA"))
    g.add_edge(Edge("mem", "ld", "f0", "memory"))
    g.add_edge(Edge("d1", "f0", "f1", "dependency"))
    g.add_edge(Edge("d2", "f1", "f2", "dependency"))
    return g


def test_a_graph_evaluates_on_every_modern_gpu_or_names_the_edge_no_source_covers(catalog):
    """Where the sources give the FFMA and DRAM latencies (Volta, Turing, Ampere, Hopper)
    the bound is DRAM + 2 FFMA with no explicit latency; Ada has no FP32 latency from any
    source and Blackwell no attributed DRAM latency, and the error names the edge, the
    instruction and the latency-table row."""
    evaluated = set()
    for device in _modern_gpus(catalog):
        key = device.value("latency_table")
        table = catalog.latency_table(key)
        graph = ffma_chain_after_ldg()
        if key == "ada-published":
            with pytest.raises(GraphError) as err:
                analyze(graph, table)
            message = str(err.value)
            assert err.value.item == "d1"
            assert "edge d1" in message and "FFMA (f0)" in message and "'fp32_mad'" in message
            assert "ada-published" in message and "explicit latency" in message
        elif key in ("blackwell-published", "blackwell-gb20x-published"):
            with pytest.raises(GraphError) as err:
                analyze(graph, table)
            assert err.value.item == "mem"
            assert "memory edge mem, LDG.E (ld) -> f0" in str(err.value)
            assert "memory level 'dram'" in str(err.value)
        else:
            bound = analyze(graph, table).evaluate()
            assert bound == pytest.approx(table.memory("dram") + 2 * table.instruction("fp32_mad"))
            evaluated.add(key)
    assert evaluated == {"volta-published", "volta-v100-pcie-published", "turing-published",
                         "ampere-published", "ampere-ga10x-published", "hopper-published"}


def test_titan_v_bound_is_the_titan_v_measurements(catalog):
    table = catalog.latency_table(catalog.get("TITAN V").value("latency_table"))
    assert analyze(ffma_chain_after_ldg(), table).evaluate() == pytest.approx(313.4630 + 8)


# --- pipe widths of the modern GPUs (docs/pipes.md) ---------------------------------------

SHARED_LANES = {"7.0": 0, "7.5": 0, "8.0": 0, "8.6": 64, "8.9": 64, "9.0": 0, "12.0": 128}


def test_modern_gpus_carry_vendor_pipe_widths(catalog):
    from gpumodeler.db.mapping import record_to_gpu_spec
    checked = 0
    for device in _modern_gpus(catalog):
        cc = device.value("compute_capability")
        if cc is None:
            continue                                  # H800 PCIe: no vendor data read
        spec = record_to_gpu_spec(device)
        assert spec.issues_separate_pipes() and not spec.dual_issue(), device.name
        record = device.default_record("int32_fp32_shared_lanes_per_sm")
        if cc in SHARED_LANES:
            assert spec.int32_fp32_shared_lanes_per_sm == SHARED_LANES[cc], device.name
            # a vendor figure, or (H200: the H100's GH100 SM) a labelled assumption
            assert record.where and (record.provenance == "vendor" or (
                record.source.startswith("assumed-") and record.note.startswith("ASSUMPTION"))), \
                device.name
            checked += 1
        if cc in ("7.0", "7.5"):
            assert spec.fp16_results_per_cycle_per_sm == 128       # CUDA guide, 7.x column
    assert checked >= 25
    ga10x = record_to_gpu_spec(catalog.get("RTX 3090"))
    assert (ga10x.cuda_cores_per_sm, ga10x.int32_units_per_sm,
            ga10x.int32_fp32_shared_lanes_per_sm) == (128, 64, 64)
    turing = record_to_gpu_spec(catalog.get("RTX 2080 Ti"))
    assert (turing.cuda_cores_per_sm, turing.int32_units_per_sm,
            turing.int32_fp32_shared_lanes_per_sm) == (64, 64, 0)
    maxwell = record_to_gpu_spec(catalog.get("GTX 970"))
    assert not maxwell.issues_separate_pipes() and maxwell.dual_issue()


def test_a_gpu_comparison_takes_each_gpus_table(catalog, example_project):
    """A project kernel without its own table, compared across GPUs: each GPU's bound comes
    from its architecture's table; a GPU whose table lacks a latency gets the reason."""
    import math
    from gpumodeler.core.launch_sweep import make_snapshot, run_sweep
    from gpumodeler.core.pipeline import evaluate_launch

    project = example_project()
    lid = next(iter(project.launches))
    launch = project.launches[lid]
    project.kernels[launch.kernel] = ffma_chain_after_ldg()
    gpu = lambda n: catalog.get(n).to_gpu_spec()
    link = lambda n: catalog.get(n).to_link_spec()
    lookup = catalog.latency_table
    own = evaluate_launch(project, lid, gpu, link, table_lookup=lookup)   # GTX 970: Gajger's
    assert own.latency_bound_cycles == 350 + 2 * 6
    snap = make_snapshot(project, lid, gpu, link, "gpu", [],
                         devices=["TITAN V", "RTX 4090", "A100 SXM4 80 GB"], table_lookup=lookup)
    result = run_sweep(snap)
    kernel, reasons = result.curves[0].kernel_time_s, result.curves[0].reasons
    assert math.isfinite(kernel[0]) and math.isfinite(kernel[2])
    assert math.isnan(kernel[1]) and "ada-published" in reasons[1] and "fp32_mad" in reasons[1]
    assert snap.bounds[0].evaluate() == pytest.approx(313.4630 + 8)
    assert snap.bounds[2].evaluate() == pytest.approx(566.3 + 8)


def test_a_version_3_database_migrates_to_allow_the_grades(tmp_path):
    """m004 rebuilds device_values with the wider provenance CHECK and keeps its rows, its
    index and the digest triggers."""
    import sqlite3
    import sqlite_utils
    from gpumodeler.db.records import ValueRecord
    from gpumodeler.db.schema import KNOWN_MIGRATIONS, SCHEMA_VERSION, migrations, open_database
    from gpumodeler.db.store import read_device, refresh_content_hashes

    path = tmp_path / "v3.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    db = sqlite_utils.Database(conn)
    migrations.apply(db, stop_before="m004_published_provenances")
    db.execute("UPDATE meta SET value = '3' WHERE key = 'version'")
    db.execute("INSERT INTO devices (id, kind, name, name_lower, aliases, family, origin, "
               "created, modified) VALUES (1, 'latency_table', 'old-table', 'old-table', '[]', "
               "NULL, 'user', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')")
    db.execute("INSERT INTO device_values VALUES "
               "(1, 1, 'mem_dram', 400, 'cycle', NULL, 'my bench', NULL, 'measurement', NULL, "
               "1, 0)")
    refresh_content_hashes(db)
    conn.commit()
    with pytest.raises(sqlite3.IntegrityError):     # version 3 refuses the grades
        db.execute("INSERT INTO device_values VALUES (2, 1, 'mem_l2', 200, 'cycle', NULL, NULL,"
                   " NULL, 'secondary', NULL, 1, 1)")
    conn.close()

    with Catalog(user_db=path, use_shipped=False) as user:
        user.add_device("latency_table", "graded", values={
            "mem_l2": ValueRecord(200, "cycle", None, "Table 4", "secondary", None, True,
                                  "a paper's table, quoted")})
        assert user.latency_table("old-table").memory_cycles == {"dram": 400}
        assert user.get("graded").default_record("mem_l2").provenance == "secondary"
    db = open_database(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]
    items = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE tbl_name = "
                                      "'device_values' AND type IN ('index', 'trigger')")}
    assert read_device(db, "old-table").value("mem_dram") == 400
    db.close()
    assert int(version) == SCHEMA_VERSION == len(KNOWN_MIGRATIONS)
    assert {"device_values_by_field", "device_values_insert_clears_hash",
            "device_values_update_clears_hash", "device_values_delete_clears_hash"} <= items


def test_an_imported_listing_names_its_chips_table(catalog):
    """sm_86 (GA10x) and sm_120 (GB20x) listings name their chips' tables, not GA100's or
    B200's; sm_80 and sm_100 keep the family's first chip's."""
    from gpumodeler.core.kernel.sass.latencies import table_for_architecture
    tables = {k: catalog.latency_table(k) for k in catalog.latency_table_keys()}
    assert table_for_architecture("sm_86", tables)[0] == "ampere-ga10x-published"
    assert table_for_architecture("sm_80", tables)[0] == "ampere-published"
    assert table_for_architecture("sm_120a", tables)[0] == "blackwell-gb20x-published"
    assert table_for_architecture("sm_100a", tables)[0] == "blackwell-published"
    assert table_for_architecture("sm_90a", tables)[0] == "hopper-published"
