"""The device store against kills, concurrent writers, full disks, damaged versions and
read-only opens of files in WAL mode: the CLI exits 0 or 2 with one line, the previous
content stays intact, and reading never creates a file beside its input."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from device_fixtures import file_hash
from gpumodeler.cli.main import main
from gpumodeler.db import locking, schema
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.errors import DatabaseAccessError
from repetitions import repetitions

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(shipped_db, tmp_path, monkeypatch):
    """The CLI on the fixture shipped database; a user database holding a device of its
    own; a colleague's export with another one. Returns (user db, share)."""
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(shipped_db))
    user = tmp_path / "home" / "user-devices.db"
    monkeypatch.setenv("GPUMODELER_USER_DB", str(user))
    with Catalog(user_db=tmp_path / "friend.db") as friend:
        friend.add_device("link", "Lab Link", values={"lanes": 6})
        friend.set_value("gtx 970", "sms", 14, source_text="friend's count")
        friend.export(["lab link", "gtx 970"], tmp_path / "share.db")
    with Catalog() as mine:
        mine.add_device("host", "My Host")
    return user, tmp_path / "share.db"


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _cli(env_vars, *argv, timeout=120):
    return subprocess.run([sys.executable, "-m", "gpumodeler", *argv], capture_output=True,
                          text=True, timeout=timeout,
                          env={**os.environ, **env_vars, "PYTHONPATH": str(REPO)})


def _listing(folder):
    """name -> content digest of every file in ``folder``."""
    return {p.name: file_hash(p) for p in folder.iterdir() if p.is_file()}


def _dump(path):
    conn = sqlite3.connect(path)
    try:
        return [conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                for t in ("devices", "device_values", "sources", "calibrations")]
    finally:
        conn.close()


# --- a write killed mid-transaction ---------------------------------------------------

KILLED_WRITE = textwrap.dedent("""
    import os, signal, sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA cache_size = 1")      # spill: changed pages reach the file
    conn.execute("BEGIN")
    conn.execute("UPDATE device_values SET note = hex(randomblob(300))")
    conn.execute("DELETE FROM devices WHERE name = 'My Host'")
    conn.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                 "WHERE i < 20000) INSERT INTO sources SELECT 'k' || i, hex(randomblob(50)) "
                 "FROM n")
    os.kill(os.getpid(), signal.SIGKILL)
""")


def _kill_mid_write(user):
    done = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(user)], timeout=60)
    assert done.returncode == -9
    # a hot journal stays: synced (its header written) before the file was changed
    assert Path(f"{user}-journal").read_bytes()[:8] == bytes.fromhex("d9d505f920a163d7")


def test_a_hot_journal_is_rolled_back_before_anything_reads_the_user_database(env, capsys):
    user, share = env
    before = _dump(user)
    _kill_mid_write(user)
    code, out, err = _run(capsys, "devices", "list", "--json")
    assert (code, err) == (0, "")
    assert "My Host" in [d["name"] for d in json.loads(out)]
    assert not Path(f"{user}-journal").exists() and _dump(user) == before
    code, _, err = _run(capsys, "devices", "merge", str(share), "--take-theirs")
    assert (code, err) == (0, "")


def test_a_hot_journal_in_a_file_that_cannot_be_written_is_one_clear_line(env, capsys,
                                                                          monkeypatch):
    user, _ = env
    _kill_mid_write(user)
    journal = Path(f"{user}-journal").read_bytes()
    connect = sqlite3.connect

    def read_only(database, *args, **kwargs):    # as for a file the user may not write
        if isinstance(database, str) and database.startswith(user.as_uri()):
            database = database.replace("mode=rw", "mode=ro")
        return connect(database, *args, **kwargs)
    monkeypatch.setattr(sqlite3, "connect", read_only)
    code, out, err = _run(capsys, "devices", "list")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert str(user) in err and "cannot be opened for writing" in err and "writable" in err
    assert Path(f"{user}-journal").read_bytes() == journal     # left for a later rollback


def test_a_file_to_import_with_a_hot_journal_is_read_from_a_rolled_back_copy(env, capsys):
    _, share = env
    _kill_mid_write(share)
    listing = _listing(share.parent)
    code, out, err = _run(capsys, "devices", "import", str(share), "--json")
    assert (code, err) == (0, "")
    changes = {d["name"]: [f["field"] for f in d["fields"]] for d in json.loads(out)["devices"]}
    assert changes == {"Lab Link": [], "GeForce GTX 970": ["sms"]}    # no half-written notes
    assert _listing(share.parent) == listing   # untouched


# --- concurrent writers ---------------------------------------------------------------

@pytest.mark.parametrize("round_", range(repetitions(2, 5)))
def test_two_merges_at_once_both_succeed(shipped_db, tmp_path, round_):
    with Catalog(user_db=tmp_path / "friend.db", shipped_db=shipped_db) as friend:
        friend.add_device("link", f"Lab Link {round_}", values={"lanes": 6})
        friend.set_value("gtx 970", "sms", 14, source_text="friend's count")
        friend.export([f"lab link {round_}", "gtx 970"], tmp_path / "share.db")
    user = tmp_path / "fresh" / "user-devices.db"       # created by one of them
    env_vars = {"GPUMODELER_DEVICES_DB": str(shipped_db), "GPUMODELER_USER_DB": str(user)}
    procs = [subprocess.Popen([sys.executable, "-m", "gpumodeler", "devices", "merge",
                               str(tmp_path / "share.db"), "--take-theirs"],
                              env={**os.environ, **env_vars, "PYTHONPATH": str(REPO)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(p.wait(timeout=180), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert results == [(0, ""), (0, "")]
    with Catalog(user_db=user, shipped_db=shipped_db) as merged:
        assert merged.get(f"lab link {round_}").origin == "imported"
        assert merged.get("gtx 970").values["sms"][-1].value == 14
    assert sorted(p.name for p in user.parent.iterdir()) == ["user-devices.db"]


def test_a_writer_waiting_too_long_names_the_file_and_who_holds_it(env, monkeypatch, capsys):
    user, share = env
    monkeypatch.setattr(locking, "LOCK_TIMEOUT_S", 0.3)
    before = file_hash(user)
    with locking.write_lock(user):
        with pytest.raises(DatabaseAccessError, match=f"locked by process {os.getpid()}"):
            with locking.write_lock(user):
                pass
        code, out, err = _run(capsys, "devices", "merge", str(share), "--take-theirs")
    assert code == 2 and err.count("\n") == 1 and str(user) in err and "locked by" in err
    assert file_hash(user) == before and not locking.lock_path(user).exists()


def test_the_lock_file_of_a_killed_writer_is_taken_and_removed(env, capsys):
    user, share = env
    locking.lock_path(user).write_text("999999 gpumodeler devices merge\n")   # nobody holds it
    code, _, err = _run(capsys, "devices", "merge", str(share), "--take-theirs")
    assert (code, err) == (0, "") and not locking.lock_path(user).exists()


def test_a_database_another_program_keeps_locked_is_one_line(env, capsys, monkeypatch):
    user, share = env
    monkeypatch.setattr(schema, "BUSY_TIMEOUT_S", 0.2)
    before = file_hash(user)
    other = sqlite3.connect(user, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")        # as the sqlite3 shell or a viewer could
    try:
        for argv in (["list"], ["merge", str(share), "--take-theirs"]):
            code, out, err = _run(capsys, "devices", *argv)
            assert code == 2 and err.count("\n") == 1, err
            assert str(user) in err and "locked by another program" in err
            assert "corrupted" not in err
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert file_hash(user) == before


def test_a_new_user_database_appears_whole_or_not_at_all(shipped_db, tmp_path, monkeypatch):
    user = tmp_path / "new" / "user-devices.db"
    seen = []
    create = schema.create_database

    def watching(path, **kwargs):
        db = create(path, **kwargs)
        seen.append(user.exists())          # while it is being made
        return db
    monkeypatch.setattr(schema, "create_database", watching)
    with Catalog(user_db=user, shipped_db=shipped_db) as catalog:
        catalog.add_device("host", "H")
    assert seen == [False] and sorted(p.name for p in user.parent.iterdir()) == [user.name]


# --- full disk, damaged versions --------------------------------------------------------

def _full_disk(monkeypatch, user):
    """Every connection that writes ``user`` may not make it grow (a full disk)."""
    connect = schema._connect_writable

    def full(path):
        db = connect(path)
        if Path(path) == user:
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            db.execute(f"PRAGMA max_page_count = {pages}")
        return db
    monkeypatch.setattr(schema, "_connect_writable", full)


def test_a_full_disk_during_a_merge_is_one_line_and_changes_nothing(env, tmp_path, capsys,
                                                                    monkeypatch):
    user, _ = env
    share = tmp_path / "big-share.db"
    with Catalog(user_db=tmp_path / "friend.db") as friend:      # more than a page
        friend.add_device("gpu", "Big GPU", values={"sms": 80})
        friend.set_value("big gpu", "sms", 81, note="measured " * 2000)
        friend.export(["big gpu", "lab link"], share)
    before = file_hash(user)
    _full_disk(monkeypatch, user)
    code, out, err = _run(capsys, "devices", "merge", str(share), "--take-theirs")
    assert code == 2 and err.count("\n") == 1
    assert str(user) in err and "disk is full" in err and "nothing was changed" in err
    assert file_hash(user) == before


def test_a_full_disk_during_calibrate_save_is_one_line_and_changes_nothing(env, tmp_path,
                                                                          capsys, monkeypatch):
    user, _ = env
    sizes = [4.0 * 2 ** (k / 2) for k in range(60)]     # residuals filling pages
    copies = [{"kind": "transfer", "direction": "htod", "size_bytes": n,
               "time_s": 4e-6 + n / 1.2e10 * (1 + 0.01 * (-1) ** i),
               "memory_kind": "pinned", "source": "copies.json", "row": i + 2}
              for i, n in enumerate(sizes)]
    measurements = tmp_path / "copies.json"
    measurements.write_text(json.dumps(copies))
    argv = ["calibrate", "link", "--measurements", str(measurements), "--direction", "htod",
            "--save", "--link", "PCIe 3.0 x16"]
    before = file_hash(user)
    with monkeypatch.context() as patch:
        _full_disk(patch, user)
        code, out, err = _run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1, err
    assert str(user) in err and "disk is full" in err
    assert file_hash(user) == before
    code, _, err = _run(capsys, *argv)        # with room, the same command stores it
    assert (code, err) == (0, "")
    assert file_hash(user) != before


def test_a_full_disk_during_an_export_is_one_line_and_leaves_no_file(env, tmp_path, capsys,
                                                                     monkeypatch):
    from gpumodeler.db import sharing

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr(sharing, "copy_devices", full)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = _run(capsys, "devices", "export", "gtx 970", "-o", str(out_dir / "x.db"))
    assert code == 2 and err.count("\n") == 1 and "x.db" in err and "disk is full" in err
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize("version", [None, "three", "", -1, 2.5e300])
def test_an_unreadable_version_is_one_line(env, capsys, version):
    user, share = env
    conn = sqlite3.connect(share)
    with conn:      # meta rebuilt without NOT NULL, as another program could
        conn.execute("CREATE TABLE meta2 (key TEXT PRIMARY KEY, value)")
        conn.execute("INSERT INTO meta2 SELECT key, value FROM meta")
        conn.execute("DROP TABLE meta")
        conn.execute("ALTER TABLE meta2 RENAME TO meta")
        conn.execute("UPDATE meta SET value = ? WHERE key = 'version'", [version])
    conn.close()
    before = file_hash(share)
    for argv in (["import", str(share)], ["merge", str(share), "--keep-mine"],
                 ["list", "--user-db", str(share)]):
        code, out, err = _run(capsys, "devices", *argv)
        assert code == 2 and err.count("\n") == 1, err
        assert str(share) in err and "schema version" in err
    assert file_hash(share) == before


# --- read-only opens in WAL mode ---------------------------------------------------------

def _wal_with_log(path, folder, change):
    """A copy of ``path`` in ``folder`` in WAL mode whose last change (``change``, SQL) is
    only in the -wal beside it (no -shm): what a killed writer, or a copy of a live file,
    leaves."""
    folder.mkdir()
    work = folder.parent / "work"
    work.mkdir(exist_ok=True)
    live = work / path.name
    live.write_bytes(path.read_bytes())
    conn = sqlite3.connect(live, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute(change)
    target = folder / path.name
    target.write_bytes(live.read_bytes())
    log = Path(f"{live}-wal").read_bytes()
    assert log
    Path(f"{target}-wal").write_bytes(log)
    conn.close()
    assert target.read_bytes()[18] == 2
    return target


def test_reading_a_wal_device_database_creates_no_file_beside_it(env, tmp_path, capsys):
    _, share = env
    wal = _wal_with_log(share, tmp_path / "shared", "UPDATE devices SET name = 'Lab Link X', "
                        "name_lower = 'lab link x' WHERE name = 'Lab Link'")
    listing = _listing(wal.parent)
    assert sorted(listing) == ["share.db", "share.db-wal"]
    for argv in (["import", str(wal), "--json"], ["diff", str(wal), str(share)],
                 ["show", "lab link x", "--devices-db", str(wal), "--json"],
                 ["list", "--devices-db", str(wal)]):
        code, out, err = _run(capsys, "devices", *argv)
        assert (code, err) == (0, ""), argv
        assert "Lab Link X" in out              # the change only the -wal holds was read
        assert _listing(wal.parent) == listing, argv
    code, _, err = _run(capsys, "devices", "merge", str(wal), "--take-theirs")
    assert (code, err) == (0, "")
    assert _listing(wal.parent) == listing
    with Catalog() as merged:
        assert merged.get("lab link x").origin == "imported"


def test_reading_a_wal_project_creates_no_file_beside_it(tmp_path, capsys):
    example = REPO / "resources" / "examples" / "saxpy2-gtx970.gpm"
    wal = _wal_with_log(example, tmp_path / "project",
                        "UPDATE meta SET value = '0.0.7' WHERE key = 'app_version'")
    listing = _listing(wal.parent)
    code, out, err = _run(capsys, "project", "show", str(wal))
    assert (code, err) == (0, "")
    assert "saved by gpumodeler 0.0.7" in out       # the change only the -wal holds
    assert _listing(wal.parent) == listing
    for argv in (["timeline", str(wal)], ["report", str(wal), "--output",
                                          str(tmp_path / "report.html")]):
        code, out, err = _run(capsys, *argv)
        assert (code, err) == (0, "")
        assert _listing(wal.parent) == listing, argv
    assert not list(Path(tempfile.gettempdir()).glob(f"gpumodeler-read-*/{wal.name}"))
