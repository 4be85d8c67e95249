"""The L2 bandwidth of devices.db (the throughput worksheet's l2 row): TITAN V's measured
figure with its log line, the other Volta-and-later GPUs a labelled assumption scaled from it
by SMs and SM clock, GPUs before Volta unknown (docs/device-sources.md)."""
import pytest

pytestmark = pytest.mark.usefixtures("gpumodeler_env")  # the built devices.db


def _records(name: str, field: str = "l2_bandwidth_bytes_per_s"):
    from gpumodeler.db.catalog import Catalog
    with Catalog() as catalog:
        return [r for r in catalog.get(name).values.get(field, ()) if r.known]


def _value(name: str, field: str):
    (r,) = [r for r in _records(name, field) if r.is_default] or _records(name, field)[:1]
    return r.value


def test_titan_v_l2_bandwidth_is_the_microbenchmark_log_figure():
    (r,) = _records("NVIDIA TITAN V")
    assert r.value == 1526.33e9 and r.provenance == "measurement"
    assert "1526.33(GB/s)" in r.where and "l2_bw_128" in r.where


@pytest.mark.parametrize("name", ["A100 SXM4 40 GB", "H100 SXM5 80 GB", "Tesla V100 SXM2 16 GB",
                                  "GeForce RTX 4090", "Tesla T4"])
def test_later_gpus_scale_titan_vs_bytes_per_sm_per_clock_as_a_labelled_assumption(name):
    (r,) = _records(name)
    assert r.source.startswith("assumed-") and r.note.startswith("ASSUMPTION")
    per_sm_clock = 1526.33e9 / (80 * 1455e6)
    expected = per_sm_clock * _value(name, "sms") * _value(name, "sm_clock_hz")
    assert r.value == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("name", ["Tesla K40", "GeForce GTX 980", "Tesla P100 SXM2"])
def test_gpus_before_volta_have_no_l2_bandwidth(name):
    assert _records(name) == []
