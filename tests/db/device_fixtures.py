"""Device source data of our own for the tests (never the data in resources/devices, which
other work fills), and helpers. Imported by conftest.py and the tests of tests/db."""
import copy
import hashlib
import json


GPUS = {
    "format": "gpumodeler-devices",
    "version": 1,
    "family": "Maxwell",
    "sources": {
        "gajger2017": "T. Gajger, Modeling parallel processing with GPU, MSc thesis, 2017",
        "nvidia-gtx970-spec": "NVIDIA GeForce GTX 970 product specifications",
        "volkov2016": "V. Volkov, Understanding Latency Hiding on GPUs, PhD thesis, 2016",
    },
    "devices": [
        {
            "kind": "gpu",
            "name": "GeForce GTX 970",
            "aliases": ["GTX 970", "gm204-970"],
            "values": {
                "vendor": {"value": "NVIDIA", "unit": "text", "source": "nvidia-gtx970-spec",
                           "where": "overview"},
                "architecture": {"value": "Maxwell", "unit": "text", "source": "gajger2017",
                                 "where": "Table 6.1"},
                "compute_capability": {"value": "5.2", "unit": "text",
                                       "source": "gajger2017", "where": "Table 6.1"},
                "sms": {"value": 13, "unit": "count", "source": "gajger2017",
                        "where": "Table 6.1"},
                "sm_clock_hz": [
                    {"value": 1253000000, "unit": "Hz", "source": "gajger2017",
                     "where": "Table 6.1", "default": True,
                     "note": "clock observed under load, used by the model"},
                    {"value": 1178000000, "unit": "Hz", "source": "nvidia-gtx970-spec",
                     "where": "boost clock"},
                ],
                "fp32_cores_per_sm": {"value": 128, "unit": "count", "source": "gajger2017",
                                      "where": "Table 6.1"},
                "schedulers_per_sm": {"value": 4, "unit": "count", "source": "volkov2016",
                                      "where": "Table 2.8"},
                "gmem_bytes_per_cycle_per_sm": {"value": 11.5, "unit": "B/cycle",
                                                "source": "gajger2017", "where": "Table 6.1"},
                "smem_accesses_per_cycle_per_sm": {"value": 1.0, "unit": "1/cycle",
                                                   "source": "volkov2016",
                                                   "where": "Table 6.1"},
                "board_power_w": {"value": None, "unit": "W"},
            },
        },
        {
            "kind": "gpu",
            "name": "GeForce GTX 980",
            "aliases": ["GTX 980"],
            "values": {
                "architecture": {"value": "Maxwell", "unit": "text", "source": "volkov2016",
                                 "where": "Table 1.1"},
                "compute_capability": {"value": "5.2", "unit": "text",
                                       "source": "volkov2016", "where": "Table 1.1"},
                "sms": {"value": 16, "unit": "count", "source": "volkov2016",
                        "where": "Table 1.1"},
            },
        },
        {
            "kind": "gpu",
            "name": "Tesla K20",
            "aliases": [],
            "values": {
                "architecture": {"value": "Kepler", "unit": "text", "source": "volkov2016",
                                 "where": "Table 1.1"},
                "compute_capability": {"value": "3.5", "unit": "text",
                                       "source": "volkov2016", "where": "Table 1.1"},
            },
        },
    ],
}

LINKS = {
    "format": "gpumodeler-devices",
    "version": 1,
    "family": "PCIe",
    "sources": {"gajger2017": GPUS["sources"]["gajger2017"]},
    "devices": [
        {
            "kind": "link",
            "name": "PCIe 3.0 x16",
            "aliases": ["pcie3"],
            "values": {
                "link_type": {"value": "pcie", "unit": "text", "source": "gajger2017",
                              "where": "Table 4.3"},
                "bandwidth_bytes_per_s": {"value": 15.754e9, "unit": "B/s",
                                          "source": "gajger2017", "where": "Table 4.3"},
                "startup_htod_s": {"value": 1.2e-5, "unit": "s", "source": "gajger2017",
                                   "where": "Table 5.3"},
                "lambda_htod": {"value": None, "unit": "ratio"},
            },
        },
        {
            "kind": "host",
            "name": "Lab workstation",
            "aliases": [],
            "values": {"cores": {"value": 8, "unit": "count", "source": "gajger2017",
                                 "where": "§6.1"}},
        },
    ],
}

SOURCE_FILES = {"maxwell.json": GPUS, "links.json": LINKS}


def write_source_dir(path, files=None):
    path.mkdir(parents=True, exist_ok=True)
    for name, data in (files or SOURCE_FILES).items():
        text = data if isinstance(data, str) else json.dumps(data, indent=2, sort_keys=True)
        (path / name).write_text(text, encoding="utf-8")
    return path


def source_files():
    """A deep copy of the fixture files, to mutate in a test."""
    return copy.deepcopy(SOURCE_FILES)


def file_hash(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_database(path, devices, sources):
    """A new device database at ``path`` holding ``devices`` (RawDevice) and ``sources``."""
    from gpumodeler.db.schema import create_database
    from gpumodeler.db.store import write_device, write_sources
    db = create_database(path)
    with db.atomic():
        write_sources(db, sources)
        for device in devices:
            write_device(db, device)
    db.close()
