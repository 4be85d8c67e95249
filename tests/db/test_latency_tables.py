"""Latency tables in the device database (kind "latency_table"): the documents' tables equal
core's reference TABLES, published tables cite every value, the catalog maps a table back to
core's LatencyTable, a user's own table is usable by key, and schema version 2 migrates."""
import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.kernel.latency_tables import TABLES, LatencyTable
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.errors import DeviceNotFound
from gpumodeler.db.fields import FIELDS
from gpumodeler.db.mapping import latency_table_fields, record_to_latency_table
from gpumodeler.db.records import ValueRecord
from gpumodeler.db.schema import (KNOWN_MIGRATIONS, SCHEMA_VERSION, migrations,
                                  open_database)
from gpumodeler.db.store import read_device, read_raw

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "devices.db"
SAXPY2 = REPO / "resources" / "kernels" / "saxpy2-maxwell.json"


@pytest.fixture
def shipped(tmp_path):
    with Catalog(user_db=tmp_path / "user.db", shipped_db=SHIPPED) as catalog:
        yield catalog


@pytest.mark.parametrize("key", sorted(TABLES))
def test_the_documents_tables_equal_core_tables(shipped, key):
    """One value per field, the same as core's reference copy: the two cannot drift."""
    table = shipped.latency_table(key)
    core = TABLES[key]
    assert table == replace(core, source=table.source, notes=table.notes)
    device = shipped.get(key)
    for field_name, value in latency_table_fields(core).items():
        assert device.value(field_name) == value, field_name
    # core's per-table notes and source are, in the database, each value's note and where
    assert table.source.startswith(("T. Gajger", "V. Volkov"))


def test_every_shipped_latency_value_has_provenance(shipped):
    keys = shipped.latency_table_keys()
    assert set(TABLES) <= set(keys)
    for key in keys:
        device = shipped.get(key)
        assert device.kind == "latency_table" and device.aliases
        known = 0
        for field_name, records in device.values.items():
            assert field_name in FIELDS["latency_table"]
            for r in records:
                assert r.unit == FIELDS["latency_table"][field_name]
                if r.value is None:
                    continue
                known += 1
                # the documents' tables are documents; the published ones grade each figure
                # (tests/db/test_published_latency.py checks them against the sources)
                assert r.provenance == "document" or key not in TABLES, (key, field_name)
                assert r.source in device.sources and device.sources[r.source].strip()
                assert r.where and r.where.strip(), (key, field_name)
        assert known > 1, key


def test_gpu_records_name_tables_the_database_has(shipped):
    keys = set(shipped.latency_table_keys())
    for summary in shipped.list("gpu"):
        for r in shipped.get(summary.name).values.get("latency_table", ()):
            assert r.value is None or r.value in keys, (summary.name, r.value)


def test_a_missing_table_lists_the_keys(shipped):
    with pytest.raises(DeviceNotFound) as err:
        shipped.latency_table("pascal-nobody")
    assert "maxwell-gajger" in str(err.value) and "kepler-volkov" in str(err.value)
    # a GPU's name is not a latency table, and keys are not prefix-matched
    with pytest.raises(DeviceNotFound):
        shipped.latency_table("GeForce GTX 970")
    with pytest.raises(DeviceNotFound):
        shipped.latency_table("maxwell")
    # the readable alias names the table too
    assert shipped.latency_table("Maxwell GM107 (Gajger)").key == "maxwell-gajger"


def _my_table_values():
    return {
        "architecture": "Pascal",
        "lat_fp32_add": ValueRecord(6, "cycle", None, "my bench, FADD chain", "measurement",
                                    None, True, "pchase run 2024-05"),
        "lat_int_div": None,
        "mem_dram": 400,
        "mem_shared": 24.5,
        "ilp_cycles": 1,
        "block_replacement_cycles": 180,
        "cuda_core_default_cycles": 6,
    }


def test_a_user_table_round_trips_and_maps_to_core(tmp_path):
    with Catalog(user_db=tmp_path / "user.db", use_shipped=False) as catalog:
        catalog.add_device("latency_table", "pascal-mine", aliases=["My Pascal"],
                           values=_my_table_values())
    db = open_database(tmp_path / "user.db")
    device = read_device(db, "pascal-mine")
    raw = read_raw(db)["pascal-mine"]
    db.close()
    assert raw.kind == "latency_table"
    assert device.values["mem_shared"][0] == ValueRecord(24.5, "cycle", provenance="user",
                                                         is_default=True)
    table = record_to_latency_table(device)
    assert isinstance(table, LatencyTable)
    assert table.key == "pascal-mine" and table.name == "My Pascal"
    assert table.architecture == "Pascal"
    assert table.instruction_cycles == {"fp32_add": 6}
    assert table.memory_cycles == {"dram": 400, "shared": 24.5}
    assert (table.ilp_cycles, table.block_replacement_cycles, table.branch_taken_cycles) == (
        1, 180, None)
    assert table.instruction("int_mul") == 6          # the CUDA-core default applies
    assert "pchase run 2024-05" in table.source


def test_a_user_table_is_refused_with_a_wrong_unit(tmp_path):
    from gpumodeler.db.errors import DeviceEditError
    with Catalog(user_db=tmp_path / "user.db", use_shipped=False) as catalog:
        with pytest.raises(DeviceEditError, match="cycle"):
            catalog.add_device("latency_table", "bad", values={
                "mem_dram": ValueRecord(400, "s", provenance="user")})
        with pytest.raises(DeviceEditError, match="unknown field"):
            catalog.add_device("latency_table", "bad", values={"sms": 4})


def test_graph_cli_uses_a_table_only_the_database_has(tmp_path, monkeypatch, capsys):
    """saxpy2 with a user's copy of Gajger's Maxwell table under a new key gives Gajger's
    eq. 5.1, through `--table` and through the graph's own latency_table."""
    user = tmp_path / "user.db"
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(SHIPPED))
    monkeypatch.setenv("GPUMODELER_USER_DB", str(user))
    values = {f: v for f, v in latency_table_fields(TABLES["maxwell-gajger"]).items()
              if v is not None}
    with Catalog() as catalog:
        catalog.add_device("latency_table", "gm107-copy", values=values)
    assert main(["graph", str(SAXPY2), "--table", "gm107-copy", "--set", "a=128",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["latency_bound_formula"] == "942 + 24·a"
    assert out["latency_table"] == "gm107-copy"

    graph = json.loads(SAXPY2.read_text(encoding="utf-8"))
    graph["latency_table"] = "gm107-copy"
    own = tmp_path / "own.json"
    own.write_text(json.dumps(graph), encoding="utf-8")
    assert main(["graph", str(own), "--set", "a=128", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["latency_bound_cycles"] == 4014

    assert main(["graph", str(SAXPY2), "--table", "no-such-table"]) != 0
    err = capsys.readouterr().err
    assert "no-such-table" in err and "maxwell-gajger" in err


def test_devices_show_and_list_a_latency_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(SHIPPED))
    monkeypatch.setenv("GPUMODELER_USER_DB", str(tmp_path / "user.db"))
    assert main(["devices", "show", "kepler-volkov"]) == 0
    out = capsys.readouterr().out
    assert "kind: latency_table" in out
    line = next(l for l in out.splitlines() if l.split()[:1] == ["mem_dram_random"])
    assert "1213" in line and "cycle" in line and "Table 6.2" in line
    assert main(["devices", "list", "--kind", "latency_table"]) == 0
    out = capsys.readouterr().out
    assert "maxwell-gajger" in out and "GeForce" not in out


# --- migration from schema version 2 -------------------------------------------------------

def _version_2_db(path):
    """A database exactly as gpumodeler with schema version 2 left it, with one GPU."""
    import sqlite_utils
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    db = sqlite_utils.Database(conn)
    migrations.apply(db, stop_before="m003_latency_table_kind")
    db.execute("UPDATE meta SET value = '2' WHERE key = 'version'")
    db.execute("INSERT INTO sources VALUES ('gajger2017', 'T. Gajger, MSc thesis, 2017')")
    db.execute("INSERT INTO devices (id, kind, name, name_lower, aliases, family, origin, "
               "created, modified) VALUES (1, 'gpu', 'Old GPU', 'old gpu', '[\"og\"]', "
               "'Maxwell', 'user', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')")
    db.execute("INSERT INTO device_values VALUES "
               "(1, 1, 'sms', 13, 'count', 'gajger2017', NULL, 'Table 6.1', 'document', "
               "NULL, 1, 0), "
               "(2, 1, 'latency_table', 'maxwell-gajger', 'text', 'gajger2017', NULL, "
               "'Table 6.1', 'document', NULL, 1, 1)")
    from gpumodeler.db.store import refresh_content_hashes
    refresh_content_hashes(db)
    conn.commit()
    with pytest.raises(sqlite3.IntegrityError):   # version 2 refuses the new kind
        db.execute("INSERT INTO devices (kind, name, name_lower, origin, created, modified) "
                   "VALUES ('latency_table', 'x', 'x', 'user', 't', 't')")
    conn.close()
    return path


def test_a_version_2_database_migrates_to_allow_latency_tables(tmp_path):
    path = _version_2_db(tmp_path / "v2.db")
    db = open_database(path)                      # read-only: migrates a copy in memory
    assert read_device(db, "old gpu").value("sms") == 13
    db.close()
    conn = sqlite3.connect(path)
    hash_before = conn.execute("SELECT content_hash FROM devices").fetchone()[0]
    conn.close()
    assert hash_before
    with Catalog(user_db=path, use_shipped=False) as catalog:
        catalog.add_device("latency_table", "my-table", values={"mem_dram": 400})
        assert catalog.latency_table("my-table").memory_cycles == {"dram": 400}
        assert catalog.get("og").value("latency_table") == "maxwell-gajger"
    db = open_database(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]
    applied = [r[0] for r in db.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    hashes = dict(db.execute("SELECT name, content_hash FROM devices").fetchall())
    triggers = {r[0] for r in db.execute("SELECT name FROM sqlite_master "
                                         "WHERE type = 'trigger'")}
    fk_problems = db.execute("PRAGMA foreign_key_check").fetchall()
    db.close()
    assert int(version) == SCHEMA_VERSION == len(KNOWN_MIGRATIONS)
    assert applied == list(KNOWN_MIGRATIONS)
    assert hashes["Old GPU"] == hash_before       # the rebuild kept the digest
    assert all(hashes.values())
    assert {"device_values_insert_clears_hash", "devices_update_clears_hash"} <= triggers
    assert fk_problems == []
    # foreign keys still cascade after the rebuild
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("DELETE FROM devices WHERE name = 'Old GPU'")
    left = conn.execute("SELECT count(*) FROM device_values WHERE device_id = 1").fetchone()
    conn.close()
    assert left == (0,)
