"""Learned models in the user database (migration m007, db/learned_models.py): stored with
their provenance, listed, exported and merged like calibrations, hostile content refused."""
from __future__ import annotations

import json

import pytest

from gpumodeler.core.errors import FormatError
from gpumodeler.core.learn.model import fit
from gpumodeler.core.learn.model_file import model_to_text
from gpumodeler.db.errors import DeviceEditError
from gpumodeler.db.learned_models import (export_models, get_model, list_models, merge_models,
                                          save_model, stored_from_text)
from gpumodeler.db.schema import KNOWN_MIGRATIONS
from learn_rows import gpus, rows

FILES = [{"name": "runs.csv", "sha256": "ab" * 32}]


@pytest.fixture(scope="module")
def texts():
    data = rows(gpus(3), analytical=lambda r: 1e-9 * r.threads, time=lambda r: 2e-9 * r.threads)
    return {m: model_to_text(fit(data, m)) for m in ("lr", "hybrid")}


def test_the_migration_is_the_seventh():
    assert KNOWN_MIGRATIONS[-1] == "m007_learned_models" and len(KNOWN_MIGRATIONS) == 7


def test_a_stored_model_keeps_its_provenance(catalog, texts):
    save_model(catalog, stored_from_text("mine", texts["hybrid"], FILES))
    [s] = list_models(catalog)
    assert (s.name, s.method, s.features, s.origin) == ("mine", "hybrid", "analytical", "user")
    assert s.measurements == tuple(FILES) and s.rows == 72 and len(s.gpus) == 3
    model = get_model(catalog, "mine").load()
    assert model.method == "hybrid" and model.training["digest"] == s.training_digest


def test_a_name_is_not_overwritten_unless_asked(catalog, texts):
    save_model(catalog, stored_from_text("m", texts["lr"]))
    with pytest.raises(DeviceEditError, match="stored already"):
        save_model(catalog, stored_from_text("m", texts["hybrid"]))
    assert get_model(catalog, "m").method == "lr"
    save_model(catalog, stored_from_text("m", texts["hybrid"]), replace=True)
    assert get_model(catalog, "m").method == "hybrid"


def test_a_damaged_row_is_refused(catalog, texts):
    save_model(catalog, stored_from_text("m", texts["lr"]))
    with catalog.writing():
        db = catalog.user_for_write()
        with db.atomic():
            db.execute("UPDATE learned_models SET model = json_set(model, '$.seed', 5)")
    with pytest.raises(FormatError, match="digest does not match"):
        get_model(catalog, "m").load()


def test_export_and_merge(catalog, texts):
    save_model(catalog, stored_from_text("a", texts["lr"], FILES))
    save_model(catalog, stored_from_text("b", texts["hybrid"], FILES))
    shared = export_models(catalog)
    assert [m["name"] for m in json.loads(shared)["models"]] == ["a", "b"]
    # the same content: nothing to do
    assert [(x.name, x.action) for x in merge_models(catalog, shared)] == [("a", "same"), ("b", "same")]
    # mine changed: a conflict, kept by default, replaced or kept both on request
    save_model(catalog, stored_from_text("a", texts["hybrid"]), replace=True)
    assert merge_models(catalog, shared)[0].action == "kept-mine"
    assert get_model(catalog, "a").method == "hybrid"
    plan = merge_models(catalog, shared, "both")
    assert (plan[0].action, plan[0].shown_as) == ("added-as", "a (imported 1)")
    assert get_model(catalog, "a (imported 1)").origin == "imported"
    assert merge_models(catalog, shared, "theirs", dry_run=True)[0].action == "replaced"
    assert get_model(catalog, "a").method == "hybrid"  # a dry run writes nothing
    merge_models(catalog, shared, "theirs")
    assert get_model(catalog, "a").method == "lr"


@pytest.mark.parametrize("damage, words", [
    (lambda d: d["models"][0]["model"].update(mean=[float("nan")] * len(d["models"][0]["model"]["mean"])),
     "not a number JSON allows"),
    (lambda d: d["models"][0]["model"].update(method="exec"), "method must be one of"),
    (lambda d: d.update(format="x"), "not a gpumodeler learned models file"),
    (lambda d: d["models"][0].update(measurements="x"), "measurements must be"),
])
def test_a_hostile_shared_file_is_refused_and_nothing_written(catalog, texts, damage, words):
    save_model(catalog, stored_from_text("a", texts["lr"]))
    doc = json.loads(export_models(catalog))
    doc["models"][0]["name"] = "new"
    damage(doc)
    with pytest.raises((FormatError, DeviceEditError), match=words):
        merge_models(catalog, json.dumps(doc))
    assert [m.name for m in list_models(catalog)] == ["a"]


def test_a_declined_conflict_is_remembered_until_theirs_changes(catalog, texts):
    save_model(catalog, stored_from_text("a", texts["lr"], FILES))
    shared = export_models(catalog)
    save_model(catalog, stored_from_text("a", texts["hybrid"]), replace=True)
    # a dry run records nothing: still a conflict
    assert merge_models(catalog, shared, dry_run=True)[0].action == "kept-mine"
    assert merge_models(catalog, shared)[0].action == "kept-mine"
    # the same content again: declined before, not asked again; mine unchanged
    assert merge_models(catalog, shared)[0].action == "declined"
    assert get_model(catalog, "a").method == "hybrid"
    # another version of theirs under that name is a new conflict
    other = json.loads(shared)
    save_model(catalog, stored_from_text("b", texts["hybrid"]))
    other["models"] = [json.loads(export_models(catalog, ["b"]))["models"][0] | {"name": "a"}]
    other["models"][0]["model"]["seed"] = 5
    changed = json.dumps(other)
    from gpumodeler.db.learned_models import read_export
    [theirs] = read_export(changed)
    assert theirs.model_sha256 != get_model(catalog, "a").model_sha256
    assert merge_models(catalog, changed)[0].action == "kept-mine"
    # an explicit answer still applies to a declined one
    assert merge_models(catalog, shared, "theirs")[0].action == "replaced"
    assert get_model(catalog, "a").method == "lr"
    # the record is in the device merges' table, under the learned-model field
    rows = catalog.user_db.execute("SELECT device, field FROM declined_conflicts").fetchall()
    assert ("a", "learned model") in [tuple(r) for r in rows]
