"""store.rewrite_fields puts appended records after each device's last row (whatever gaps
earlier rewrites left in the row orders), starts a device without rows at 0, and leaves
every other row alone."""
import pytest

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


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 129, 200])
def test_rows_inserted_in_batches_are_the_rows_one_by_one_writes(tmp_path, count):
    """store.insert_value_rows writes 64 rows a statement: the same rows, with the same
    ids, values and types, as INSERT_VALUE_SQL row by row, for counts around a batch and
    awkward values (NaN, infinities, huge and negative numbers, unicode, empty text,
    unknowns, records repeated but for their row order)."""
    import random
    from gpumodeler.db.mapping import INSERT_VALUE_SQL
    from gpumodeler.db.store import insert_value_rows
    rng = random.Random(count)
    values = [None, 0, -0.0, 1.5, float("nan"), float("inf"), -float("inf"), 2 ** 62,
              -(2 ** 63), "", "Ωmega ünicode", "x" * 300, 1]
    tables = []
    for way in ("batches", "one by one"):
        db = create_database(tmp_path / f"{way}.db")
        with db.atomic():
            ids = [write_device(db, _device(f"D{i}", {})) for i in range(3)]
            rows = [(rng.choice(ids), rng.choice(["a", "b", "ünï"]), rng.choice(values),
                     "hz", rng.choice([None, "doc"]), None, "measurement",
                     rng.choice([None, "n"]), rng.choice([0, 1]), None, n)
                    for n in range(count)]
            rows += [r[:-1] + (count + k,) for k, r in enumerate(rows[:2])]  # repeated
            if way == "batches":
                insert_value_rows(db, rows)
            else:
                db.conn.executemany(INSERT_VALUE_SQL, rows)
        tables.append(db.execute("SELECT *, typeof(value) FROM device_values "
                                 "ORDER BY id").fetchall())
        db.close()
        rng = random.Random(count)
    assert len(tables[0]) == count + min(count, 2)
    assert repr(tables[0]) == repr(tables[1])
