"""Building the shipped device database from source files: validation and determinism."""
import sqlite3
from pathlib import Path

import pytest

from device_fixtures import file_hash, source_files, write_source_dir
from gpumodeler.db import build_devices
from gpumodeler.db.build_devices import build, load_sources
from gpumodeler.db.errors import SourceFormatError

REPO = Path(__file__).resolve().parents[2]


def test_same_sources_give_a_byte_identical_file(tmp_path):
    src = write_source_dir(tmp_path / "src")
    build(src, tmp_path / "a.db")
    build(src, tmp_path / "b.db")
    assert (tmp_path / "a.db").read_bytes() == (tmp_path / "b.db").read_bytes()


def test_built_values_keep_their_sqlite_types_units_and_provenance(shipped_db):
    conn = sqlite3.connect(shipped_db)
    rows = {(f, typeof): (v, unit, prov) for f, v, typeof, unit, prov in conn.execute(
        "SELECT field, value, typeof(value), unit, provenance FROM device_values "
        "JOIN devices ON devices.id = device_id WHERE devices.name = 'GeForce GTX 970'")}
    conn.close()
    assert rows[("sms", "integer")] == (13, "count", "document")
    assert rows[("gmem_bytes_per_cycle_per_sm", "real")] == (11.5, "B/cycle", "document")
    assert rows[("compute_capability", "text")] == ("5.2", "text", "document")
    assert rows[("board_power_w", "null")] == (None, "W", None)
    assert rows[("vendor", "text")][2] == "vendor"  # nvidia- prefix


def test_devices_get_ids_in_file_name_then_file_order(shipped_db):
    conn = sqlite3.connect(shipped_db)
    names = [r[0] for r in conn.execute("SELECT name FROM devices ORDER BY id")]
    conn.close()
    # links.json sorts before maxwell.json
    assert names == ["PCIe 3.0 x16", "Lab workstation", "GeForce GTX 970", "GeForce GTX 980",
                     "Tesla K20"]


def test_explicit_provenance_overrides_the_prefix_rule(tmp_path):
    files = source_files()
    sms = files["maxwell.json"]["devices"][0]["values"]["sms"]
    sms["provenance"] = "measurement"
    files["maxwell.json"]["sources"]["measured-lab"] = "our bench"
    files["maxwell.json"]["devices"][1]["values"]["sms"]["source"] = "measured-lab"
    loaded = load_sources(write_source_dir(tmp_path / "src", files))
    gpus = {d.name: d for d in loaded[1].devices}
    assert gpus["GeForce GTX 970"].values["sms"][0][4] == "measurement"
    assert gpus["GeForce GTX 980"].values["sms"][0][4] == "measurement"


def _gtx970(files):
    return files["maxwell.json"]["devices"][0]


def _break(files, how):
    dev = _gtx970(files)
    values = dev["values"]
    if how == "unknown field":
        values["sm_clock"] = {"value": 1, "unit": "Hz", "source": "gajger2017", "where": "x"}
    elif how == "wrong unit":
        values["sms"]["unit"] = "Hz"
    elif how == "unknown unit":
        values["sms"]["unit"] = "MHz"
    elif how == "missing source":
        del values["sms"]["source"]
    elif how == "missing where":
        del values["sms"]["where"]
    elif how == "source not listed":
        values["sms"]["source"] = "nobody2020"
    elif how == "no default":
        values["sm_clock_hz"][0].pop("default")
    elif how == "two defaults":
        values["sm_clock_hz"][1]["default"] = True
    elif how == "text in a number":
        values["sms"]["value"] = "13"
    elif how == "number in text":
        values["architecture"]["value"] = 5
    elif how == "bool value":
        values["sms"]["value"] = True
    elif how == "unknown record key":
        values["sms"]["table"] = "6.1"
    elif how == "bad provenance":
        values["sms"]["provenance"] = "rumour"
    elif how == "bad kind":
        dev["kind"] = "cpu"
    elif how == "unknown device key":
        dev["notes"] = "x"
    elif how == "alias names another device":
        dev["aliases"].append("GeForce GTX 980")
    elif how == "duplicate name":
        files["links.json"]["devices"][1]["name"] = "geforce gtx 970"
    elif how == "citation differs":
        files["links.json"]["sources"]["gajger2017"] = "someone else"
    return files


CASES = {
    "unknown field": ("GeForce GTX 970", "sm_clock", "unknown field"),
    "wrong unit": ("GeForce GTX 970", "sms", "unit must be 'count'"),
    "unknown unit": ("GeForce GTX 970", "sms", "unknown unit 'MHz'"),
    "missing source": ("GeForce GTX 970", "sms", "needs both 'source' and 'where'"),
    "missing where": ("GeForce GTX 970", "sms", "needs both 'source' and 'where'"),
    "source not listed": ("GeForce GTX 970", "sms", "'nobody2020' is not in the file's"),
    "no default": ("GeForce GTX 970", "sm_clock_hz", "exactly one"),
    "two defaults": ("GeForce GTX 970", "sm_clock_hz", "found 2"),
    "text in a number": ("GeForce GTX 970", "sms", "needs a number"),
    "number in text": ("GeForce GTX 970", "architecture", "needs a string"),
    "bool value": ("GeForce GTX 970", "sms", "needs a number"),
    "unknown record key": ("GeForce GTX 970", "sms", "unknown key(s) table"),
    "bad provenance": ("GeForce GTX 970", "sms", "provenance must be one of"),
    "bad kind": ("GeForce GTX 970", None, "'kind' must be one of"),
    "unknown device key": ("GeForce GTX 970", None, "unknown key(s) notes"),
    "alias names another device": ("GeForce GTX 970", None, "alias 'GeForce GTX 980'"),
    "duplicate name": ("GeForce GTX 970", None, "name already used in"),
    "citation differs": (None, None, "source 'gajger2017': cited differently"),
}


@pytest.mark.parametrize("how", sorted(CASES))
def test_a_format_violation_names_file_device_and_field(tmp_path, how):
    device, field, message = CASES[how]
    src = write_source_dir(tmp_path / "src", _break(source_files(), how))
    with pytest.raises(SourceFormatError) as info:
        load_sources(src)
    text = "\n".join(info.value.errors)
    assert message in text
    assert ".json" in text
    if device:
        assert f"device '{device}'" in text
    if field:
        assert f"field '{field}'" in text


def test_invalid_json_reports_line_and_duplicate_keys(tmp_path):
    src = write_source_dir(tmp_path / "src", {
        "a.json": '{\n  "format": "gpumodeler-devices",\n  "version": 1,,\n}',
        "b.json": '{"format": "gpumodeler-devices", "format": "x"}',
        "c.json": '{"format": "gpumodeler-devices", "version": 1, "devices": [{"kind": "gpu",'
                  ' "name": "X", "values": {"sms": {"value": NaN, "unit": "count"}}}]}',
    })
    with pytest.raises(SourceFormatError) as info:
        load_sources(src)
    errors = info.value.errors
    assert any("a.json:3:" in e and "invalid JSON" in e for e in errors)
    assert any("b.json" in e and "duplicate key 'format'" in e for e in errors)
    assert any("c.json" in e and "NaN" in e for e in errors)


def test_wrong_format_or_version_and_empty_dir(tmp_path):
    files = source_files()
    files["maxwell.json"]["version"] = 2
    files["links.json"]["format"] = "something"
    with pytest.raises(SourceFormatError) as info:
        load_sources(write_source_dir(tmp_path / "src", files))
    text = "\n".join(info.value.errors)
    assert "'version' 2 is not supported" in text and "'format' must be" in text
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceFormatError, match="no \\*.json"):
        load_sources(tmp_path / "empty")


def test_a_failed_build_leaves_the_previous_database_intact(tmp_path, capsys):
    out = tmp_path / "devices.db"
    build(write_source_dir(tmp_path / "good"), out)
    before = file_hash(out)
    bad = write_source_dir(tmp_path / "bad", _break(source_files(), "wrong unit"))
    assert build_devices.main([str(bad), str(out)]) == 2
    err = capsys.readouterr().err
    assert "field 'sms': unit must be 'count'" in err and "not written" in err
    assert file_hash(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "devices.db", "good"]


def test_main_builds(tmp_path, capsys):
    src = write_source_dir(tmp_path / "src")
    assert build_devices.main([str(src), str(tmp_path / "x.db")]) == 0
    assert "5 devices" in capsys.readouterr().out


# Header bytes 92-99 record which SQLite library wrote the file, not its content.
_SQLITE_LIBRARY_BYTES = slice(92, 100)


def _without_library_stamp(data: bytes) -> bytes:
    return data[:_SQLITE_LIBRARY_BYTES.start] + data[_SQLITE_LIBRARY_BYTES.stop:]


def test_committed_devices_db_matches_a_fresh_build(tmp_path):
    src = REPO / "resources" / "devices"
    if not src.is_dir() or not any(src.glob("*.json")):
        pytest.skip("resources/devices has no source files yet, so there is no devices.db "
                    "to check")
    committed = REPO / "devices.db"
    assert committed.exists(), "devices.db is missing: run `make devices-db` and commit it"
    fresh = tmp_path / "devices.db"
    build(src, fresh)
    assert _without_library_stamp(committed.read_bytes()) == \
        _without_library_stamp(fresh.read_bytes()), \
        "devices.db is stale: run `make devices-db` and commit it"
