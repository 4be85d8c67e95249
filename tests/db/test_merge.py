"""Sharing devices: export, import reports, merges that lose nobody's work, diff."""
import pytest

from device_fixtures import file_hash
from gpumodeler.db.catalog import Catalog, diff
from gpumodeler.db.errors import DeviceEditError, DeviceNotFound, UnresolvedConflicts
from gpumodeler.db.records import ValueRecord


@pytest.fixture
def two_users(shipped_db, tmp_path):
    """Users A and B, each editing a copy of the same user database."""
    with Catalog(user_db=tmp_path / "base.db", shipped_db=shipped_db) as base:
        base.add_device("gpu", "Lab Card", values={"sms": 10, "sm_clock_hz": 1.0e9,
                                                   "l2_bytes": 2 ** 20})
    a_path, b_path = tmp_path / "a.db", tmp_path / "b.db"
    a_path.write_bytes((tmp_path / "base.db").read_bytes())
    b_path.write_bytes((tmp_path / "base.db").read_bytes())
    a = Catalog(user_db=a_path, shipped_db=shipped_db)
    b = Catalog(user_db=b_path, shipped_db=shipped_db)
    a.set_value("lab card", "sms", 12, provenance="measurement", source_text="A's bench")  # X
    a.add_device("gpu", "Card P", values={"sms": 1})
    b.set_value("lab card", "sm_clock_hz", 1.1e9, source_text="B's notes")               # Y
    b.add_device("link", "Link Q", values={"lanes": 16})
    a.set_value("lab card", "l2_bytes", 3 * 2 ** 20, source_text="A")                    # Z
    b.set_value("lab card", "l2_bytes", 4 * 2 ** 20, provenance="calibration",
                source_text="B fit")
    b.set_value("tesla k", "sms", 13, source_text="B")   # a shipped device, edited by B
    yield a, b, b_path
    a.close()
    b.close()


def test_merging_two_users_edits_keeps_both_sides_work(two_users):
    a, b, b_path = two_users
    report = a.import_file(b_path)
    counts = report.counts()
    assert counts["new"] == 1 and counts["conflicting"] == 1 and counts["changed"] == 1
    [lab] = report.conflicting
    statuses = {c.field: c.status for c in lab.fields}
    assert statuses == {"sms": "mine", "sm_clock_hz": "theirs", "l2_bytes": "conflict"}
    [z] = report.conflicts
    assert [r.value for r in z.mine if r.is_default] == [3 * 2 ** 20]
    assert [r.value for r in z.theirs if r.is_default] == [4 * 2 ** 20]
    assert {r.provenance for r in z.theirs} == {"user", "calibration"}

    with pytest.raises(UnresolvedConflicts) as info:
        a.merge(b_path)
    assert "Lab Card.l2_bytes" in str(info.value) and "calibration" in str(info.value)
    with pytest.raises(DeviceNotFound):
        a.get("Link Q")  # nothing was written

    merged = a.merge(b_path, {"Lab Card": {"l2_bytes": "both"}})
    assert merged.applied
    lab = a.get("lab card")
    assert lab.value("sms") == 12                       # X: A's edit
    assert lab.value("sm_clock_hz") == 1.1e9            # Y: B's edit
    assert a.get("Card P").value("sms") == 1            # P: A's device
    assert a.get("Link Q").value("lanes") == 16         # Q: B's device
    assert a.get("Link Q").origin == "imported"
    z_records = {(r.value, r.provenance, r.source_text, r.is_default)
                 for r in lab.values["l2_bytes"]}
    assert (3 * 2 ** 20, "user", "A", True) in z_records          # mine stays default
    assert (4 * 2 ** 20, "calibration", "B fit", False) in z_records
    k20 = a.get("tesla k")
    assert k20.value("sms") == 13 and k20.origin == "imported" and k20.shadows_shipped
    # merging again changes nothing
    again = a.import_file(b_path)
    assert again.conflicts == [] and again.new == []



@pytest.mark.parametrize("choice, default, values", [
    ("mine", 3 * 2 ** 20, {3 * 2 ** 20, 2 ** 20}),
    ("theirs", 4 * 2 ** 20, {4 * 2 ** 20, 2 ** 20}),
    ("both", 3 * 2 ** 20, {3 * 2 ** 20, 4 * 2 ** 20, 2 ** 20}),
])
def test_each_resolution(two_users, choice, default, values):
    a, b, b_path = two_users
    a.merge(b_path, policy=choice)
    lab = a.get("lab card")
    assert lab.value("l2_bytes") == default
    assert {r.value for r in lab.values["l2_bytes"]} == values
    assert sum(r.is_default for r in lab.values["l2_bytes"]) == 1


def test_a_failed_merge_writes_nothing(two_users, tmp_path):
    a, b, b_path = two_users
    before = file_hash(tmp_path / "a.db")
    with pytest.raises(UnresolvedConflicts):
        a.merge(b_path, {"Lab Card": {"sms": "theirs"}})   # sms is no conflict: a typo
    with pytest.raises(UnresolvedConflicts, match="choose one of"):
        a.merge(b_path, {"Lab Card": {"l2_bytes": "newest"}})
    assert file_hash(tmp_path / "a.db") == before


def test_export_then_import_round_trips_devices_and_sources(catalog, tmp_path, shipped_db):
    catalog.set_value("gtx 970", "sms", 14, provenance="measurement", source="measured-me",
                      citation="My deviceQuery run, 2024", where="line 12")
    catalog.add_device("host", "My PC", values={"cores": 16})
    out = catalog.export(["gtx 970", "my pc", "pcie3"], tmp_path / "share.db")
    with pytest.raises(DeviceEditError, match="already exists"):
        catalog.export(["gtx 970"], out)
    with Catalog(user_db=tmp_path / "friend.db", use_shipped=False) as friend:
        report = friend.import_file(out)
        assert [d.name for d in report.new] == ["GeForce GTX 970", "My PC", "PCIe 3.0 x16"]
        friend.merge(out)
        for name in ("gtx 970", "my pc", "pcie3"):
            mine, theirs = catalog.get(name), friend.get(name)
            assert theirs.values == mine.values
            assert theirs.sources == mine.sources
            assert theirs.origin == "imported"
        assert friend.get("gtx 970").sources["measured-me"] == "My deviceQuery run, 2024"
    # importing what we exported is a no-op
    assert catalog.import_file(out).counts()["identical"] == 3


def test_unknown_to_known_is_taken_not_a_conflict(catalog, tmp_path, shipped_db):
    with Catalog(user_db=tmp_path / "other.db", shipped_db=shipped_db) as other:
        other.set_value("gtx 970", "board_power_w", 145.0, source_text="spec sheet")
        other.export(["gtx 970"], tmp_path / "x.db")
    report = catalog.import_file(tmp_path / "x.db")
    [change] = report.changed
    assert [(c.field, c.status) for c in change.fields] == [("board_power_w", "theirs")]
    catalog.merge(tmp_path / "x.db")
    assert catalog.get("gtx 970").value("board_power_w") == 145.0


def test_a_different_default_alone_is_a_conflict(catalog, tmp_path, shipped_db):
    with Catalog(user_db=tmp_path / "other.db", shipped_db=shipped_db) as other:
        other.set_default("gtx 970", "sm_clock_hz", 1)
        other.export(["gtx 970"], tmp_path / "x.db")
    [conflict] = catalog.import_file(tmp_path / "x.db").conflicts
    assert conflict.field == "sm_clock_hz"
    catalog.merge(tmp_path / "x.db", {"GeForce GTX 970": {"*": "theirs"}})
    assert catalog.get("gtx 970").value("sm_clock_hz") == 1178000000


def test_a_source_cited_differently_is_renamed_not_overwritten(catalog, tmp_path):
    catalog.set_value("tesla k", "sms", 13, source="lab", citation="Lab A notebook")
    with Catalog(user_db=tmp_path / "other.db", use_shipped=False) as other:
        other.add_device("gpu", "Other Card", values={
            "sms": ValueRecord(8, "count", source="lab", provenance="measurement")})
        other.set_value("other card", "sm_clock_hz", 1e9, source="lab",
                        citation="Lab B notebook")
        other.export(["other card"], tmp_path / "x.db")
    report = catalog.merge(tmp_path / "x.db")
    assert report.renamed_sources == {"lab": "lab~2"}
    card = catalog.get("other card")
    assert card.values["sm_clock_hz"][0].source == "lab~2"
    assert card.sources["lab~2"] == "Lab B notebook"
    assert catalog.get("tesla k").sources["lab"] == "Lab A notebook"


def test_a_kind_clash_is_a_conflict_that_cannot_keep_both(catalog, tmp_path):
    catalog.add_device("gpu", "Thing", values={"sms": 2})
    with Catalog(user_db=tmp_path / "other.db", use_shipped=False) as other:
        other.add_device("link", "Thing", values={"lanes": 4})
        other.export(["thing"], tmp_path / "x.db")
    [conflict] = catalog.import_file(tmp_path / "x.db").conflicts
    assert (conflict.field, conflict.mine, conflict.theirs) == ("kind", ("gpu",), ("link",))
    with pytest.raises(UnresolvedConflicts):
        catalog.merge(tmp_path / "x.db", policy="both")
    catalog.merge(tmp_path / "x.db", policy="theirs")
    assert catalog.get("thing").kind == "link"


def test_diff_of_two_files(two_users, tmp_path):
    a, b, b_path = two_users
    report = diff(tmp_path / "a.db", b_path)
    by_name = {d.name: d.status for d in report.devices}
    assert by_name == {"Card P": "missing", "Link Q": "new", "Lab Card": "conflicting",
                       "Tesla K20": "new"}
    assert [c.field for c in report.conflicts] == ["l2_bytes"]
    data = report.to_dict()
    assert data["counts"]["missing"] == 1 and not data["applied"]


def test_device_changes_made_in_one_step_are_the_dataclass_ones():
    """compare_device and compare build DeviceChange without its __init__ (one per device
    of a merge): each equals, hashes and prints as the one the constructor makes, stays
    frozen, and finds its conflicts, for identical, changed (a field added on one side,
    unknown placeholders, aliases, a field only mine has) and conflicting ones (a family,
    a kind)."""
    import dataclasses
    from gpumodeler.db.merge import DeviceChange, compare, compare_device
    from gpumodeler.db.store import RawDevice

    def rec(value, default=True, unit="count"):
        return (value, unit, None, None, "user", None, default, None)
    base = RawDevice("gpu", "Écran GPU", ("e1",), "fam", "user",
                     {"sms": [rec(1)], "warp_size": [rec(None)]}, "t", "t")
    others = [
        base,
        RawDevice("gpu", base.name, ("e1", "E2"), "fam", "user",
                  {"sms": [rec(1)], "warp_size": [rec(32)], "l2_bytes": [rec(2, unit="B")]}),
        RawDevice("gpu", base.name, ("e1",), "other", "user",
                  {"sms": [rec(1, False), rec(2)], "warp_size": [rec(None)]}),
        RawDevice("gpu", base.name, (), None, "user",           # 1.0 is 1: a field less
                  {"sms": [rec(1, False), rec(1.0)]}),
        RawDevice("link", base.name, (), None, "user", {}),      # another kind
    ]
    made = [compare_device(base, other) for other in others]
    assert [d.status for d in made] == ["identical", "changed", "conflicting", "changed",
                                        "conflicting"]
    for change in made + list(compare({"k": base}, {"k": others[1]},
                                      identical=[("Same", "gpu")], new=[("New", "link")],
                                      missing=[("Gone", "host")]).devices):
        reference = DeviceChange(change.name, change.kind, change.status, change.fields)
        assert change == reference and hash(change) == hash(reference)
        assert repr(change) == repr(reference) and change.to_dict() == reference.to_dict()
        assert change.conflicts == reference.conflicts
        assert change.conflicts == tuple(f for f in change.fields if f.status == "conflict")
        with pytest.raises(dataclasses.FrozenInstanceError):
            change.status = "new"
