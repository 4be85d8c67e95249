"""A device database whose bytes passed the full check (quick_check, no binary values) in
this process is not read page by page again when opened again (db/schema.py,
content_digest): any change to the file, a -wal or -journal beside it, or a digest pushed
out of the bounded list makes the next open check it whole again."""
import shutil
import sqlite3

import pytest

from gpumodeler.db import schema
from gpumodeler.db.errors import DatabaseFormatError


@pytest.fixture
def full_checks(monkeypatch):
    """The files the full check read page by page, in order."""
    checked = []
    real = schema._refuse_binary_values
    monkeypatch.setattr(schema, "_refuse_binary_values",
                        lambda db, path: checked.append(path.name) or real(db, path))
    monkeypatch.setattr(schema, "_fully_checked", {})
    return checked


def _copy(devices_db, tmp_path, name, mark=None):
    """A copy of the device database; with ``mark``, bytes of its own (a meta row more)."""
    path = tmp_path / name
    shutil.copyfile(devices_db, path)
    if mark is not None:
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('test_copy', ?)",
                         (str(mark),))
        conn.close()
    return path


def test_the_same_bytes_are_checked_once(devices_db, tmp_path, full_checks):
    path = _copy(devices_db, tmp_path, "a.db")
    for _ in range(3):
        schema.open_database(path).close()
    assert full_checks == ["a.db"]
    # another file with the same bytes passed the same checks
    schema.open_database(_copy(devices_db, tmp_path, "b.db")).close()
    assert full_checks == ["a.db"]
    # the structure level never reads every page, so it remembers nothing
    other = _copy(devices_db, tmp_path, "c.db", mark="c")
    schema.open_database(other, integrity="structure").close()
    schema.open_database(other).close()
    assert full_checks == ["a.db", "c.db"]


def test_a_changed_file_is_checked_whole_again_and_its_damage_found(devices_db, tmp_path,
                                                                    full_checks):
    path = _copy(devices_db, tmp_path, "a.db")
    schema.open_database(path).close()
    size = path.stat().st_size
    conn = sqlite3.connect(path)   # another program puts binary data in a record
    with conn:
        conn.execute("UPDATE devices SET family = x'00ff' WHERE id = (SELECT min(id) FROM devices)")
    conn.close()
    assert path.stat().st_size == size       # the same size: only the bytes tell
    with pytest.raises(DatabaseFormatError, match="binary data"):
        schema.open_database(path)
    assert full_checks == ["a.db", "a.db"]


@pytest.mark.parametrize("suffix", ["-journal", "-wal"])
def test_a_file_with_a_log_beside_it_is_always_checked_whole(devices_db, tmp_path, full_checks,
                                                            suffix):
    path = _copy(devices_db, tmp_path, "a.db")
    schema.open_database(path).close()
    log = path.with_name(path.name + suffix)
    log.write_bytes(b"")     # even an empty one: SQLite may read it
    assert schema.content_digest(path) is None
    schema.open_database(path).close()
    schema.open_database(path).close()
    assert full_checks == ["a.db"] * 3
    log.unlink()
    schema.open_database(path).close()
    assert full_checks == ["a.db"] * 3


def test_the_list_of_checked_files_is_bounded(devices_db, tmp_path, full_checks, monkeypatch):
    monkeypatch.setattr(schema, "FULLY_CHECKED_MAX", 2)
    paths = []
    for i in range(3):   # three different files (one meta value apart)
        path = _copy(devices_db, tmp_path, f"{i}.db", mark=i)
        paths.append(path)
        schema.open_database(path).close()
    assert len(schema._fully_checked) == 2
    schema.open_database(paths[2]).close()     # kept
    schema.open_database(paths[0]).close()     # pushed out by the third: checked again
    assert full_checks == ["0.db", "1.db", "2.db", "0.db"]
