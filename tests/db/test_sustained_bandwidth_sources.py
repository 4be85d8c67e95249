"""Sustained DRAM bandwidth per GPU (``memory_bandwidth_measured_bytes_per_s``): a published
measurement where one exists, else the one labelled assumption (a fraction of the pin
bandwidth stated in docs/device-sources.md); never above the pin bandwidth; used by the
default model's memory row (core.models.throughput.dram_bandwidth_choice)."""
import json
import statistics
from pathlib import Path

import pytest

from gpumodeler.core.models.throughput import DRAM_GIVEN, DRAM_SUSTAINED, dram_bandwidth_choice
from gpumodeler.db.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "devices.db"
FIELD, PIN = "memory_bandwidth_measured_bytes_per_s", "memory_bandwidth_theoretical_bytes_per_s"
#: The assumption for a GPU nobody published a sustained figure of: this fraction of its pin
#: bandwidth, the median sustained/pin ratio of the GPUs that have one (rounded to 3 places).
ASSUMED_FRACTION = 0.85
ASSUMED_SOURCE = "assumed-sustained-fraction"
MEASURED_PROVENANCES = {"measurement", "published-measurement"}
#: GPUs whose memory row uses Gajger's own per-cycle figure (Table 6.1), as his examples do.
GAJGER_PER_CYCLE = {"GeForce GTX 970", "GeForce GTX TITAN X (Maxwell)"}


def _default(entry):
    recs = entry if isinstance(entry, list) else [entry]
    return recs[0] if len(recs) == 1 else next(r for r in recs if r.get("default"))


def _gpus():
    for path in sorted((ROOT / "resources" / "devices").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for dev in doc["devices"]:
            if dev["kind"] == "gpu":
                yield doc, dev


def _sustained():
    """(name, sustained record, pin B/s or None) for every GPU with a sustained figure."""
    out = []
    for _, dev in _gpus():
        v = dev["values"]
        if FIELD in v:
            pin = _default(v[PIN])["value"] if PIN in v else None
            out.append((dev["name"], _default(v[FIELD]), pin))
    return out


def _measured(rec):
    return rec.get("provenance") in MEASURED_PROVENANCES or rec["source"].startswith("measured-")


def test_sustained_is_at_most_the_pin_bandwidth_for_every_gpu():
    rows = _sustained()
    assert len(rows) >= 35
    for name, rec, pin in rows:
        assert pin is not None, f"{name}: a sustained figure needs the pin bandwidth as its ceiling"
        assert 0 < rec["value"] <= pin, (name, rec["value"], pin)
        assert rec["source"] and rec["where"], name


def test_every_gpu_with_a_pin_bandwidth_has_a_sustained_figure():
    missing = [dev["name"] for _, dev in _gpus() if PIN in dev["values"]
               and _default(dev["values"][PIN])["value"] is not None
               and FIELD not in dev["values"] and dev["name"] not in GAJGER_PER_CYCLE]
    assert not missing, missing
    for _, dev in _gpus():
        if dev["name"] in GAJGER_PER_CYCLE:
            assert "gmem_bytes_per_cycle_per_sm" in dev["values"], dev["name"]


def test_each_figure_is_a_published_measurement_or_the_labelled_assumption():
    for name, rec, pin in _sustained():
        if _measured(rec):
            continue
        assert rec["source"] == ASSUMED_SOURCE, (name, rec["source"])
        assert rec["note"].startswith("ASSUMPTION"), name
        assert rec["value"] == round(pin * ASSUMED_FRACTION), name
        assert f"{ASSUMED_FRACTION} ×" in rec["where"], name


def test_the_assumed_fraction_is_the_median_of_the_measured_ratios():
    ratios = [rec["value"] / pin for _, rec, pin in _sustained() if _measured(rec)]
    assert len(ratios) == 12  # the notes say "the twelve GPUs"
    assert round(statistics.median(ratios), 3) == ASSUMED_FRACTION
    assert min(ratios) > 0.6 and max(ratios) < 1


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    with Catalog(user_db=tmp_path_factory.mktemp("u") / "user.db", shipped_db=SHIPPED) as c:
        yield c


@pytest.mark.parametrize("name, sustained, source", [
    ("GeForce GTX 680", 154e9, "measured-volkov2016"),
    ("NVIDIA TITAN V", 521.04592e9, "accelsim-ubench-titanv"),
    ("A100 SXM4 40 GB", 1310.72e9, "pc2-gpuinspector"),
    ("H100 SXM5 80 GB", 2.90e12, "azure-ai-benchmarking-guide"),
    ("H100 PCIe 80 GB", round(2000e9 * ASSUMED_FRACTION), ASSUMED_SOURCE),
])
def test_the_shipped_database_feeds_the_memory_row_the_sustained_figure(catalog, name, sustained,
                                                                       source):
    device = catalog.get(name)
    assert device.default_record(FIELD).source == source
    gpu = device.to_gpu_spec()
    per_cycle, kind = dram_bandwidth_choice(gpu)
    assert kind == DRAM_SUSTAINED
    assert per_cycle * gpu.sms * gpu.sm_clock_hz == pytest.approx(sustained)


def test_gajgers_testbeds_keep_his_per_cycle_figure(catalog):
    for name in sorted(GAJGER_PER_CYCLE):
        assert dram_bandwidth_choice(catalog.get(name).to_gpu_spec())[1] == DRAM_GIVEN
