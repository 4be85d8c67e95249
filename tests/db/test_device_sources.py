"""The human-readable device sources in resources/devices/*.json follow docs/device-sources.md.

Checks the format rules (format/version, unique names and aliases, units, provenance,
exactly one default per list, known field names per kind), plausible value ranges, and
spot values copied from the source documents (Gajger 2017 Table 6.1, Table 6.2, Fig. 5.20,
Table 4.3; Volkov 2016 Tables 2.6-2.8, 6.1, 6.4).
"""
import json
import math
import pathlib

import pytest

DEVICES_DIR = pathlib.Path(__file__).resolve().parents[2] / "resources" / "devices"
FILES = sorted(DEVICES_DIR.glob("*.json"))

UNITS = {"count", "Hz", "B", "B/s", "B/cycle", "1/cycle", "bit", "W", "s", "ratio", "text", "year",
         "cycle"}

GPU_FIELDS = {
    "vendor": "text", "architecture": "text", "compute_capability": "text",
    "sms": "count", "sm_clock_hz": "Hz", "base_clock_hz": "Hz", "boost_clock_hz": "Hz",
    "tensor_clock_hz": "Hz", "copy_engines": "count", "idle_power_w": "W",
    "fp32_cores_per_sm": "count", "int32_units_per_sm": "count", "fp64_units_per_sm": "count",
    "int32_fp32_shared_lanes_per_sm": "count", "fp16_results_per_cycle_per_sm": "1/cycle",
    "sfu_per_sm": "count", "ldst_units_per_sm": "count", "tensor_cores_per_sm": "count",
    "schedulers_per_sm": "count", "dispatch_per_scheduler": "count",
    "issue_per_scheduler_per_cycle": "1/cycle", "warp_size": "count",
    "registers_per_sm": "count", "max_registers_per_block": "count",
    "max_registers_per_thread": "count", "shared_mem_per_sm_bytes": "B",
    "max_shared_mem_per_block_bytes": "B", "l1_bytes_per_sm": "B", "l2_bytes": "B",
    "l1_bytes_per_cycle_per_sm": "B/cycle",
    "l2_bandwidth_bytes_per_s": "B/s",
    "memory_type": "text", "memory_size_bytes": "B", "memory_clock_hz": "Hz",
    "memory_bus_width_bits": "bit", "memory_data_rate": "count",
    "memory_bandwidth_theoretical_bytes_per_s": "B/s",
    "memory_bandwidth_measured_bytes_per_s": "B/s", "gmem_bytes_per_cycle_per_sm": "B/cycle",
    "smem_accesses_per_cycle_per_sm": "1/cycle", "board_power_w": "W", "latency_table": "text",
    "release_year": "year",
    # dense tensor-core multiply-adds per clock per SM of each data-type class (tensor-core row)
    **{f"tensor_{c}_macs_per_cycle_per_sm": "1/cycle" for c in (
        "fp16", "fp16_fp32acc", "bf16", "tf32", "fp8", "fp8_fp32acc", "int8", "int4", "int1",
        "fp64")},
}
LINK_FIELDS = {
    "link_type": "text", "generation": "text", "lanes": "count", "bandwidth_bytes_per_s": "B/s",
    "startup_htod_s": "s", "startup_dtoh_s": "s", "lambda_htod": "ratio", "lambda_dtoh": "ratio",
}
HOST_FIELDS = {
    "cpu": "text", "cores": "count", "threads": "count", "cpu_clock_hz": "Hz",
    "memory_size_bytes": "B", "memory_type": "text", "pcie_generation": "text", "nvlink": "text",
}
INSTRUCTION_CLASSES = ("int_add", "int_mad", "int_mul", "int_div", "int_rem", "logic", "shift",
                       "fp32_add", "fp32_mad", "fp32_mul", "fp32_div", "mov", "setp", "sfu",
                       "fp64", "fp16", "tensor", "conversion", "shuffle",
                       *(f"tensor_n{n}" for n in (8, 16, 32, 64, 128, 256)))
MEMORY_LEVELS = ("dram", "dram_random", "l2", "l1", "shared", "shared_2way", "constant")
LATENCY_TABLE_FIELDS = {
    "architecture": "text",
    **{f"lat_{c}": "cycle" for c in INSTRUCTION_CLASSES},
    **{f"mem_{m}": "cycle" for m in MEMORY_LEVELS},
    **{f: "cycle" for f in ("ilp_cycles", "branch_taken_cycles", "branch_not_taken_cycles",
                            "barrier_cycles", "block_replacement_cycles",
                            "cuda_core_default_cycles")},
}
FIELDS = {"gpu": GPU_FIELDS, "link": LINK_FIELDS, "host": HOST_FIELDS,
          "latency_table": LATENCY_TABLE_FIELDS}
RECORD_KEYS = {"value", "unit", "source", "where", "note", "default", "provenance"}
PROVENANCE = {"document", "vendor", "measurement", "calibration", "published-measurement",
              "simulator-calibration", "secondary", "unattributed"}
# Fields whose known value may be 0 (a count of lanes that may not exist).
ZERO_ALLOWED = {"int32_fp32_shared_lanes_per_sm"}
DOCUMENT_LATENCY_TABLES = {"gt200-gajger", "fermi-gajger", "kepler-gajger", "maxwell-gajger",
                           "g80-volkov", "gt200-volkov", "fermi-volkov", "kepler-volkov",
                           "maxwell-volkov"}

# (lower, upper) bounds for numeric fields: plausibility, not precision.
CAN_BE_ABSENT = {"fp64_units_per_sm"}

RANGES = {
    "sms": (1, 1000), "sm_clock_hz": (1e8, 5e9), "base_clock_hz": (1e8, 5e9),
    "boost_clock_hz": (1e8, 5e9), "tensor_clock_hz": (1e8, 5e9), "copy_engines": (1, 8), "idle_power_w": (1, 2000), "fp32_cores_per_sm": (8, 256), "int32_units_per_sm": (8, 256),
    "fp64_units_per_sm": (0, 128), "int32_fp32_shared_lanes_per_sm": (0, 256),
    "fp16_results_per_cycle_per_sm": (2, 1024), "sfu_per_sm": (1, 64), "ldst_units_per_sm": (1, 64),
    "tensor_cores_per_sm": (1, 16),
    **{f"tensor_{c}_macs_per_cycle_per_sm": (16, 65536) for c in (
        "fp16", "fp16_fp32acc", "bf16", "tf32", "fp8", "fp8_fp32acc", "int8", "int4", "int1",
        "fp64")},
    "schedulers_per_sm": (1, 8), "dispatch_per_scheduler": (1, 2),
    "issue_per_scheduler_per_cycle": (0.1, 2), "warp_size": (32, 32),
    "registers_per_sm": (4096, 131072), "max_registers_per_block": (4096, 131072),
    "max_registers_per_thread": (63, 255), "shared_mem_per_sm_bytes": (8 * 1024, 512 * 1024),
    "max_shared_mem_per_block_bytes": (8 * 1024, 512 * 1024), "l1_bytes_per_sm": (8 * 1024, 512 * 1024),
    "l1_bytes_per_cycle_per_sm": (16, 512),
    "l2_bytes": (64 * 1024, 512 * 2**20), "memory_size_bytes": (2**26, 2**42),
    "memory_clock_hz": (1e8, 2e10), "memory_bus_width_bits": (64, 8192), "memory_data_rate": (1, 16),
    "memory_bandwidth_theoretical_bytes_per_s": (1e10, 2e13),
    "memory_bandwidth_measured_bytes_per_s": (1e10, 2e13), "gmem_bytes_per_cycle_per_sm": (1, 100),
    "l2_bandwidth_bytes_per_s": (1e11, 5e13),
    "smem_accesses_per_cycle_per_sm": (0.05, 4), "board_power_w": (10, 2000),
    "release_year": (2000, 2030),
    "lanes": (1, 32), "bandwidth_bytes_per_s": (1e8, 1e13), "startup_htod_s": (1e-7, 1e-2),
    "startup_dtoh_s": (1e-7, 1e-2), "lambda_htod": (0.01, 1), "lambda_dtoh": (0.01, 1),
    "cores": (1, 512), "threads": (1, 1024), "cpu_clock_hz": (5e8, 7e9),
    # latency tables: cycles from a 1-cycle issue spacing to a random DRAM access
    **{f: (1, 5000) for f, unit in LATENCY_TABLE_FIELDS.items() if unit == "cycle"},
}
COUNT_UNITS = {"count", "bit", "year", "B"}


def _load(path):
    text = path.read_text(encoding="utf-8")
    return text, json.loads(text)


def _records(entry):
    return entry if isinstance(entry, list) else [entry]


def _all_devices():
    for path in FILES:
        _, doc = _load(path)
        for dev in doc["devices"]:
            yield path.name, doc, dev


def _device(name):
    for _, doc, dev in _all_devices():
        if dev["name"] == name:
            return doc, dev
    raise AssertionError(f"device {name!r} not found")


def _default(dev, field):
    """The value the model uses: the single record, or the list's default record."""
    recs = _records(dev["values"][field])
    if len(recs) == 1:
        return recs[0]["value"]
    (rec,) = [r for r in recs if r.get("default")]
    return rec["value"]


def _values(dev, field):
    return [r["value"] for r in _records(dev["values"].get(field, []))]


def test_there_are_source_files():
    names = {p.name for p in FILES}
    for expected in ("maxwell.json", "kepler.json", "hopper.json", "links-pcie.json",
                     "links-nvlink.json", "links-network.json", "hosts.json"):
        assert expected in names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_file_header_and_layout(path):
    text, doc = _load(path)
    assert set(doc) == {"format", "version", "family", "sources", "devices"}
    assert doc["format"] == "gpumodeler-devices"
    assert doc["version"] == 1
    assert isinstance(doc["family"], str) and doc["family"]
    assert isinstance(doc["sources"], dict) and doc["sources"]
    for key, title in doc["sources"].items():
        assert isinstance(key, str) and key and isinstance(title, str) and title
    assert isinstance(doc["devices"], list) and doc["devices"]
    # keys sorted, 2-space indent, so diffs review well
    assert text == json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_source_is_used(path):
    _, doc = _load(path)
    used = {r.get("source") for dev in doc["devices"] for e in dev["values"].values()
            for r in _records(e)}
    assert set(doc["sources"]) <= used


def test_names_and_aliases_unique_case_insensitively_across_files():
    seen = {}
    for fname, _, dev in _all_devices():
        assert isinstance(dev["name"], str) and dev["name"].strip() == dev["name"] and dev["name"]
        aliases = dev.get("aliases", [])
        assert isinstance(aliases, list)
        for label in [dev["name"], *aliases]:
            key = label.casefold()
            assert key not in seen, f"{label!r} in {fname} clashes with {seen[key]}"
            seen[key] = f"{dev['name']!r} in {fname}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_records_follow_the_format(path):
    _, doc = _load(path)
    for dev in doc["devices"]:
        assert set(dev) <= {"kind", "name", "aliases", "values"}
        assert dev["kind"] in FIELDS
        fields = FIELDS[dev["kind"]]
        assert isinstance(dev["values"], dict)
        for field, entry in dev["values"].items():
            where = f"{path.name}: {dev['name']}: {field}"
            assert field in fields, f"{where}: not a documented {dev['kind']} field"
            recs = _records(entry)
            assert recs, where
            if isinstance(entry, list) and len(entry) > 1:
                defaults = [r for r in recs if r.get("default") is True]
                assert len(defaults) == 1, f"{where}: a list needs exactly one default"
            for rec in recs:
                assert isinstance(rec, dict), where
                assert set(rec) <= RECORD_KEYS, f"{where}: unknown keys {set(rec) - RECORD_KEYS}"
                assert rec["unit"] in UNITS, where
                assert rec["unit"] == fields[field], f"{where}: unit {rec['unit']} != {fields[field]}"
                if "default" in rec:
                    assert isinstance(rec["default"], bool), where
                if "note" in rec:
                    assert isinstance(rec["note"], str) and rec["note"], where
                if "provenance" in rec:
                    assert rec["provenance"] in PROVENANCE, where
                value = rec["value"]
                if value is None:
                    # unknown is the default only of a list whose other records the model
                    # must not use (simulator parameters, unattributed figures)
                    assert "default" not in rec or len(recs) > 1, \
                        f"{where}: an unknown value cannot be the default"
                    continue
                assert rec.get("source") in doc["sources"], f"{where}: source {rec.get('source')!r} not in sources"
                assert isinstance(rec.get("where"), str) and rec["where"].strip(), f"{where}: missing where"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_values_have_plausible_types_and_ranges(path):
    _, doc = _load(path)
    for dev in doc["devices"]:
        for field, entry in dev["values"].items():
            for rec in _records(entry):
                value, unit = rec["value"], rec["unit"]
                where = f"{path.name}: {dev['name']}: {field} = {value!r}"
                if value is None:
                    continue
                if unit == "text":
                    assert isinstance(value, str) and value.strip() == value and value, where
                    continue
                assert isinstance(value, (int, float)) and not isinstance(value, bool), where
                # A unit the GPU does not have is a known 0 (8800 GTX: no FP64 units).
                assert math.isfinite(value) and (value > 0 or (
                    value == 0 and field in ZERO_ALLOWED | CAN_BE_ABSENT)), where
                if unit in COUNT_UNITS:
                    assert isinstance(value, int), f"{where}: a {unit} is an integer"
                lo, hi = RANGES[field]
                assert lo <= value <= hi, f"{where}: outside [{lo}, {hi}]"


def _latency_table_names():
    return {dev["name"] for _, _, dev in _all_devices() if dev["kind"] == "latency_table"}


def test_latency_tables_follow_the_kind_rules():
    """A latency table's name is its key (lower case, no spaces: what a kernel graph and a
    GPU's latency_table field write), it has a readable alias and an architecture, every
    value is in cycles, and every known value cites its source and place."""
    names = _latency_table_names()
    assert DOCUMENT_LATENCY_TABLES <= names
    for fname, doc, dev in _all_devices():
        if dev["kind"] != "latency_table":
            continue
        where = f"{fname}: {dev['name']}"
        assert dev["name"] == dev["name"].lower() and " " not in dev["name"], where
        assert dev.get("aliases"), f"{where}: needs a readable alias"
        assert _default(dev, "architecture"), f"{where}: needs an architecture"
        known = [f for f in dev["values"] if f != "architecture"
                 and any(v is not None for v in _values(dev, f))]
        assert known, f"{where}: a table with no known latency"
        for field, entry in dev["values"].items():
            for rec in _records(entry):
                assert rec["unit"] == LATENCY_TABLE_FIELDS[field], where
                if rec["value"] is not None:
                    assert rec["source"] in doc["sources"] and rec["where"].strip(), where


def test_text_fields_use_known_vocabularies():
    for fname, _, dev in _all_devices():
        for field, allowed in (("link_type", {"pcie", "nvlink", "network", "other"}),
                               ("latency_table", _latency_table_names())):
            for value in _values(dev, field):
                if value is not None:
                    assert value in allowed, f"{fname}: {dev['name']}: {field} = {value!r}"
        for value in _values(dev, "compute_capability"):
            if value is not None:
                major, minor = value.split(".")
                assert major.isdigit() and minor.isdigit(), value


def test_boost_clock_not_below_base_clock():
    for fname, _, dev in _all_devices():
        if dev["kind"] != "gpu" or "base_clock_hz" not in dev["values"] or "boost_clock_hz" not in dev["values"]:
            continue
        base, boost = _default(dev, "base_clock_hz"), _default(dev, "boost_clock_hz")
        if base is not None and boost is not None:
            assert boost >= base, f"{fname}: {dev['name']}"


def test_gpu_records_name_their_model_clock():
    """Every GPU with a known SM clock names where it comes from; vendor GPUs use the boost clock."""
    for fname, doc, dev in _all_devices():
        if dev["kind"] != "gpu":
            continue
        assert "sm_clock_hz" in dev["values"], f"{fname}: {dev['name']}: sm_clock_hz absent (use null)"


# ------------------------------------------------------------- spot checks against the documents

def test_gtx970_is_gajger_table_6_1():
    doc, g = _device("GeForce GTX 970")
    assert _default(g, "sms") == 13
    assert _default(g, "sm_clock_hz") == 1253e6
    assert _default(g, "compute_capability") == "5.2"
    assert _default(g, "warp_size") == 32
    assert _default(g, "schedulers_per_sm") == 4
    assert _default(g, "fp32_cores_per_sm") == 128
    assert _default(g, "memory_clock_hz") == 1753e6
    assert _default(g, "memory_bus_width_bits") == 256
    assert _default(g, "memory_data_rate") == 4
    assert _default(g, "gmem_bytes_per_cycle_per_sm") == 13.78
    assert _default(g, "latency_table") == "maxwell-gajger"
    assert _default(g, "base_clock_hz") == 1050e6
    assert _default(g, "boost_clock_hz") == 1178e6
    # the default SM clock is Gajger's, with the vendor clocks kept alongside
    (rec,) = [r for r in g["values"]["sm_clock_hz"] if r.get("default")]
    assert rec["source"] == "gajger2017" and "Table 6.1" in rec["where"]
    # Fig. 5.20 power under load is kept with its provenance
    assert 168 in _values(g, "board_power_w")
    # eq. 4.7 / 5.2: the tabulated throughput follows from the tabulated memory system
    derived = 1753e6 * 256 / 8 * 4 / (13 * 1253e6)
    assert round(derived, 2) == 13.78


def test_titan_x_maxwell_is_gajger_table_6_1():
    _, g = _device("GeForce GTX TITAN X (Maxwell)")
    assert _default(g, "sms") == 24
    assert _default(g, "sm_clock_hz") == 1076e6
    assert _default(g, "memory_bus_width_bits") == 384
    assert _default(g, "gmem_bytes_per_cycle_per_sm") == 13.03
    assert _default(g, "latency_table") == "maxwell-gajger"
    assert round(1753e6 * 384 / 8 * 4 / (24 * 1076e6), 2) == 13.03


def test_gajger_testbed_links_are_table_6_2():
    _, link = _device("PCIe 3.0 x16 (Gajger GTX 970 testbed)")
    assert _default(link, "bandwidth_bytes_per_s") == 15.8e9
    assert _default(link, "startup_htod_s") == pytest.approx(3.96868e-6, rel=1e-12)
    assert _default(link, "startup_dtoh_s") == pytest.approx(5.15692e-6, rel=1e-12)
    assert _default(link, "lambda_htod") == 0.689
    assert _default(link, "lambda_dtoh") == 0.653
    # Fig. 5.20 keeps its rounded attributes as alternatives
    assert 3.9687e-6 in _values(link, "startup_htod_s")
    assert 5.1569e-6 in _values(link, "startup_dtoh_s")

    _, link = _device("PCIe 2.0 x4 (Gajger GTX TITAN X testbed)")
    assert _default(link, "bandwidth_bytes_per_s") == 2e9
    assert _default(link, "startup_htod_s") == pytest.approx(7.3276e-6, rel=1e-12)
    assert _default(link, "startup_dtoh_s") == pytest.approx(11.67905e-6, rel=1e-12)
    assert _default(link, "lambda_htod") == 0.8435
    assert _default(link, "lambda_dtoh") == 0.8421


@pytest.mark.parametrize("gen,lanes,gbs", [
    ("1.0", 1, 0.25), ("1.0", 16, 4), ("2.0", 4, 2), ("2.0", 16, 8),
    ("3.0", 1, 0.985), ("3.0", 4, 3.94), ("3.0", 8, 7.9), ("3.0", 16, 15.8),
])
def test_generic_pcie_links_are_gajger_table_4_3(gen, lanes, gbs):
    _, link = _device(f"PCIe {gen} x{lanes}")
    assert _default(link, "bandwidth_bytes_per_s") == pytest.approx(gbs * 1e9)
    assert _default(link, "lanes") == lanes
    for field in ("lambda_htod", "lambda_dtoh"):
        assert _values(link, field) == [None]
    # startup times (none blanks transfers): Gajger's measurement on this kind of link, or that
    # measurement taken as a visible assumption (source assumed-..., note says so)
    for field, measured in (("startup_htod_s", (3.96868e-6, 7.3276e-6)),
                            ("startup_dtoh_s", (5.15692e-6, 11.67905e-6))):
        (rec,) = _records(link["values"][field])
        assert rec["value"] in measured
        if (gen, lanes) in (("3.0", 16), ("2.0", 4)):
            assert rec["source"] == "measured-gajger2017"
        else:
            assert rec["source"] == "assumed-gajger2017" and rec["note"].startswith("ASSUMPTION")


def test_nvlink_startup_times_are_labelled_assumptions():
    for gen in ("1.0", "2.0", "3.0", "4.0", "5.0"):
        _, link = _device(f"NVLink {gen} (one link)")
        for field in ("startup_htod_s", "startup_dtoh_s"):
            (rec,) = _records(link["values"][field])
            assert rec["source"] == "assumed-gajger2017" and "ASSUMPTION" in rec["note"]
            assert rec["value"] > 0


@pytest.mark.parametrize("gen,gts,frac", [("4.0", 16, 128 / 130), ("5.0", 32, 128 / 130), ("6.0", 64, 242 / 256)])
def test_newer_pcie_links_follow_the_line_encoding(gen, gts, frac):
    for lanes in (1, 4, 8, 16):
        _, link = _device(f"PCIe {gen} x{lanes}")
        assert _default(link, "bandwidth_bytes_per_s") == pytest.approx(gts * 1e9 * frac / 8 * lanes)


def test_nvlink_bandwidth_is_per_direction():
    expected = {"1.0": 80e9, "2.0": 150e9, "3.0": 300e9, "4.0": 450e9, "5.0": 900e9}
    found = {}
    for _, _, dev in _all_devices():
        if dev["kind"] == "link" and _default(dev, "link_type") == "nvlink" and "links)" in dev["name"]:
            found[_default(dev, "generation")] = _default(dev, "bandwidth_bytes_per_s")
    assert found == expected


@pytest.mark.parametrize("name,sms,sched,cores,sfu,clock,pin,peak,issue,smem,table", [
    ("GeForce 8800 GTX", 16, 1, 8, 2, 1.35e9, 86.4e9, 74e9, 0.5, 0.1875, "g80-volkov"),
    ("GeForce GTX 280", 30, 1, 8, 2, 1.296e9, 141.7e9, 138e9, 0.5, 0.25, "gt200-volkov"),
    ("GeForce GTX 480", 15, 2, 32, 4, 1.4e9, 177.4e9, 161e9, 0.5, 0.5, "fermi-volkov"),
    ("GeForce GTX 680", 8, 4, 192, 32, 1.124e9, 192.3e9, 154e9, 1, 1, "kepler-volkov"),
    ("GeForce GTX 980", 16, 4, 128, 32, 1.266e9, 224e9, 211e9, 1, 1, "maxwell-volkov"),
])
def test_volkov_gpus(name, sms, sched, cores, sfu, clock, pin, peak, issue, smem, table):
    _, g = _device(name)
    assert _default(g, "sms") == sms
    assert _default(g, "schedulers_per_sm") == sched
    assert _default(g, "fp32_cores_per_sm") == cores
    assert _default(g, "sfu_per_sm") == sfu
    assert _default(g, "sm_clock_hz") == pytest.approx(clock)
    assert pin in _values(g, "memory_bandwidth_theoretical_bytes_per_s")
    assert _default(g, "memory_bandwidth_measured_bytes_per_s") == peak
    assert _default(g, "issue_per_scheduler_per_cycle") == issue
    assert _default(g, "smem_accesses_per_cycle_per_sm") == smem
    assert _default(g, "latency_table") == table


def test_tesla_k40_documents():
    _, g = _device("Tesla K40")
    assert _default(g, "sm_clock_hz") == 745e6
    assert _default(g, "sms") == 15
    assert _default(g, "l2_bytes") == 1572864
    assert _default(g, "memory_bandwidth_measured_bytes_per_s") == 183.5e9
    assert 276.5e9 in _values(g, "memory_bandwidth_theoretical_bytes_per_s")


def test_vendor_gpus_use_boost_clock_as_model_clock():
    for name in ("Tesla V100 SXM2 16 GB", "A100 SXM4 40 GB", "GeForce RTX 3090", "GeForce RTX 4090",
                 "GeForce RTX 5090", "Tesla P100 SXM2", "GeForce RTX 2080 Ti"):
        _, g = _device(name)
        assert _default(g, "sm_clock_hz") == _default(g, "boost_clock_hz"), name


def test_required_lineup_present():
    names = {dev["name"] for _, _, dev in _all_devices()}
    for required in ("Tesla V100 SXM2 16 GB", "Tesla V100 PCIe 16 GB", "A100 SXM4 40 GB", "A100 SXM4 80 GB",
                     "A100 PCIe 40 GB", "H100 SXM5 80 GB", "H100 PCIe 80 GB", "H200 SXM 141 GB",
                     "NVIDIA L40S", "GeForce RTX 3090", "GeForce RTX 4090", "GeForce RTX 5090",
                     "B200 (HGX/DGX)", "Gajger GTX 970 testbed host"):
        assert required in names


def test_gajger_host():
    _, h = _device("Gajger GTX 970 testbed host")
    assert _default(h, "cpu") == "Intel Core i7-4790K"
    assert _default(h, "cpu_clock_hz") == 4.4e9
    assert _default(h, "memory_size_bytes") == 16 * 2**30
    assert _default(h, "memory_type") == "DDR3-2400"
    assert _default(h, "pcie_generation") == "3.1"
