"""store.rewrite_fields puts appended records after each device's last row (whatever gaps
earlier rewrites left in the row orders), starts a device without rows at 0, and leaves
every other row alone."""
from gpumodeler.db.schema import create_database
from gpumodeler.db.store import RawDevice, StoredFields, read_records, rewrite_fields, \
    write_device


def _record(value, default=1):
    return (value, "hz", None, None, "measurement", None, default, None)


def _device(name, values):
    return RawDevice("gpu", name, (), None, "user", values, "2024-01-01T00:00:00Z",
                     "2024-01-01T00:00:00Z")


def test_appended_records_follow_each_devices_last_row(tmp_path):
    db = create_database(tmp_path / "d.db")
    with db.atomic():
        gap = write_device(db, _device("Gap", {"a": [_record(1.0)], "b": [_record(2.0)]}))
        empty = write_device(db, _device("Empty", {}))
        other = write_device(db, _device("Other", {"a": [_record(3.0)]}))
        # A gap in the row orders (as a replaced field leaves): the last row is at 7.
        db.execute("UPDATE device_values SET row_order = 7 WHERE device_id = ? AND field = 'b'",
                   [gap])
    stored = read_records(db, {gap: ["a"], empty: ["a"]}, positions=True)
    with db.atomic():
        rewrite_fields(db, [
            (gap, "a", [_record(1.0, 0), _record(1.5)], stored[gap]),
            (empty, "a", [_record(4.0), _record(5.0, 0)], stored.get(empty) or StoredFields()),
        ])
    rows = db.execute("SELECT device_id, field, value, is_default, row_order "
                      "FROM device_values ORDER BY device_id, row_order").fetchall()
    assert rows == [
        (gap, "a", 1.0, 0, 0), (gap, "b", 2.0, 1, 7), (gap, "a", 1.5, 1, 8),
        (empty, "a", 4.0, 1, 0), (empty, "a", 5.0, 0, 1),
        (other, "a", 3.0, 1, 0),
    ]
    db.close()
