"""Comparing and merging large device databases by digests and field rewrites gives exactly
what reading and rewriting every device gives (the code path before digests listed fields).

The reference below is that old path: every device read whole (store.read_raw), compared
with merge.compare, merged with merge.plan_merge, every merged device rewritten whole.
"""
import random
import shutil
import sqlite3

import pytest

from device_fixtures import file_hash, write_database
from gpumodeler.db import schema, sharing
from gpumodeler.db.catalog import Catalog, diff
from gpumodeler.db.digests import device_digest, differing_fields, field_entry, parts, \
    patched
from gpumodeler.db.errors import DatabaseFormatError, DeviceEditError
from gpumodeler.db.merge import compare, make_resolver, plan_merge, plan_sources, \
    remap_sources
from gpumodeler.db.schema import open_database
from gpumodeler.db.store import RawDevice, read_raw, read_sources

N_DEVICES = 2000
FIELDS = [("sms", "count"), ("sm_clock_hz", "Hz"), ("l2_bytes", "B"), ("architecture", "text"),
          ("board_power_w", "W"), ("warp_size", "count"), ("memory_clock_hz", "Hz"),
          ("odd,name:%é", "count")]   # a field name that needs escaping in digests
SOURCES = {f"doc-{k}": f"Paper {k}" for k in range(10)} | {"vendor-x": "Vendor sheet"}
STAMP = "2024-01-01T00:00:00Z"


def _rec(value, unit, source=None, where=None, provenance="document", default=True,
         note=None, text=None):
    return (value, unit, source, where, provenance, note, default, text)


def _base_device(i, rng):
    values = {}
    for name, unit in FIELDS[:6 + i % 3]:
        if name == "board_power_w" and i % 5 == 0:
            values[name] = [_rec(None, unit, provenance=None)]        # unknown
            continue
        value = f"arch-{i % 4}" if unit == "text" else (
            rng.randint(1, 5000) if unit == "count" else rng.uniform(1, 1e10))
        records = [_rec(value, unit, f"doc-{i % 10}", f"Table {i % 7}")]
        if name == "sm_clock_hz":
            records.append(_rec(value * 0.9, unit, "vendor-x", "boost", "vendor", False))
        values[name] = records
    return RawDevice("gpu", f"Card {i:05d}", (f"c{i}",), f"fam-{i % 3}", "user", values,
                     STAMP, STAMP)


def _edit(device, rng, side):
    """One side's edits: added records, values replaced, defaults moved, unknowns filled,
    aliases, family, fields dropped, int/float look-alikes."""
    values = {f: list(rs) for f, rs in device.values.items()}
    aliases, family, kind = device.aliases, device.family, device.kind
    for name in list(values):
        records = values[name]
        unit = records[0][1]
        roll = rng.random()
        if roll < 0.08 and unit != "text" and records[0][0] is not None:
            values[name] = [r[:6] + (False,) + r[7:] for r in records] + [
                _rec(records[0][0] * 1.01, unit, None, None, "measurement", True,
                     text=f"{side} bench")]
        elif roll < 0.12 and unit != "text" and records[0][0] is not None:
            values[name] = [(records[0][0] + 1,) + records[0][1:]] + records[1:]
        elif roll < 0.14 and len(records) > 1:
            values[name] = [r[:6] + (not r[6],) + r[7:] for r in records]
        elif roll < 0.16 and records[0][0] is None:
            values[name] = [_rec(150.0, unit, None, None, "user", text=f"{side} sheet")]
        elif roll < 0.17 and side == "theirs" and isinstance(records[0][0], int):
            values[name] = [(float(records[0][0]),) + records[0][1:]] + records[1:]
        elif roll < 0.175 and side == "theirs":
            del values[name]
    if rng.random() < 0.02:
        aliases = aliases + (f"{side}-{device.name[-5:]}",)
    if rng.random() < 0.01:
        family = f"{side}-family"
    if side == "theirs" and rng.random() < 0.005:
        kind = "host"
    return RawDevice(kind, device.name, aliases, family, device.origin, values,
                     device.created, device.modified)


#: The folder dbs built, once a session: test_merge_plan.py imports the fixture, and a
#: module-scoped fixture imported into another module is built again for it (~1.5 CPU-s).
#: Every test only reads the three files (a test that writes copies one first).
_BUILT: dict[str, object] = {}


@pytest.fixture(scope="module")
def dbs(tmp_path_factory):
    """shipped.db (100 devices), mine.db and theirs.db (edited copies of ~2000 devices)."""
    if "root" not in _BUILT:
        _BUILT["root"] = _build_dbs(tmp_path_factory.mktemp("scale"))
    return _BUILT["root"]


def _build_dbs(root):
    rng = random.Random(20240601)
    base = [_base_device(i, rng) for i in range(N_DEVICES)]
    shipped = [RawDevice(d.kind, f"Shipped {d.name}", (), d.family, "shipped", d.values,
                         STAMP, STAMP) for d in base[:100]]
    write_database(root / "shipped.db", shipped, SOURCES)
    mine = [_edit(d, rng, "mine") for d in base[:-30]]
    mine += [_edit(d, rng, "mine") for d in shipped[:20]]          # shadowing shipped ones
    theirs = [_edit(d, rng, "theirs") for d in base[15:]]          # 15 only mine, 15 both
    theirs += [_edit(d, rng, "theirs") for d in shipped[10:60]]    # editing shipped ones
    theirs += [_base_device(N_DEVICES + i, rng) for i in range(40)]   # new devices
    write_database(root / "mine.db", mine, SOURCES)
    # Their "doc-3" is another paper: a renamed source, so equal records cite differently.
    write_database(root / "theirs.db", theirs, SOURCES | {"doc-3": "Another paper"})
    return root


def _reference(mine_dbs, theirs_db, mine_label, theirs_label, with_missing=False):
    """The old path: every device read whole and compared."""
    mine = {}
    for db in mine_dbs:
        mine.update(read_raw(db))
    mine_sources = {}
    for db in mine_dbs:
        mine_sources.update(read_sources(db))
    renamed = plan_sources(mine_sources, read_sources(theirs_db))
    theirs = {k: remap_sources(d, renamed) for k, d in read_raw(theirs_db).items()}
    missing = [(d.name, d.kind) for k, d in mine.items() if k not in theirs] \
        if with_missing else ()
    return compare(mine, theirs, mine_label=mine_label, theirs_label=theirs_label,
                   missing=missing, renamed=renamed), mine, theirs


@pytest.fixture
def catalog(dbs, tmp_path):
    shutil.copy(dbs / "mine.db", tmp_path / "mine.db")
    with Catalog(user_db=tmp_path / "mine.db", shipped_db=dbs / "shipped.db") as cat:
        yield cat


def _open(path):
    return open_database(path)


def test_the_import_report_is_the_one_reading_every_device_gives(catalog, dbs, tmp_path):
    report = catalog.import_file(dbs / "theirs.db")
    user, shipped, theirs = (_open(tmp_path / "mine.db"), _open(dbs / "shipped.db"),
                             _open(dbs / "theirs.db"))
    expected, _, _ = _reference([shipped, user], theirs, str(tmp_path / "mine.db"),
                                str(dbs / "theirs.db"))
    for db in (user, shipped, theirs):
        db.close()
    counts = report.counts()
    # The generated edits cover every case, or this test would prove little.
    assert counts["new"] == 30 + 40 and counts["identical"] > 100
    assert counts["changed"] > 100 and counts["conflicting"] > 100
    statuses = {c.status for c in report.conflicts} | {
        f.status for d in report.devices for f in d.fields}
    assert statuses == {"mine", "theirs", "conflict"}
    assert {"kind", "family", "aliases", "odd,name:%é"} <= {
        f.field for d in report.devices for f in d.fields}
    assert report.renamed_sources == {"doc-3": "doc-3~2"}
    assert report == expected


def test_a_diff_is_the_one_reading_every_device_gives(dbs):
    report = diff(dbs / "mine.db", dbs / "theirs.db")
    mine, theirs = _open(dbs / "mine.db"), _open(dbs / "theirs.db")
    expected, _, _ = _reference([mine], theirs, str(dbs / "mine.db"), str(dbs / "theirs.db"),
                                with_missing=True)
    mine.close()
    theirs.close()
    assert report.counts()["missing"] == 15 + 10
    assert report == expected


#: _merge_reference by the user database's bytes: the tests that use it (here and in
#: test_merge_plan.py) start from the same copy of dbs' mine.db, whose whole-device reference
#: (~0.4 CPU-s) is computed once. The tests only read what it returns.
_REFERENCES: dict[str, tuple] = {}


def _merge_reference(dbs, user_path):
    """The old path's report for merging theirs.db into the user database at ``user_path``
    (over shipped.db), both sides' devices read whole, and the user's devices before."""
    key = file_hash(user_path)
    if key not in _REFERENCES:
        user, shipped = _open(user_path), _open(dbs / "shipped.db")
        theirs = _open(dbs / "theirs.db")
        expected_report, mine_all, theirs_all = _reference(
            [shipped, user], theirs, str(user_path), str(dbs / "theirs.db"))
        before = read_raw(user)
        for db in (user, shipped, theirs):
            db.close()
        _REFERENCES[key] = (expected_report, mine_all, theirs_all, before)
    return _REFERENCES[key]


def _same_devices(after: dict, expected: dict) -> None:
    """The devices read back are the expected ones: same names, the same kind, name,
    aliases, family and origin each, and the same records with the fields in the same order
    (as a whole rewrite leaves them)."""
    assert set(after) == set(expected)
    for key, device in expected.items():
        got = after[key]
        assert (got.kind, got.name, got.aliases, got.family, got.origin) == (
            device.kind, device.name, device.aliases, device.family, device.origin), key
        assert list(got.values.items()) == list(device.values.items()), key


def _rewritten_whole(before, mine_all, theirs_all, report, resolutions):
    """What rewriting every merged device whole leaves: (name_lower -> device, the names
    written)."""
    expected, written = dict(before), set()
    resolve = make_resolver(report, resolutions)
    for key, device, is_new in plan_merge(mine_all, theirs_all, report, resolve):
        fresh = is_new or key not in before
        expected[key] = RawDevice(device.kind, device.name, device.aliases, device.family,
                                  "imported" if fresh else device.origin, device.values)
        written.add(key)
    return expected, written


def test_a_merge_writes_what_rewriting_every_device_writes(catalog, dbs, tmp_path):
    user_path = tmp_path / "mine.db"
    expected_report, mine_all, theirs_all, before = _merge_reference(dbs, user_path)
    picks = {}
    for conflict in expected_report.conflicts[::3]:
        if conflict.field not in ("kind", "family"):
            picks.setdefault(conflict.device, {})[conflict.field] = "theirs"
    for conflict in expected_report.conflicts[1::3]:
        picks.setdefault(conflict.device, {})[conflict.field] = "mine"
    resolutions = {**picks, "*": {"*": "both", "kind": "theirs", "family": "mine"}}

    report = catalog.merge(dbs / "theirs.db", resolutions)
    assert report.applied and report.devices == expected_report.devices

    expected, _ = _rewritten_whole(before, mine_all, theirs_all, expected_report, resolutions)
    db = _open(user_path)
    after = read_raw(db)
    digests = dict(db.execute("SELECT name_lower, content_hash FROM devices"))
    triggers = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").fetchone()
    db.close()
    _same_devices(after, expected)
    for key, got in after.items():
        assert digests[key] == device_digest(got.kind, got.family, got.aliases, got.values)
    assert triggers == (4,)
    # Merging again finds nothing left to take.
    again = catalog.import_file(dbs / "theirs.db")
    assert again.new == [] and all(f.status != "theirs" for d in again.devices
                                   for f in d.fields)


def test_a_merge_refuses_when_the_devices_changed_since_they_were_compared(
        catalog, dbs, tmp_path, monkeypatch):
    path = tmp_path / "mine.db"
    plan = sharing._plan_merge
    edited = []

    def meanwhile(*args, **kwargs):
        result = plan(*args, **kwargs)
        device_id = sorted(result.expected)[0]           # a device the merge will write
        conn = sqlite3.connect(path)                      # another program edits it
        conn.execute("UPDATE device_values SET note = 'edited' WHERE id = "
                     "(SELECT max(id) FROM device_values WHERE device_id = ?)", [device_id])
        conn.commit()
        conn.close()
        edited.append(file_hash(path))
        return result
    monkeypatch.setattr(sharing, "_plan_merge", meanwhile)
    with pytest.raises(DeviceEditError, match="changed while merging"):
        catalog.merge(dbs / "theirs.db", policy="mine")
    assert file_hash(path) == edited[0]                   # the merge wrote nothing
    db = _open(path)
    assert db.execute("SELECT count(*) FROM devices WHERE origin = 'imported'").fetchone() \
        == (0,)
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'").fetchone() \
        == (4,)
    db.close()


def test_digests_name_the_fields_that_differ():
    a = {"sms": [(13, "count", "s", "w", "document", None, True, None)],
         "x,y:%": [(1.5, "Hz", None, None, "user", None, 1, None)],
         "empty": []}
    b = dict(a, sms=[(14, "count", "s", "w", "document", None, True, None)],
             new=[("v", "text", None, None, None, None, True, None)])
    da, db_ = device_digest("gpu", None, [], a), device_digest("gpu", None, [], b)
    assert differing_fields(parts(da), parts(db_)) == {"sms", "new"}
    assert device_digest("gpu", None, [], {k: v for k, v in a.items() if v}) == da
    # A flag given as True or 1 is the same record.
    c = dict(a, **{"x,y:%": [(1.5, "Hz", None, None, "user", None, True, None)]})
    assert device_digest("gpu", None, [], c) == da
    assert patched(da, None, {"sms": field_entry("sms", b["sms"]),
                              "new": field_entry("new", b["new"])}) == db_
    assert parts("0123456789abcdef" * 2) is None and parts(None) is None



@pytest.mark.parametrize("seed", range(4))
def test_patching_many_entries_at_once_gives_what_patching_by_search_gives(seed,
                                                                            monkeypatch):
    """patched splits the digest once for many entries: the same text as finding each
    entry's ",key:" in it, on well-formed digests (fields replaced, added, names that need
    escaping, a new head) and on digests another program wrote (a key twice, an entry of
    another length, a part without a colon, unsorted parts)."""
    from gpumodeler.db import digests
    rng = random.Random(seed)
    names = [f"f{i:02d}" for i in range(30)] + ["odd,name:%é", "a.b", "a", "Ω"]

    def entry(name):
        return f"{digests.field_key(name)}:{rng.getrandbits(64):016x}"
    cases = []
    for _ in range(50):
        held = rng.sample(names, rng.randint(1, len(names)))
        digest = ",".join([digests.head_part("gpu", None, ["x"]), *sorted(map(entry, held))])
        damage = rng.random()
        if damage < 0.15:      # a key twice, the second unsorted
            digest += "," + entry(rng.choice(held))
        elif damage < 0.25:    # an entry of another length
            digest = digest.replace(":", ":ab", 1) if rng.random() < 0.5 else digest + ",f00:1"
        elif damage < 0.3:     # a part without a colon, and unsorted
            digest += ",nocolon,a.b:" + "0" * 16
        picked = rng.sample(names, rng.randint(digests._MANY_ENTRIES, len(names)))
        head = digests.head_part("gpu", "fam", ["y"]) if rng.random() < 0.3 else None
        cases.append((digest, head, {name: entry(name) for name in picked}))
    split = [digests.patched(*case) for case in cases]
    monkeypatch.setattr(digests, "_MANY_ENTRIES", 10 ** 9)    # the search, always
    assert split == [digests.patched(*case) for case in cases]

def test_a_field_digest_hashes_the_flags_as_stored_whatever_their_type():
    """The entry is BLAKE2b-64 of the repr of the records with each default flag as the 0
    or 1 stored (digests.py): written out here, so a shortcut cannot change what files hold."""
    import hashlib
    stored = [(1.5, "Hz", "doc-1", "T1", "document", None, 1, None),
              (2, "Hz", None, None, "measurement", "n", 0, "bench")]
    expected = "clock:" + hashlib.blake2b(repr(stored).encode(), digest_size=8).hexdigest()
    as_bools = [r[:6] + (bool(r[6]),) + r[7:] for r in stored]
    mixed = [as_bools[0], stored[1]]
    for records in (stored, tuple(stored), as_bools, mixed, iter(mixed)):
        assert field_entry("clock", records) == expected
    assert field_entry("clock", [stored[0][:6] + (2,) + stored[0][7:]]) == field_entry(
        "clock", [stored[0]])                      # any true flag is stored as 1
    assert field_entry("clock", stored[:1]) != field_entry("clock", [stored[0][:6] + (0,)
                                                                    + stored[0][7:]])


BAD = ["truncated", "corrupted", "foreign sqlite", "future version", "other format"]


@pytest.mark.parametrize("kind", BAD)
def test_large_files_get_a_structural_check_and_are_still_refused(kind, tmp_path, shipped_db,
                                                                   monkeypatch):
    from test_schema import BAD_FILES
    monkeypatch.setattr(schema, "QUICK_CHECK_MAX_BYTES", 0)   # every file counts as large
    make, message = BAD_FILES[kind]
    path = tmp_path / "bad.db"
    make(path, shipped_db) if make.__code__.co_argcount == 2 else make(path)
    before = file_hash(path)
    with Catalog(user_db=tmp_path / "u.db", shipped_db=shipped_db) as catalog:
        for attempt in (lambda: catalog.import_file(path),
                        lambda: catalog.merge(path, policy="theirs"),
                        lambda: diff(shipped_db, path)):
            with pytest.raises(DatabaseFormatError, match=message):
                attempt()
    assert file_hash(path) == before and not (tmp_path / "u.db").exists()


def test_damage_found_while_reading_a_large_file_is_a_format_error(dbs, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setattr(schema, "QUICK_CHECK_MAX_BYTES", 0)
    path = tmp_path / "theirs.db"
    data = bytearray((dbs / "theirs.db").read_bytes())
    for i in range(len(data) // 2, len(data) * 9 // 10):   # pages of records, not the schema
        data[i] = 0xA5
    path.write_bytes(bytes(data))
    user = tmp_path / "mine.db"
    shutil.copy(dbs / "mine.db", user)
    before = file_hash(user)
    with Catalog(user_db=user, use_shipped=False) as catalog:
        with pytest.raises(DatabaseFormatError, match="corrupted") as info:
            catalog.merge(path, policy="both")
    assert str(path) in str(info.value)
    assert file_hash(user) == before


def test_the_digest_triggers_come_back_after_a_failedwrite_database(dbs, tmp_path):
    path = tmp_path / "x.db"
    shutil.copy(dbs / "shipped.db", path)
    db = open_database(path, writable=True)
    before = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
                        "ORDER BY name").fetchall()
    with pytest.raises(RuntimeError, match="boom"):
        with db.atomic():
            with schema.digest_triggers_suspended(db):
                raise RuntimeError("boom")
    with db.atomic():
        with schema.digest_triggers_suspended(db):
            pass
    after = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
                       "ORDER BY name").fetchall()
    db.close()
    assert after == before and len(before) == 4


def test_identical_devices_are_not_read(dbs, tmp_path, monkeypatch):
    """Only the fields that differ are loaded: an unchanged database costs no records."""
    from gpumodeler.db import comparison
    asked = []
    real = comparison.read_records

    swept = []

    def spy(db, wanted, **options):
        asked.append(dict(wanted))
        swept.append(set(options.get("scan", ())))
        return real(db, wanted, **options)
    monkeypatch.setattr(comparison, "read_records", spy)
    shutil.copy(dbs / "mine.db", tmp_path / "copy.db")
    assert diff(dbs / "mine.db", tmp_path / "copy.db").counts()["identical"] > 1900
    assert asked == []
    diff(dbs / "mine.db", dbs / "theirs.db")
    theirs_asked = asked[-1]
    assert None not in theirs_asked.values()            # fields, never whole devices,
    fields = sum(len(names) for names in theirs_asked.values())
    assert 0 < fields < N_DEVICES * 7 / 2               # and far from all of them,
    # read by sweeping the devices where many fields differ, by probes elsewhere.
    assert 0 < len(swept[-1]) < len(theirs_asked)
