"""A colleague's export whose calibration or value rows are damaged, or hold what
`calibrate --save` or the device editors refuse: `devices import` and `devices merge`
(whatever the policy) report each such row naming the file, table and row, exit 0, and
store nothing of it."""
import json
import sqlite3

import pytest

import sqlite_utils

from device_fixtures import file_hash, write_database
from gpumodeler.cli.main import main
from gpumodeler.db.calibrations import (Calibration, check_raw_calibration, read_calibrations,
                                        save_calibration)
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.errors import DeviceEditError
from gpumodeler.db.schema import open_database

SHA = "ab" * 32
MODEL = {"model": "regimes", "startup_s": 4e-6,
         "regimes": [{"first_size_bytes": 4.0, "last_size_bytes": 1048576.0,
                      "bandwidth_bytes_per_s": 1.03e10}]}


def _link_cal(device="PCIe 3.0 x16"):
    return Calibration(device, "link", "htod", "pageable", MODEL, (), 1.0, 1.8, 1.2,
                       "copies.json", SHA, "2026-11-23T10:00:00Z")


def _kernel_cal(device="GTX 970"):
    return Calibration(device, "kernel", "saxpy2", "default", {"lambda": 0.7}, (), 2.0, 3.0,
                       2.5, "runs.json", SHA, "2026-11-23T11:00:00Z")


@pytest.fixture(scope="module")
def shared_export(shipped_db_master, tmp_path_factory):
    """The colleague's export, made once for the module: each test damages its own copy."""
    folder = tmp_path_factory.mktemp("friend")
    shipped = folder / "devices.db"
    shipped.write_bytes(shipped_db_master.read_bytes())
    with Catalog(user_db=folder / "friend.db", shipped_db=shipped) as friend:
        save_calibration(friend, _link_cal())
        save_calibration(friend, _kernel_cal())
        friend.export(["PCIe 3.0 x16", "GTX 970"], folder / "share.db")
    return (folder / "share.db").read_bytes()


@pytest.fixture
def shared(shared_export, shipped_db, tmp_path, monkeypatch):
    """A colleague's export of a calibrated link and GPU; the CLI set to a fresh user db."""
    (tmp_path / "share.db").write_bytes(shared_export)
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(shipped_db))
    return tmp_path / "share.db"


def _edit(path, *statements):
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA ignore_check_constraints = ON")     # as another program could
    with conn:
        for sql in statements:
            conn.execute(sql)
    conn.close()


LINK_ROW = "(SELECT c.id FROM calibrations c WHERE c.kind = 'link')"
SECOND_CURRENT = (
    "INSERT INTO calibrations (device_id, kind, subject, label, parameters, residuals, "
    "mape_percent, loo_mape, loo_median_ape, measurements_name, measurements_sha256, created, "
    "note, is_current) SELECT device_id, kind, subject, label, parameters, residuals, 9.0, "
    "loo_mape, loo_median_ape, 'other.json', measurements_sha256, '2026-11-25T10:00:00Z', "
    f"note, 1 FROM calibrations WHERE id = {LINK_ROW}")

DAMAGE = {
    "parameters not JSON": ("parameters = 'not json {'", "parameters"),
    "startup as text": ("parameters = json_set(parameters, '$.startup_s', 'fast')",
                        "startup"),
    "a list for the object": ("parameters = '[1, 2]'", "parameters must be an object"),
    "a kernel lambda on a link": ("kind = 'kernel', subject = 'saxpy2', "
                                  "parameters = '{\"lambda\": 0.7}'", "belongs to a gpu"),
    "direction sideways": ("subject = 'sideways'", "htod or dtoh"),
    "empty label": ("label = ''", "label"),
    "text in a number column": ("mape_percent = 'about five'", "mape_percent"),
    "a negative error": ("loo_mape = -1.5", "loo_mape"),
    "a bad digest": ("measurements_sha256 = 'not-a-digest'", "sha256"),
    "current flag 7": ("is_current = 7", "is_current"),
    "NaN in the residuals": ("residuals = '[{\"measured_s\": NaN}]'", "finite JSON"),
}


def _damage(path, case):
    if case == "two current":
        _edit(path, SECOND_CURRENT)
        return "2 current calibrations"
    change, message = DAMAGE[case]
    _edit(path, f"UPDATE calibrations SET {change} WHERE id = {LINK_ROW}")
    return message


def _run(capsys, *argv):
    code = main(["devices", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _stored_rows(user_db):
    db = open_database(user_db)
    try:
        kinds = dict(db.execute("SELECT name_lower, kind FROM devices").fetchall())
        return {key: (kinds[key], rows) for key, (_, rows) in read_calibrations(db).items()}
    finally:
        db.close()


@pytest.mark.parametrize("case", [*DAMAGE, "two current"])
@pytest.mark.parametrize("policy", [["--take-theirs"], ["--keep-both"], ["--keep-mine"]])
def test_a_damaged_calibration_is_reported_and_never_stored(shared, tmp_path, capsys, case,
                                                            policy):
    message = _damage(shared, case)
    before = file_hash(shared)
    user = tmp_path / "user-home" / "user-devices.db"
    code, out, err = _run(capsys, "import", str(shared), "--json")
    assert (code, err) == (0, "")
    problems = json.loads(out)["problems"]
    assert problems and all(str(shared) in p and "table calibrations" in p for p in problems)
    assert any(message in p for p in problems), problems
    code, out, err = _run(capsys, "merge", str(shared), *policy)
    assert (code, err) == (0, ""), err
    assert "refused:" in out and "table calibrations" in out
    stored = _stored_rows(user)
    # the GPU's sound calibration came; nothing of the link's damaged one did
    assert [r[0] for r in stored["geforce gtx 970"][1]] == ["kernel"]
    assert "pcie 3.0 x16" not in stored
    for key, (kind, rows) in stored.items():
        for raw in rows:
            check_raw_calibration(raw, key, kind)     # everything stored passes the rule
    assert file_hash(shared) == before


def test_a_sound_export_reports_no_problem_and_merges_everything(shared, tmp_path, capsys):
    code, out, _ = _run(capsys, "merge", str(shared), "--take-theirs", "--json")
    assert code == 0 and json.loads(out)["problems"] == []
    stored = _stored_rows(tmp_path / "user-home" / "user-devices.db")
    assert sorted(stored) == ["geforce gtx 970", "pcie 3.0 x16"]


def test_diff_reports_damaged_rows_of_either_file(shared, shipped_db, capsys):
    _damage(shared, "parameters not JSON")
    code, out, err = _run(capsys, "diff", str(shipped_db), str(shared), "--json")
    assert (code, err) == (0, "")
    [problem] = json.loads(out)["problems"]
    assert "table calibrations" in problem and "parameters" in problem


@pytest.mark.parametrize("cal, message", [
    (Calibration("PCIe 3.0 x16", "link", "htod", "pageable",
                 {**MODEL, "startup_s": "fast"}, (), None, None, None, "c.json", SHA, "now"),
     "transfer model"),
    (Calibration("GTX 970", "kernel", "saxpy2", "default", {"lambda": -1}, (), None, None,
                 None, "r.json", SHA, "now"), "lambda"),
    (Calibration("GTX 970", "kernel", "saxpy2", "default", {"lambda": 1}, (), "5", None,
                 None, "r.json", SHA, "now"), "mape_percent"),
])
def test_calibrate_save_applies_the_same_rule(catalog, cal, message):
    with pytest.raises(DeviceEditError, match=message):
        save_calibration(catalog, cal)


GTX_ROWS = ("(SELECT v.id FROM device_values v JOIN devices d ON d.id = v.device_id "
            "WHERE d.name = 'GeForce GTX 970' AND v.field = '{}')")
VALUE_DAMAGE = {
    "text in a count": ("device_values", "value = 'thirteen'", "sms",
                        "column value: a field in count needs a number"),
    "an unknown unit": ("device_values", "unit = 'parsecs'", "sms",
                        "column unit: unit must be one of"),
    "an unknown provenance": ("device_values", "provenance = 'rumour'", "sms",
                              "column provenance: unknown provenance 'rumour'"),
    "default flag 5": ("device_values", "is_default = 5", "sms",
                       "column is_default: must be 0 or 1"),
    "an unknown kind": ("devices", "kind = 'spaceship'", None, "'spaceship' is not one of"),
}


@pytest.mark.parametrize("case", VALUE_DAMAGE)
def test_a_device_with_a_damaged_value_is_reported_and_never_stored(shared, shipped_db,
                                                                    tmp_path, capsys, case):
    table, change, field_name, message = VALUE_DAMAGE[case]
    where = (f"id = {GTX_ROWS.format(field_name)}" if field_name
             else "name = 'GeForce GTX 970'")
    _edit(shared, f"UPDATE {table} SET {change} WHERE {where}")
    code, out, err = _run(capsys, "import", str(shared), "--json")
    assert (code, err) == (0, "")
    problem = json.loads(out)["problems"][0]     # (an unknown kind: its calibration too)
    assert f"table {table}, row" in problem and message in problem and str(shared) in problem
    code, out, err = _run(capsys, "merge", str(shared), "--take-theirs")
    assert (code, err) == (0, "") and "refused:" in out
    stored = _stored_rows(tmp_path / "user-home" / "user-devices.db")
    assert sorted(stored) == ["pcie 3.0 x16"]          # the sound device came, with its own
    with Catalog(shipped_db=shipped_db) as mine:
        gtx = mine.get("gtx 970")
        assert gtx.origin == "shipped" and gtx.value("sms") == 13


def test_the_sql_screen_of_value_records_refuses_what_the_editors_rule_refuses(tmp_path):
    """store.refused_devices lets SQLite pick the suspect records: over a matrix of units,
    values, provenances and flags it must refuse exactly what record_problem refuses."""
    from gpumodeler.db.fields import record_problem
    from gpumodeler.db.store import RawDevice, refused_devices
    units = ["count", "Hz", "text", "parsecs", None]
    values = [None, 3, 2.5, -0.0, "x", "", b"\x01", float("inf"), float("-inf"), 10 ** 18]
    provenances = [None, "document", "user", "rumour", 7]
    flags = [0, 1, 2, "1", 1.0]
    cases = [(u, v, p, f) for u in units for v in values for p in provenances for f in flags]
    # Near misses (another case, a space, an empty or non-ASCII text), each column's
    # against every value of the column it is tested with.
    cases += [(u, v, "document", 1) for u in ["TEXT", "hz", "Hz ", "", "µs", 3]
              for v in values]
    cases += [("count", 3, p, f) for p in provenances + ["Document", "", "usér"]
              for f in flags + [0.0, -1, None, "x"]]
    path = tmp_path / "matrix.db"
    write_database(path, [RawDevice("gpu", f"D{i}", (), None, "user", {
        "sms": [(1, "count", None, None, None, None, True, None)]}, "t", "t")
        for i in range(len(cases))], {})
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    with conn:      # device_values rebuilt without its constraints, as another program could
        conn.execute("CREATE TABLE dv2 AS SELECT * FROM device_values")
        conn.execute("DROP TABLE device_values")
        conn.execute("ALTER TABLE dv2 RENAME TO device_values")
        for i, (u, v, p, f) in enumerate(cases):
            conn.execute("UPDATE device_values SET unit = ?, value = ?, provenance = ?, "
                         "is_default = ? WHERE device_id = (SELECT id FROM devices "
                         "WHERE name = ?)", [u, v, p, f, f"D{i}"])
        stored = conn.execute("SELECT d.name_lower, v.unit, v.value, v.provenance, "
                              "v.is_default FROM device_values v JOIN devices d "
                              "ON d.id = v.device_id").fetchall()
    conn.close()
    expected = {key for key, u, v, p, f in stored
                if record_problem(u, v, p) or type(f) is not int or f not in (0, 1)}
    db = sqlite3.connect(path)
    refused, problems = refused_devices(sqlite_utils.Database(db), path)
    db.close()
    assert refused == expected and len(problems) == len(expected)
    assert 0 < len(expected) < len(cases)



def test_the_sql_screen_of_kinds_refuses_what_python_refuses_in_name_order(tmp_path):
    """store.refused_devices lets SQLite pick the devices of an unknown kind: near misses
    (another case, a space, bytes, a number, NULL) are refused as comparing in Python
    refuses them, and listed in name order whatever order the rows are stored in."""
    from gpumodeler.db.fields import KINDS
    from gpumodeler.db.migrations import DIGEST_TRIGGERS
    from gpumodeler.db.store import RawDevice, refused_devices
    kinds = [*KINDS, "GPU", "gpu ", "", "Link", "gpü", None, 3, b"gpu", "rocket"]
    names = [f"Dev {i:02d}" for i in range(len(kinds))][::-1]     # stored against name order
    path = tmp_path / "kinds.db"
    write_database(path, [RawDevice("gpu", name, (), None, "user", {
        "sms": [(1, "count", None, None, None, None, True, None)]}, "t", "t")
        for name in names], {})
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    with conn:      # devices rebuilt without its constraints, as another program could
        for trigger in DIGEST_TRIGGERS:
            conn.execute(f'DROP TRIGGER "{trigger}"')
        conn.execute("CREATE TABLE d2 AS SELECT * FROM devices")
        conn.execute("DROP TABLE devices")
        conn.execute("ALTER TABLE d2 RENAME TO devices")
        for name, kind in zip(names, kinds):
            conn.execute("UPDATE devices SET kind = ? WHERE name = ?", [kind, name])
    conn.close()
    expected = sorted(name.casefold() for name, kind in zip(names, kinds)
                      if kind not in KINDS)
    db = sqlite3.connect(path)
    refused, problems = refused_devices(sqlite_utils.Database(db), path)
    db.close()
    assert sorted(refused) == expected and len(expected) == len(kinds) - len(KINDS)
    assert [p.split("(")[1].split(")")[0].casefold() for p in problems] == expected

def test_their_calibration_never_lands_on_a_device_of_another_kind(shipped_db, tmp_path,
                                                                   capsys):
    """Theirs is a link with a link model, mine a GPU of that name: keeping my kind keeps
    their calibration out (the merge stops, nothing written); taking theirs brings both."""
    with Catalog(user_db=tmp_path / "friend.db", shipped_db=shipped_db) as friend:
        friend.add_device("link", "Bench Box")
        save_calibration(friend, _link_cal("Bench Box"))
        friend.export(["bench box"], tmp_path / "share.db")
    user = tmp_path / "user-home" / "user-devices.db"
    with Catalog(user_db=user, shipped_db=shipped_db) as mine:
        mine.add_device("gpu", "Bench Box", values={"sms": 2})
    before = file_hash(user)
    code, out, err = _run(capsys, "merge", str(tmp_path / "share.db"), "--keep-mine")
    assert code == 2 and err.count("\n") == 1
    assert "belongs to a link and the device stays a gpu" in err
    assert file_hash(user) == before
    code, out, err = _run(capsys, "merge", str(tmp_path / "share.db"), "--take-theirs")
    assert (code, err) == (0, "")
    assert _stored_rows(user)["bench box"][0] == "link"
