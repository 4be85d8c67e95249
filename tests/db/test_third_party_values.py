"""Modern GPU values no NVIDIA document at hand states, filled from third-party figures
(modern GPUs: every modern GPU evaluates an imported graph with no hand-set value).

Each one is graded ``secondary`` (docs/device-sources.md: a third-party figure, never a
measurement or a vendor value), cites the page it was read in with its URL and the line
quoted in ``where``, and a derived value names its inputs. The values no trustworthy source
gives stay unknown with the reason in their note, so the model asks for them."""
import math
import re

import pytest

pytestmark = pytest.mark.usefixtures("gpumodeler_env")  # the built devices.db

#: (GPU, field, value, source key): the values filled from third-party figures.
FILLED = [
    ("B200 (HGX/DGX)", "sms", 148, "chipsandcheese-b200"),
    ("B200 (HGX/DGX)", "sm_clock_hz", 1_980_000_000, "zdszero-hardware-notes"),
    ("H200 SXM 141 GB", "sms", 132, "achatbot-device-log"),
    ("H200 SXM 141 GB", "sm_clock_hz", 1_980_000_000, "awslabs-eks-ami-pr1985"),
    ("NVIDIA L4", "sms", 58, "coe506-devicequery"),
    ("Tesla T4", "l2_bytes", 4 * 2**20, "devicequery-public"),
    ("NVIDIA TITAN RTX", "l2_bytes", 6 * 2**20, "devicequery-public"),
    ("GeForce RTX 2070", "l2_bytes", 4 * 2**20, "devicequery-public"),
    ("GeForce RTX 2060", "l2_bytes", 3 * 2**20, "devicequery-public"),
    ("GeForce RTX 3070", "l2_bytes", 4 * 2**20, "devicequery-public"),
    ("GeForce RTX 3080", "l2_bytes", 5 * 2**20, "devicequery-public"),
    ("GeForce RTX 3060", "l2_bytes", 9 * 2**18, "devicequery-public"),
    ("NVIDIA TITAN V", "l2_bytes", 9 * 2**19, "devicequery-public"),
    ("H200 SXM 141 GB", "l2_bytes", 60 * 2**20, "thamada-devicequery"),
    ("NVIDIA A10", "l2_bytes", 6 * 2**20, "thamada-devicequery"),
    ("NVIDIA RTX A6000", "l2_bytes", 6 * 2**20, "thamada-devicequery"),
    ("NVIDIA L4", "l2_bytes", 48 * 2**20, "thamada-devicequery"),
    ("NVIDIA L40S", "l2_bytes", 96 * 2**20, "thamada-devicequery"),
]

#: (GPU, field): values left unknown because no trustworthy source gives them.
UNKNOWN = [
    ("B200 (HGX/DGX)", "int32_fp32_shared_lanes_per_sm"),
    ("B200 (HGX/DGX)", "fp16_results_per_cycle_per_sm"),
    ("GeForce RTX 5090", "fp16_results_per_cycle_per_sm"),
    ("H800 PCIe 80 GB", "sms"),
    ("H800 PCIe 80 GB", "memory_bandwidth_theoretical_bytes_per_s"),
    ("H800 PCIe 80 GB", "fp16_results_per_cycle_per_sm"),
    ("H800 PCIe 80 GB", "l2_bytes"),
]


def _device(name):
    from gpumodeler.db.catalog import Catalog
    with Catalog() as catalog:
        return catalog.get(name)


@pytest.mark.parametrize("name, field, value, source", FILLED,
                         ids=[f"{n}-{f}" for n, f, _, _ in FILLED])
def test_third_party_value_is_graded_secondary_and_cites_its_page(name, field, value, source):
    device = _device(name)
    record = device.default_record(field)
    assert record is not None and record.value == value, (name, field, record)
    assert record.source == source and record.provenance == "secondary"
    assert re.search(r"https?://\S+", device.sources[source]), device.sources[source]
    assert record.where and record.note
    assert record.note.startswith(("secondary", "derived")), record.note
    # every other record of the field (corroborating readings) is third-party too
    for other in device.values[field]:
        assert other.provenance == "secondary" and other.value == value, other


def test_b200_sm_count_has_three_independent_third_party_readings():
    device = _device("B200 (HGX/DGX)")
    sources = {r.source for r in device.values["sms"]}
    assert sources == {"chipsandcheese-b200", "pytorch-ao-pr4002", "achatbot-device-log"}
    assert all("148" in r.where for r in device.values["sms"])


def test_b200_clock_is_the_clock_its_fp32_figure_implies():
    """sm_clock = FP32 FLOP/s / (2 × FP32 cores per SM × SMs), to the 3 significant digits
    of the note; the inputs are this device's own records."""
    device = _device("B200 (HGX/DGX)")
    clock = device.default_record("sm_clock_hz")
    tflops = float(re.search(r"FP32 ([\d.]+) TFLOPS", clock.where).group(1))
    cores = device.default_record("fp32_cores_per_sm").value
    sms = device.default_record("sms").value
    implied = tflops * 1e12 / (2 * cores * sms)
    assert clock.value == float(f"{implied:.3g}"), (implied, clock.value)
    for named in ("fp32_cores_per_sm", "sms", "128", "148", "75 TFLOPS"):
        assert named in clock.note, named
    # the disagreeing figures are named, with where they were read
    assert "80 TFLOPS" in clock.note and "1965 MHz" in clock.note


def test_h200_clock_is_its_boost_clock_from_the_same_log():
    device = _device("H200 SXM 141 GB")
    sm, boost = device.default_record("sm_clock_hz"), device.default_record("boost_clock_hz")
    assert sm.value == boost.value == 1_980_000_000
    assert sm.source == boost.source and "1980 MHz" in sm.where


def test_l4_sm_count_matches_the_core_count_of_the_same_query():
    record = _device("NVIDIA L4").default_record("sms")
    multiprocessors, per_mp, cores = map(int, re.search(
        r"\((\d+)\) Multiprocessors, \((\d+)\) CUDA Cores/MP: (\d+) CUDA Cores",
        record.where).groups())
    assert multiprocessors == record.value and multiprocessors * per_mp == cores


#: The L2 sizes read from public device queries (deviceQuery, nvbench, cudaGetDeviceProperties).
L2_QUERIED = [(n, v) for n, f, v, _ in FILLED if f == "l2_bytes"]

#: The board's name as the runtime prints it, where the database names it otherwise.
_PRINTED_NAME = {"H200 SXM 141 GB": "H200"}

#: How each printout states the size: deviceQuery in bytes, the others in units of 1024 B.
_L2_LINE = re.compile(r"L2 [Cc]ache [Ss]ize(?::| \|) (\d+) (bytes|KiB|KB)\b")


@pytest.mark.parametrize("name, value", L2_QUERIED, ids=[n for n, _ in L2_QUERIED])
def test_l2_size_is_the_quoted_device_query_line_of_the_same_board(name, value):
    """Every record quotes the printed L2 line, converted to bytes it is the value, and the
    query names the board (a laptop, Ti or SUPER variant is another GPU) with this database's
    SM count, so a reading of another board cannot slip in."""
    device = _device(name)
    sms = device.default_record("sms").value
    board = _PRINTED_NAME.get(name, name.removeprefix("NVIDIA ").removeprefix("GeForce "))
    for record in device.values["l2_bytes"]:
        number, unit = _L2_LINE.search(record.where).groups()
        assert int(number) * (1 if unit == "bytes" else 1024) == record.value, record.where
        assert re.search(rf"\b{re.escape(board)}[\"`']", record.where), (board, record.where)
        assert re.search(rf"\(0?{sms}\) Multiprocessors|\b{sms} multiprocessors|"
                         rf"Number of SMs: {sms}|Multiprocessors \| {sms}\b",
                         record.where), (sms, record.where)
        head = record.where.split(":")[0]  # "owner/repo, path" or "owner/repo/path"
        if ", " in head:
            repository, path = head.split(", ")
        else:
            owner, repo, path = head.split("/", 2)
            repository = f"{owner}/{repo}"
        assert f"https://github.com/{repository}/blob/" in device.sources[record.source]
        assert path in device.sources[record.source]


@pytest.mark.parametrize("name, field", UNKNOWN, ids=[f"{n}-{f}" for n, f in UNKNOWN])
def test_value_no_trustworthy_source_gives_stays_unknown_and_says_why(name, field):
    records = _device(name).values[field]
    assert len(records) == 1 and not records[0].known, records
    assert records[0].note.startswith("unknown:") and len(records[0].note) > 80


def test_b200_memory_rate_per_sm_and_cycle_follows_from_the_filled_values():
    """The global-memory bytes per cycle of eq. 4.7 now follow from the filled SM count and
    clock (B200: 8 TB/s / (148 × 1.98 GHz))."""
    from gpumodeler.db.mapping import record_to_gpu_spec
    gpu = record_to_gpu_spec(_device("B200 (HGX/DGX)"))
    assert math.isclose(gpu.gmem_bandwidth_bytes_per_cycle_per_sm(),
                        8e12 / (148 * 1.98e9), rel_tol=1e-12)
