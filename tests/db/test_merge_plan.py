"""The merge planner (db/merge_plan.py) plans most devices field by field in one pass and
the others through merge.merged_device; whatever the choices, a merge writes what rewriting
every merged device whole writes (the reference of test_sharing_at_scale.py), a device the
choices leave as it is keeps its timestamp and digest, and an open conflict stops the merge
before anything is written, listing the conflicts the whole-device planner lists, in order.
"""
import pytest

from device_fixtures import file_hash
from gpumodeler.db.digests import device_digest
from gpumodeler.db.errors import UnresolvedConflicts
from gpumodeler.db.merge import make_resolver, plan_merge
from gpumodeler.db.store import read_raw
from test_sharing_at_scale import (  # noqa: F401 (fixtures)
    _merge_reference, _open, _rewritten_whole, _same_devices, catalog, dbs)

CHOICES = [
    {"*": "mine"},
    {"*": "theirs"},
    {"*": {"*": "both", "kind": "mine", "family": "theirs"}},
]


def _before(user_path):
    db = _open(user_path)
    devices = read_raw(db)
    stamps = dict(db.execute("SELECT name_lower, modified || content_hash FROM devices"))
    db.close()
    return devices, stamps


@pytest.mark.parametrize("resolutions", CHOICES, ids=["mine", "theirs", "both"])
def test_every_choice_writes_what_rewriting_every_device_writes(catalog, dbs, tmp_path,  # noqa: F811 (fixtures)
                                                                resolutions):
    user_path = tmp_path / "mine.db"
    expected_report, mine_all, theirs_all, _ = _merge_reference(dbs, user_path)
    before, stamps = _before(user_path)

    report = catalog.merge(dbs / "theirs.db", resolutions)
    assert report.applied and report.devices == expected_report.devices

    expected, written = _rewritten_whole(before, mine_all, theirs_all, expected_report,
                                         resolutions)
    after, stamps_after = _before(user_path)
    _same_devices(after, expected)
    for key, got in after.items():
        assert stamps_after[key].endswith(
            device_digest(got.kind, got.family, got.aliases, got.values)), key
    # The choices leave some devices that differ as they are: not even touched.
    untouched = [d.name.casefold() for d in expected_report.devices
                 if d.status in ("changed", "conflicting")
                 and d.name.casefold() in before and d.name.casefold() not in written]
    assert untouched
    assert all(stamps_after[k] == stamps[k] for k in untouched)


def test_an_open_conflict_writes_nothing_and_lists_them_all_in_order(catalog, dbs,  # noqa: F811
                                                                     tmp_path):
    user_path = tmp_path / "mine.db"
    expected_report, mine_all, theirs_all, _ = _merge_reference(dbs, user_path)
    # "both" cannot resolve a kind or a family: those stay open, every other is chosen.
    with pytest.raises(UnresolvedConflicts) as expected:
        plan_merge(mine_all, theirs_all, expected_report,
                   make_resolver(expected_report, None, "both"))
    assert {c.field for c in expected.value.conflicts} == {"kind", "family"}
    untouched = file_hash(user_path)

    with pytest.raises(UnresolvedConflicts) as got:
        catalog.merge(dbs / "theirs.db", policy="both")
    assert got.value.conflicts == expected.value.conflicts
    assert str(got.value) == str(expected.value)
    assert file_hash(user_path) == untouched
