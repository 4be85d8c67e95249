"""`gpumodeler devices ...` through gpumodeler.cli.main.main, on fixture databases of our own."""
import hashlib
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.db.build_devices import build

REPO = Path(__file__).resolve().parents[2]

FIXTURE = {
    "format": "gpumodeler-devices",
    "version": 1,
    "family": "Maxwell",
    "sources": {
        "gajger2017": "T. Gajger, Modeling parallel processing with GPU, MSc thesis, 2017",
        "nvidia-gtx970-spec": "NVIDIA GeForce GTX 970 product specifications",
    },
    "devices": [
        {"kind": "gpu", "name": "GeForce GTX 970", "aliases": ["GTX 970"], "values": {
            "architecture": {"value": "Maxwell", "unit": "text", "source": "gajger2017",
                             "where": "Table 6.1"},
            "compute_capability": {"value": "5.2", "unit": "text", "source": "gajger2017",
                                   "where": "Table 6.1"},
            "sms": {"value": 13, "unit": "count", "source": "gajger2017",
                    "where": "Table 6.1"},
            "sm_clock_hz": [
                {"value": 1253000000, "unit": "Hz", "source": "gajger2017",
                 "where": "Table 6.1", "default": True},
                {"value": 1178000000, "unit": "Hz", "source": "nvidia-gtx970-spec",
                 "where": "boost clock"}],
            "board_power_w": {"value": None, "unit": "W"}}},
        {"kind": "gpu", "name": "GeForce GTX 980", "aliases": [], "values": {
            "sms": {"value": 16, "unit": "count", "source": "gajger2017", "where": "p. 9"}}},
        {"kind": "link", "name": "PCIe 3.0 x16", "aliases": [], "values": {
            "bandwidth_bytes_per_s": {"value": 15.754e9, "unit": "B/s",
                                      "source": "gajger2017", "where": "Table 4.3"}}},
    ],
}


@pytest.fixture
def env(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "maxwell.json").write_text(json.dumps(FIXTURE), encoding="utf-8")
    shipped = tmp_path / "devices.db"
    build(src, shipped)
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(shipped))
    monkeypatch.setenv("GPUMODELER_USER_DB", str(tmp_path / "user.db"))
    return tmp_path


def run(capsys, *argv):
    code = main(["devices", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_show_json_of_the_fixture_gtx970(env, capsys):
    code, out, err = run(capsys, "show", "GeForce GTX 970", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["name"] == "GeForce GTX 970" and data["origin"] == "shipped"
    sms = data["values"]["sms"]
    assert sms == [{"value": 13, "unit": "count", "source": "gajger2017", "where": "Table 6.1",
                    "provenance": "document", "note": None, "is_default": True,
                    "source_text": None}]
    assert [r["value"] for r in data["values"]["sm_clock_hz"]] == [1253000000, 1178000000]
    assert data["values"]["board_power_w"][0]["value"] is None
    assert "l2_bytes" in data["not_recorded"]
    assert data["sources"]["nvidia-gtx970-spec"].startswith("NVIDIA")


def test_show_text_lists_every_field_with_unit_provenance_and_where(env, capsys):
    code, out, _ = run(capsys, "show", "gtx 970")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "GeForce GTX 970"
    sms = next(line for line in lines if " sms " in line).split()
    assert sms[:4] == ["sms", "13", "count", "document"] and "Table 6.1" in " ".join(sms)
    power = next(line for line in lines if "board_power_w" in line).split()
    assert power[:3] == ["board_power_w", "unknown", "W"]
    l2 = next(line for line in lines if " l2_bytes " in line).split()
    assert l2[:3] == ["l2_bytes", "unknown", "B"]
    assert any(line.split()[:3] == ["*", "sm_clock_hz", "1253000000"] for line in lines)


def test_list_and_search(env, capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["NAME", "GeForce", "GeForce",
                                                              "PCIe"]
    code, out, _ = run(capsys, "list", "--kind", "link", "--json")
    assert [d["name"] for d in json.loads(out)] == ["PCIe 3.0 x16"]
    code, out, _ = run(capsys, "search", "5.2", "--json")
    assert [d["name"] for d in json.loads(out)] == ["GeForce GTX 970"]
    code, out, _ = run(capsys, "search", "volta")
    assert code == 0 and "no device matches" in out


@pytest.mark.parametrize("name, message", [
    ("GeForce", "matches several devices: GeForce GTX 970, GeForce GTX 980"),
    ("GTX 907", "no device named 'GTX 907'; did you mean: GeForce GTX 970"),
])
def test_unknown_or_ambiguous_names_exit_2_with_candidates(env, capsys, name, message):
    code, out, err = run(capsys, "show", name)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("content", [b"hello, not a database\n", b""])
def test_unreadable_files_exit_2_and_stay_untouched(env, capsys, content):
    bad = env / "bad.db"
    bad.write_bytes(content)
    before = hashlib.sha256(bad.read_bytes()).hexdigest()
    for argv in (["import", str(bad)], ["merge", str(bad), "--keep-both"],
                 ["diff", str(bad), str(env / "devices.db")], ["list", "--user-db", str(bad)]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and err.count("\n") == 1 and "not a gpumodeler device database" in err
    code, _, err = run(capsys, "import", str(env / "missing.db"))
    assert code == 2 and "no such file" in err
    assert hashlib.sha256(bad.read_bytes()).hexdigest() == before


def _friend_file(env, capsys):
    """A friend's export: GTX 970 with a different default clock and a new link."""
    from gpumodeler.db.catalog import Catalog
    with Catalog(user_db=env / "friend.db") as friend:
        friend.set_value("gtx 970", "sm_clock_hz", 1.3e9, provenance="measurement",
                         source_text="friend's bench")
        friend.add_device("link", "NVLink 2", values={"lanes": 6})
        friend.export(["gtx 970", "nvlink 2"], env / "friend-share.db")
    from gpumodeler.db.catalog import Catalog as C
    with C() as mine:
        mine.set_value("gtx 970", "sm_clock_hz", 1.2e9, source_text="my bench")
    return env / "friend-share.db"


def test_export_import_merge_with_policies(env, capsys):
    share = _friend_file(env, capsys)
    code, out, _ = run(capsys, "import", str(share))
    assert code == 0
    assert "1 new, 1 conflicting" in out and "sm_clock_hz: CONFLICT" in out
    code, out, _ = run(capsys, "import", str(share), "--json")
    report = json.loads(out)
    assert report["counts"]["conflicting"] == 1 and not report["applied"]
    user_before = hashlib.sha256((env / "user.db").read_bytes()).hexdigest()
    code, out, err = run(capsys, "merge", str(share))
    assert code == 2 and "1 unresolved conflict(s): GeForce GTX 970.sm_clock_hz" in err
    assert err.count("\n") == 1
    assert hashlib.sha256((env / "user.db").read_bytes()).hexdigest() == user_before
    code, out, _ = run(capsys, "merge", str(share), "--take-theirs", "sm_clock_hz", "--json")
    assert code == 0 and json.loads(out)["applied"]
    code, out, _ = run(capsys, "show", "gtx 970", "--json")
    clocks = json.loads(out)["values"]["sm_clock_hz"]
    assert [c["value"] for c in clocks if c["is_default"]] == [1.3e9]
    code, out, _ = run(capsys, "show", "nvlink", "--json")
    assert json.loads(out)["origin"] == "imported"


def test_merge_keep_both_and_resolutions_file(env, capsys):
    share = _friend_file(env, capsys)
    resolutions = env / "res.json"
    resolutions.write_text(json.dumps({"GeForce GTX 970": {"sm_clock_hz": "both"}}))
    code, out, _ = run(capsys, "merge", str(share), "--resolutions", str(resolutions))
    assert code == 0 and "merged into" in out
    code, out, _ = run(capsys, "show", "gtx 970", "--json")
    clocks = {(c["value"], c["provenance"], c["is_default"])
              for c in json.loads(out)["values"]["sm_clock_hz"]}
    assert {(1.2e9, "user", True), (1.3e9, "measurement", False)} <= clocks
    resolutions.write_text("{not json")
    code, _, err = run(capsys, "merge", str(share), "--resolutions", str(resolutions))
    assert code == 2 and "not valid JSON" in err


def test_export_refuses_to_overwrite_and_diff(env, capsys):
    out_file = env / "mine.db"
    code, out, _ = run(capsys, "export", "gtx 970", "pcie", "-o", str(out_file))
    assert code == 0 and out_file.exists()
    code, _, err = run(capsys, "export", "geforce gtx 980", "-o", str(out_file))
    assert code == 2 and "already exists" in err
    code, _, _ = run(capsys, "export", "geforce gtx 980", "-o", str(out_file), "--force")
    assert code == 0
    code, out, _ = run(capsys, "diff", str(env / "devices.db"), str(out_file), "--json")
    data = json.loads(out)
    assert data["counts"] == {"new": 0, "changed": 0, "conflicting": 0, "identical": 1,
                              "missing": 2, "declined": 0}
    code, _, err = run(capsys, "export", "geforce gtx 980", "-o", str(env / "no" / "dir.db"))
    assert code == 2 and err.count("\n") == 1


def test_the_real_shipped_database_shows_a_gtx970(monkeypatch, tmp_path, capsys):
    shipped = REPO / "devices.db"
    if not shipped.exists():
        pytest.skip("no devices.db at the repository root yet (built from resources/devices)")
    monkeypatch.delenv("GPUMODELER_DEVICES_DB", raising=False)
    monkeypatch.setenv("GPUMODELER_USER_DB", str(tmp_path / "user.db"))
    code, out, err = run(capsys, "list", "--json")
    assert code == 0, err
    devices = json.loads(out)
    assert devices and all(d["origin"] == "shipped" for d in devices)
    for device in devices[:50]:
        code, out, err = run(capsys, "show", device["name"], "--json")
        assert code == 0, err
        assert json.loads(out)["name"] == device["name"]
