"""The catalog: lookup rules, layering of the user database over the shipped one, edits."""
import sqlite3
from pathlib import Path

import pytest

from device_fixtures import file_hash
from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import InvalidParameter, ModelError
from gpumodeler.db.catalog import Catalog, default_shipped_db_path, default_user_db_path
from gpumodeler.db.errors import (AmbiguousDevice, DatabaseAccessError, DatabaseFormatError,
                                  DeviceEditError, DeviceNotFound)
from gpumodeler.db.records import ValueRecord

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("query", ["GeForce GTX 970", "geforce gtx 970", "  GEFORCE  gtx 970 ",
                                   "gtx 970", "GM204-970", "geforce gtx 97"])
def test_lookup_is_case_insensitive_by_name_alias_or_unique_prefix(catalog, query):
    assert catalog.get(query).name == "GeForce GTX 970"


def test_an_ambiguous_prefix_lists_the_candidates(catalog):
    with pytest.raises(AmbiguousDevice) as info:
        catalog.get("geforce")
    assert info.value.candidates == ["GeForce GTX 970", "GeForce GTX 980"]
    assert "GeForce GTX 970, GeForce GTX 980" in str(info.value)
    assert isinstance(info.value, ModelError)


def test_an_alias_shared_by_two_devices_is_ambiguous(catalog):
    catalog.add_device("gpu", "Titan X", aliases=["big one"])
    catalog.add_device("gpu", "Titan Z", aliases=["big one"])
    with pytest.raises(AmbiguousDevice, match="Titan X, Titan Z"):
        catalog.get("big one")


def test_an_unknown_name_suggests_the_closest(catalog):
    with pytest.raises(DeviceNotFound) as info:
        catalog.get("GeForce GTX 907")
    assert "GeForce GTX 970" in info.value.candidates
    assert "did you mean" in str(info.value)
    with pytest.raises(DeviceNotFound) as info:
        catalog.get("980")
    assert info.value.candidates == ["GeForce GTX 980"]


def test_list_by_kind_and_search(catalog):
    assert [d.name for d in catalog.list()] == [
        "GeForce GTX 970", "GeForce GTX 980", "Lab workstation", "PCIe 3.0 x16", "Tesla K20"]
    assert [d.name for d in catalog.list("link")] == ["PCIe 3.0 x16"]
    assert [d.name for d in catalog.list("host")] == ["Lab workstation"]
    with pytest.raises(InvalidParameter, match="kind must be one of"):
        catalog.list("cpu")
    assert [d.name for d in catalog.search("KEPLER")] == ["Tesla K20"]
    assert [d.name for d in catalog.search("5.2")] == ["GeForce GTX 970", "GeForce GTX 980"]
    assert [d.name for d in catalog.search("gm204")] == ["GeForce GTX 970"]
    assert [d.name for d in catalog.search("pcie")] == ["Lab workstation", "PCIe 3.0 x16"]  # family
    assert catalog.search("volta") == []
    summary = catalog.list("gpu")[0]
    assert (summary.vendor, summary.architecture, summary.compute_capability, summary.origin) \
        == ("NVIDIA", "Maxwell", "5.2", "shipped")


def test_a_record_keeps_every_value_with_unit_and_provenance(catalog):
    gpu = catalog.get("gtx 970")
    assert gpu.kind == "gpu" and gpu.family == "Maxwell" and gpu.origin == "shipped"
    clocks = gpu.values["sm_clock_hz"]
    assert [(r.value, r.unit, r.provenance, r.is_default) for r in clocks] == [
        (1253000000, "Hz", "document", True), (1178000000, "Hz", "vendor", False)]
    assert clocks[0].where == "Table 6.1" and clocks[0].source == "gajger2017"
    assert gpu.value("sm_clock_hz") == 1253000000
    assert gpu.value("board_power_w") is None and gpu.values["board_power_w"][0].unit == "W"
    assert gpu.value("l2_bytes") is None
    assert gpu.sources["gajger2017"].startswith("T. Gajger")


def test_mapping_to_core_specs_keeps_unknown_as_none(catalog):
    spec = catalog.get("gtx 970").to_gpu_spec()
    assert spec == GPUSpec(name="GeForce GTX 970", compute_capability="5.2", sms=13,
                           sm_clock_hz=1253000000.0, cuda_cores_per_sm=128,
                           schedulers_per_sm=4, gmem_bytes_per_cycle_per_sm=11.5,
                           smem_accesses_per_cycle_per_sm=1.0)
    assert spec.memory_clock_hz is None and spec.sfu_per_sm is None
    assert isinstance(spec.sms, int)
    link = catalog.get("pcie3").to_link_spec()
    assert link == LinkSpec(name="PCIe 3.0 x16", bandwidth_bytes_per_s=15.754e9,
                            startup_htod_s=1.2e-5, kind="pcie")
    assert link.startup_dtoh_s is None
    with pytest.raises(InvalidParameter, match="not a GPU"):
        catalog.get("pcie3").to_gpu_spec()
    with pytest.raises(InvalidParameter, match="not a link"):
        catalog.get("tesla k").to_link_spec()


def test_reading_never_creates_the_user_database(shipped_db, tmp_path):
    user = tmp_path / "sub" / "user.db"
    with Catalog(user_db=user, shipped_db=shipped_db) as catalog:
        catalog.list()
        catalog.get("tesla k")
        catalog.import_file(shipped_db)
    assert not user.exists()


def test_editing_a_shipped_device_makes_a_shadowing_user_copy(catalog, shipped_db, tmp_path):
    before = file_hash(shipped_db)
    gpu = catalog.set_value("GTX 970", "sm_clock_hz", 1300000000, provenance="measurement",
                            source_text="nvidia-smi on lab box", note="max sustained")
    assert gpu.origin == "user" and gpu.shadows_shipped
    assert gpu.value("sm_clock_hz") == 1300000000
    assert [(r.value, r.provenance, r.is_default) for r in gpu.values["sm_clock_hz"]] == [
        (1253000000, "document", False), (1178000000, "vendor", False),
        (1300000000, "measurement", True)]
    assert gpu.values["sms"] == catalog.get("GeForce GTX 980").values["sms"][:0] + (
        ValueRecord(13, "count", "gajger2017", "Table 6.1", "document", None, True),)
    assert gpu.sources["gajger2017"].startswith("T. Gajger")  # the copy cites its sources
    assert [s.origin for s in catalog.list() if s.name == "GeForce GTX 970"] == ["user"]
    assert file_hash(shipped_db) == before
    # another catalog on the same files sees the edit
    with Catalog(user_db=tmp_path / "user.db", shipped_db=shipped_db) as again:
        assert again.get("gtx 970").value("sm_clock_hz") == 1300000000
    # deleting the user copy brings the shipped device back
    catalog.delete_device("gtx 970")
    assert catalog.get("gtx 970").origin == "shipped"
    with pytest.raises(DeviceEditError, match="read-only"):
        catalog.delete_device("gtx 970")


def test_set_value_replaces_only_its_own_earlier_record(catalog):
    catalog.set_value("tesla k", "sms", 13, source_text="me")
    gpu = catalog.set_value("tesla k", "sms", 14, source_text="me")
    assert [(r.value, r.is_default) for r in gpu.values["sms"]] == [(14, True)]
    gpu = catalog.set_value("tesla k", "sms", 15, provenance="calibration", source_text="fit",
                            make_default=False)
    assert [(r.value, r.is_default) for r in gpu.values["sms"]] == [(14, True), (15, False)]
    gpu = catalog.set_default("tesla k", "sms", 1)
    assert gpu.value("sms") == 15
    # an unknown placeholder gives way to a value
    gpu = catalog.set_value("gtx 970", "board_power_w", 145.0, source="nvidia-gtx970-spec",
                            where="specs page", provenance="user")
    assert [(r.value, r.source) for r in gpu.values["board_power_w"]] == [
        (145.0, "nvidia-gtx970-spec")]
    gpu = catalog.set_value("gtx 980", "sms", 16, source="my-lab", citation="Our lab, 2024")
    assert gpu.sources["my-lab"] == "Our lab, 2024"


@pytest.mark.parametrize("args, message", [
    (("tesla k", "sm_clock", 1), "unknown field 'sm_clock'"),
    (("tesla k", "sms", 1, "Hz"), "unit must be 'count'"),
    (("tesla k", "sms", "13"), "needs a number"),
    (("tesla k", "architecture", 3), "needs a string"),
    (("tesla k", "sms", float("nan")), "finite"),
    (("tesla k", "sms", 3, None, "document"), "provenance must be one of"),
    (("tesla k", "sms", 3, None, "user", "nobody"), "source 'nobody' is not known"),
])
def test_bad_edits_are_refused(catalog, tmp_path, args, message):
    name, field, value, *rest = args
    kwargs = dict(zip(("unit", "provenance", "source"), rest))
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    with pytest.raises(DeviceEditError, match=message):
        catalog.set_value(name, field, value, **kwargs)
    assert not (tmp_path / "user.db").exists() or catalog.get("tesla k").origin == "shipped"


def test_add_device_and_refusals(catalog):
    gpu = catalog.add_device("gpu", "My Card", aliases=["mc"], family="Custom", values={
        "sms": 20,
        "sm_clock_hz": [ValueRecord(1.5e9, "Hz", provenance="measurement", is_default=True),
                        ValueRecord(1.4e9, "Hz", provenance="user")],
        "board_power_w": None})
    assert gpu.origin == "user" and not gpu.shadows_shipped
    assert gpu.values["sms"] == (ValueRecord(20, "count", provenance="user", is_default=True),)
    assert gpu.value("sm_clock_hz") == 1.5e9 and gpu.value("board_power_w") is None
    assert catalog.get("mc").name == "My Card"
    with pytest.raises(DeviceEditError, match="already exists in your devices"):
        catalog.add_device("gpu", "my card")
    with pytest.raises(DeviceEditError, match="shadow=True"):
        catalog.add_device("gpu", "Tesla K20")
    assert catalog.add_device("gpu", "Tesla K20", shadow=True).shadows_shipped
    with pytest.raises(DeviceEditError, match="unknown field 'cores'"):
        catalog.add_device("gpu", "X", values={"cores": 3})
    with pytest.raises(DeviceEditError, match="exactly one record"):
        catalog.add_device("gpu", "Y", values={"sms": [ValueRecord(1, "count"),
                                                        ValueRecord(2, "count")]})
    with pytest.raises(DeviceEditError, match="kind must be one of"):
        catalog.add_device("tpu", "Z")


def test_locations_from_environment_and_defaults(shipped_db, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(shipped_db))
    monkeypatch.setenv("GPUMODELER_USER_DB", str(tmp_path / "env-user.db"))
    assert default_shipped_db_path() == shipped_db
    with Catalog() as catalog:
        assert catalog.shipped_path == shipped_db
        assert catalog.user_path == tmp_path / "env-user.db"
        catalog.set_value("tesla k", "sms", 13)
    assert (tmp_path / "env-user.db").exists()
    monkeypatch.delenv("GPUMODELER_USER_DB")
    assert default_user_db_path().name == "user-devices.db"
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(tmp_path / "missing.db"))
    with pytest.raises(DatabaseFormatError, match="no such file"):
        Catalog(user_db=tmp_path / "u.db")
    with Catalog(user_db=tmp_path / "u.db", use_shipped=False) as catalog:
        assert catalog.list() == [] and catalog.shipped_path is None


def test_writes_are_one_transaction(catalog, tmp_path, monkeypatch):
    catalog.set_value("tesla k", "sms", 13)
    before = file_hash(tmp_path / "user.db")
    import gpumodeler.db.catalog as module

    def boom(db, device):
        db.execute("DELETE FROM device_values")
        raise sqlite3.OperationalError("disk full")
    monkeypatch.setattr(module, "write_device", boom)
    # SQLite's error becomes one naming the file (the CLI's exit 2), the write undone
    with pytest.raises(DatabaseAccessError, match=r"user\.db: cannot write it \(disk full\)"):
        catalog.set_value("tesla k", "sms", 14)
    assert file_hash(tmp_path / "user.db") == before


def _tree(root, files):
    for name in files:
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
    return root


def test_the_shipped_database_of_a_source_checkout_is_the_one_at_its_root(tmp_path,
                                                                          monkeypatch):
    import gpumodeler.db.catalog as module
    repo = _tree(tmp_path / "repo", ["pyproject.toml", "resources/devices/", "devices.db",
                                     "gpumodeler/data/devices.db"])   # a stale copy too
    monkeypatch.setattr(module, "_PACKAGE_DIR", repo / "gpumodeler")
    assert default_shipped_db_path() == repo / "devices.db"
    # This very checkout (or editable install) finds its own devices.db.
    monkeypatch.undo()
    assert default_shipped_db_path() == REPO / "devices.db"


def test_an_installed_package_ships_its_database_inside_the_package(tmp_path, monkeypatch):
    import gpumodeler.db.catalog as module
    site = _tree(tmp_path / "site-packages", ["devices.db",             # nothing of ours
                                              "gpumodeler/data/devices.db"])
    monkeypatch.setattr(module, "_PACKAGE_DIR", site / "gpumodeler")
    assert default_shipped_db_path() == site / "gpumodeler" / "data" / "devices.db"


def test_a_closed_catalog_says_so(tmp_path):
    from gpumodeler.db.errors import DatabaseAccessError
    catalog = Catalog(user_db=tmp_path / "user.db", use_shipped=False)
    catalog.close()
    with pytest.raises(DatabaseAccessError, match="closed"):
        catalog.get("anything")
